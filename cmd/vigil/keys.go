package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

const keysUsage = `Usage:
  vigil keys create [--project ID|NAME] [--name NAME] [--read-only] [--database URL]
  vigil keys list   [--project ID|NAME] [--database URL]
  vigil keys revoke KEY-ID|PREFIX [--project ID|NAME] [--database URL]

create prints only the new key on standard output, so scripts can capture
it; it is shown this once and stored hashed. Without --project, the only
(or the oldest) project is used.
`

// keysCmd runs "vigil keys create|list|revoke".
func keysCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 {
		return usageError{"give an action: create, list or revoke\n\n" + keysUsage}
	}
	action, args := args[0], args[1:]
	if action == "-h" || action == "--help" || action == "help" {
		fmt.Fprint(env.stderr, keysUsage)
		return errHelp
	}
	if action != "create" && action != "list" && action != "revoke" {
		return usageError{fmt.Sprintf("unknown action %q: use create, list or revoke", action)}
	}
	// A key to revoke may come before the flags or after them.
	var positional []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		positional, args = append(positional, args[0]), args[1:]
	}
	var (
		cfg      server.Config
		fs       = newFlagSet(env)
		project  = fs.String("project", "", "the project, by ID or name (default: the only, or the oldest, project)")
		name     = fs.String("name", "", "create: a name to recognise the key by (default: \"created with vigil keys\")")
		readOnly = fs.Bool("read-only", false, "create: a key that can read everything in its project and change nothing")
	)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, keysUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseSettings(env, fs, databaseSettings(&cfg), args); err != nil {
		return err
	}
	positional = append(positional, fs.Args()...)
	switch {
	case action == "revoke" && len(positional) != 1:
		return usageError{"give the ID or the prefix of one key to revoke (see vigil keys list)"}
	case action != "revoke" && len(positional) > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", positional[0])}
	case action != "create" && (*name != "" || *readOnly):
		return usageError{"--name and --read-only are for create"}
	}

	logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	store, err := server.OpenStore(env.ctx, cfg.DatabaseURL, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	prj, err := pickProject(env, store, *project)
	if err != nil {
		return err
	}
	switch action {
	case "create":
		return keysCreate(env, store, prj, *name, *readOnly)
	case "list":
		return keysList(env, store, prj)
	default:
		return keysRevoke(env, store, prj, positional[0])
	}
}

// pickProject finds the project by ID or name, or takes the only (or the
// oldest) one.
func pickProject(env *cmdEnv, store monitors.Store, want string) (*monitors.Project, error) {
	projects, err := store.ProjectList(env.ctx)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	if len(projects) == 0 {
		return nil, errors.New("the database has no project yet: start vigil serve once, which creates one")
	}
	if want == "" {
		if len(projects) > 1 {
			fmt.Fprintf(env.stderr, "vigil keys: using project %q, the oldest of %d; choose another with --project\n",
				projects[0].Name, len(projects))
		}
		return projects[0], nil
	}
	var byName []*monitors.Project
	for _, p := range projects {
		if p.ID == want {
			return p, nil
		}
		if p.Name == want {
			byName = append(byName, p)
		}
	}
	switch len(byName) {
	case 1:
		return byName[0], nil
	case 0:
		return nil, fmt.Errorf("no project has the ID or name %q", want)
	}
	return nil, fmt.Errorf("%d projects are named %q: give the project's ID", len(byName), want)
}

func keysCreate(env *cmdEnv, store monitors.Store, prj *monitors.Project, name string, readOnly bool) error {
	if strings.TrimSpace(name) == "" {
		name = "created with vigil keys"
	}
	k, key, err := manage.New(store, nil).APIKeyCreate(env.ctx, &manage.APIKeyCreateParams{ProjectID: prj.ID, Name: name, ReadOnly: readOnly})
	if err != nil {
		return err
	}
	fmt.Fprintln(env.stdout, key)
	fmt.Fprintf(env.stderr, "vigil keys: created %s API key %s (ID %s) for project %q; it is shown only this once\n",
		access(k), k.Prefix, k.ID, prj.Name)
	return nil
}

func keysList(env *cmdEnv, store monitors.Store, prj *monitors.Project) error {
	list, err := store.APIKeyList(env.ctx, prj.ID)
	if err != nil {
		return fmt.Errorf("list API keys: %w", err)
	}
	w := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPREFIX\tACCESS\tCREATED\tSTATE\tNAME")
	for _, k := range list {
		state := "active"
		if k.RevokedAt != nil {
			state = "revoked " + k.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, access(k), k.CreatedAt.UTC().Format(time.RFC3339), state, k.Name)
	}
	return w.Flush()
}

func keysRevoke(env *cmdEnv, store monitors.Store, prj *monitors.Project, which string) error {
	list, err := store.APIKeyList(env.ctx, prj.ID)
	if err != nil {
		return fmt.Errorf("list API keys: %w", err)
	}
	which = strings.TrimSuffix(which, "…")
	var found []*monitors.APIKey
	for _, k := range list {
		if k.ID == which || (strings.HasPrefix(which, keys.APIKeyPrefix) && strings.HasPrefix(which, k.Prefix)) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 0:
		return fmt.Errorf("project %q has no API key with the ID or prefix %q (see vigil keys list)", prj.Name, which)
	case len(found) > 1:
		return fmt.Errorf("%d keys start with %q: give the key's ID", len(found), which)
	}
	k := found[0]
	if k.RevokedAt != nil {
		fmt.Fprintf(env.stdout, "API key %s was already revoked at %s\n", k.ID, k.RevokedAt.UTC().Format(time.RFC3339))
		return nil
	}
	if err := manage.New(store, nil).APIKeyRevoke(env.ctx, prj.ID, k.ID); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "revoked API key %s (%s…)\n", k.ID, k.Prefix)
	return nil
}

func access(k *monitors.APIKey) string {
	if k.ReadOnly {
		return "read-only"
	}
	return "read-write"
}
