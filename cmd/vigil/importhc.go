package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/vigilhq/vigil/healthchecks"
	"github.com/vigilhq/vigil/server"
)

const importUsage = `Usage:
  vigil import healthchecks --url URL --api-key KEY [--project ID|NAME] [--create-project] [--dry-run] [--database URL]

Reads the checks and integrations of a Healthchecks.io project (hosted, or
self-hosted at URL) through its management API v3, and makes the matching
monitors in a Vigil project, with the same ping UUIDs. Running it again
changes only what changed. --dry-run reports and writes nothing. The key
may also come from HEALTHCHECKS_API_KEY, to keep it out of the process list.
`

// importCmd runs "vigil import healthchecks".
func importCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "healthchecks" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(env.stderr, importUsage)
			return errHelp
		}
		return usageError{"say what to import from: vigil import healthchecks ...\n\n" + importUsage}
	}
	var (
		cfg           server.Config
		fs            = newFlagSet(env)
		siteURL       = fs.String("url", "", "the Healthchecks site, such as https://healthchecks.io (required)")
		apiKey        = fs.String("api-key", "", "a read-write API key of the Healthchecks project (or env HEALTHCHECKS_API_KEY)")
		project       = fs.String("project", "", "the Vigil project to import into, by ID or name (default: the first project)")
		createProject = fs.Bool("create-project", false, "create the project named by --project when there is none")
		dryRun        = fs.Bool("dry-run", false, "report what the import would do, and write nothing")
	)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, importUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if *apiKey == "" {
		*apiKey = env.getenv("HEALTHCHECKS_API_KEY")
	}
	switch {
	case *siteURL == "":
		return usageError{"--url: give the Healthchecks site, such as https://healthchecks.io"}
	case *apiKey == "":
		return usageError{"--api-key: give a read-write API key of the Healthchecks project (or set HEALTHCHECKS_API_KEY)"}
	case *createProject && *project == "":
		return usageError{"--create-project needs --project NAME"}
	case *createProject && *dryRun:
		return usageError{"--dry-run writes nothing, so it cannot --create-project"}
	}
	client, err := healthchecks.NewClient(*siteURL, *apiKey, &http.Client{Timeout: healthchecks.ClientTimeoutDefault})
	if err != nil {
		return usageError{err.Error()}
	}

	// Read all of Healthchecks first: a failure there writes nothing.
	checks, err := client.Checks(env.ctx)
	if err != nil {
		return err
	}
	integrations, intErr := client.Integrations(env.ctx)
	var apiErr *healthchecks.APIError
	if intErr != nil && !(errors.As(intErr, &apiErr) && (apiErr.Status == http.StatusUnauthorized || apiErr.Status == http.StatusForbidden)) {
		return intErr
	}

	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The import reads the project's channels, whose configs are
	// encrypted: open the store with the secret key file.
	store, _, err := server.OpenSealedStore(env.ctx, cfg.DatabaseURL, cfg.SecretKeyFile, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	prj, err := findProject(env, store, *project, *createProject)
	if err != nil {
		return err
	}
	report, err := healthchecks.Import(env.ctx, store, &healthchecks.ImportParams{ProjectID: prj.ID, Checks: checks,
		Integrations: integrations, IntegrationsErr: intErr, DryRun: *dryRun, Now: time.Now()})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "Read %d checks and %s from %s; importing into the project %q.\n",
		len(checks), countIntegrations(integrations, intErr), client.BaseURL(), prj.Name)
	printReport(env.stdout, report)
	return nil
}

func countIntegrations(ins []healthchecks.Integration, err error) string {
	if err != nil {
		return "no integrations"
	}
	return fmt.Sprintf("%d integrations", len(ins))
}

// printReport prints what the import made, changed and skipped.
func printReport(w io.Writer, r *healthchecks.Report) {
	verb := map[bool][3]string{false: {"made", "changed", "skipped"}, true: {"would make", "would change", "would skip"}}[r.DryRun]
	name := func(it healthchecks.Item) string {
		return fmt.Sprintf("%s (%s, uuid %s)", it.Name, it.Slug, it.UUID)
	}
	notes := func(it healthchecks.Item) {
		for _, n := range it.Notes {
			fmt.Fprintf(w, "      note: %s\n", n)
		}
	}
	for _, it := range r.Made {
		fmt.Fprintf(w, "  %s     %s\n", verb[0], name(it))
		notes(it)
	}
	for _, it := range r.Changed {
		fmt.Fprintf(w, "  %s  %s: %s\n", verb[1], name(it), strings.Join(it.Fields, ", "))
		notes(it)
	}
	for _, it := range r.Skipped {
		fmt.Fprintf(w, "  %s  %s: %s\n", verb[2], name(it), it.Reason)
	}
	if len(r.Unchanged) > 0 {
		fmt.Fprintf(w, "  unchanged %d checks, already as in Healthchecks\n", len(r.Unchanged))
	}
	if r.IntegrationsNote != "" {
		fmt.Fprintf(w, "Integrations: %s\n", r.IntegrationsNote)
	}
	for _, in := range r.Integrations {
		if in.ChannelID != "" {
			fmt.Fprintf(w, "  integration %q (%s): mapped to the Vigil channel %q\n", in.Name, in.Kind, in.ChannelName)
		} else {
			fmt.Fprintf(w, "  integration %q (%s): not imported: %s\n", in.Name, in.Kind, in.Reason)
		}
	}
	fmt.Fprintf(w, "%s %d, %s %d, %s %d, unchanged %d.\n", verb[0], len(r.Made), verb[1], len(r.Changed),
		verb[2], len(r.Skipped), len(r.Unchanged))
	if r.DryRun {
		fmt.Fprintln(w, "Dry run: nothing was written.")
	}
}
