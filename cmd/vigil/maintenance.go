package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigilhq/vigil/api"
)

const maintenanceUsage = `usage:
  vigil maintenance start [--tag T]... [--monitor ID]... [--all] (--for D | --until TIME) [--name N]
  vigil maintenance end (ID... | --tag T)
  vigil maintenance list

start opens a maintenance window now, over the monitors with a tag, by ID,
or all of the project's: no incident opens for them until it ends, and
then each gets a fresh grace window. end ends windows now: by ID, or
every window in effect over a tag. list shows the project's windows.
They talk to Vigil's API: --url (VIGIL_URL) and --api-key (VIGIL_API_KEY).
`

// listFlag is a flag that may be given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func maintenanceCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 {
		return usageError{"what to do: vigil maintenance start|end|list"}
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(env.stderr, maintenanceUsage)
		return errHelp
	}
	sub := args[0]
	fs := newFlagSet(env)
	var (
		tags, ids listFlag
		all       = fs.Bool("all", false, "start: over every monitor of the project")
		forD      = fs.Duration("for", 0, "start: how long the window lasts, such as 2h")
		until     = fs.String("until", "", "start: when the window ends (RFC 3339)")
		name      = fs.String("name", "", "start: the window's name (default: made from what it covers)")
		base      = fs.String("url", "", "Vigil's base URL (VIGIL_URL)")
		apiKey    = fs.String("api-key", "", "an API key of the project, read-write for start and end (VIGIL_API_KEY)")
		timeout   = fs.Duration("timeout", 30*time.Second, "timeout of each request to Vigil")
	)
	fs.Var(&tags, "tag", "start: over the monitors with this tag (repeatable); end: the windows in effect over it")
	fs.Var(&ids, "monitor", "start: over this monitor, by ID (repeatable)")
	fs.Usage = func() {
		fmt.Fprint(env.stderr, maintenanceUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	c, err := newAPIClient(env, *base, *apiKey, *timeout)
	if err != nil {
		return err
	}
	ctx := env.ctx
	switch sub {
	case "start":
		if fs.NArg() > 0 {
			return usageError{fmt.Sprintf("unexpected %q", fs.Arg(0))}
		}
		if !*all && len(tags) == 0 && len(ids) == 0 {
			return usageError{"what the window covers: --tag, --monitor or --all"}
		}
		now := time.Now().UTC().Truncate(time.Second)
		var end time.Time
		switch {
		case *forD > 0 && *until != "":
			return usageError{"--for or --until, not both"}
		case *forD > 0:
			end = now.Add(*forD)
		case *until != "":
			t, err := time.Parse(time.RFC3339, *until)
			if err != nil {
				return usageError{fmt.Sprintf("--until %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", *until)}
			}
			end = t
		default:
			return usageError{"how long: --for D or --until TIME"}
		}
		if *name == "" {
			var parts []string
			for _, t := range tags {
				parts = append(parts, "tag "+t)
			}
			parts = append(parts, []string(ids)...)
			if *all {
				parts = []string{"all monitors"}
			}
			*name = "maintenance of " + strings.Join(parts, ", ")
		}
		body := map[string]any{"name": *name, "starts_at": now, "ends_at": end}
		if *all {
			body["all"] = true
		}
		if len(tags) > 0 {
			body["tags"] = tags
		}
		if len(ids) > 0 {
			body["monitors"] = ids
		}
		var w api.MaintenanceWindow
		if err := c.do(ctx, http.MethodPost, "/api/v1/maintenance-windows", body, &w); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "%s\n", w.ID)
		fmt.Fprintf(env.stderr, "maintenance window %q in effect until %s\n", w.Name, end.Format(time.RFC3339))
		return nil
	case "end":
		targets := fs.Args()
		if len(targets) == 0 && len(tags) == 0 {
			return usageError{"which windows: IDs, or --tag"}
		}
		if len(tags) > 0 {
			var l api.MaintenanceWindowList
			if err := c.do(ctx, http.MethodGet, "/api/v1/maintenance-windows", nil, &l); err != nil {
				return err
			}
			for _, w := range l.MaintenanceWindows {
				if w.Active && slices.ContainsFunc(tags, func(t string) bool { return slices.Contains(w.Tags, t) }) {
					targets = append(targets, w.ID)
				}
			}
			if len(targets) == 0 {
				return fmt.Errorf("no window in effect over tag %s", strings.Join(tags, ", "))
			}
		}
		for _, id := range targets {
			var w api.MaintenanceWindow
			if err := c.do(ctx, http.MethodPost, "/api/v1/maintenance-windows/"+url.PathEscape(id)+"/end", nil, &w); err != nil {
				return err
			}
			fmt.Fprintf(env.stderr, "maintenance window %q ended\n", w.Name)
		}
		return nil
	case "list":
		var l api.MaintenanceWindowList
		if err := c.do(ctx, http.MethodGet, "/api/v1/maintenance-windows", nil, &l); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tCOVERS\tWHEN\tSTATE")
		for _, w := range l.MaintenanceWindows {
			covers := "all"
			if !w.All {
				var parts []string
				for _, t := range w.Tags {
					parts = append(parts, "tag:"+t)
				}
				parts = append(parts, w.Monitors...)
				covers = strings.Join(parts, ",")
			}
			when := ""
			if w.Schedule != nil {
				when = fmt.Sprintf("%s (%s) for %s", *w.Schedule, *w.TZ, time.Duration(w.DurationSeconds)*time.Second)
			} else {
				when = w.StartsAt.Format(time.RFC3339) + " to " + w.EndsAt.Format(time.RFC3339)
			}
			state := "over"
			switch {
			case w.Active:
				state = "in effect until " + w.ActiveUntil.Format(time.RFC3339)
			case w.NextStartsAt != nil:
				state = "next " + w.NextStartsAt.Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", w.ID, w.Name, covers, when, state)
		}
		return tw.Flush()
	}
	return usageError{fmt.Sprintf("unknown maintenance command %q (want start, end or list)", sub)}
}
