package main

import (
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vigilhq/vigil/api"
)

const snoozeUsage = `usage:
  vigil snooze MONITOR (--for D | --until TIME)
  vigil snooze --end MONITOR

snooze silences one monitor's notifications for a while: its incidents
still open and are shown, but nothing is sent until the snooze ends; one
still open then is notified then. --end ends the snooze now. MONITOR is
the monitor's slug or ID. It talks to Vigil's API: --url (VIGIL_URL) and
--api-key (VIGIL_API_KEY).
`

func snoozeCmd(env *cmdEnv, args []string) error {
	fs := newFlagSet(env)
	var (
		forD    = fs.Duration("for", 0, "how long the snooze lasts, such as 1h (at most 7 days)")
		until   = fs.String("until", "", "when the snooze ends (RFC 3339)")
		end     = fs.Bool("end", false, "end the monitor's snooze now")
		base    = fs.String("url", "", "Vigil's base URL (VIGIL_URL)")
		apiKey  = fs.String("api-key", "", "a read-write API key of the project (VIGIL_API_KEY)")
		timeout = fs.Duration("timeout", 30*time.Second, "timeout of each request to Vigil")
	)
	fs.Usage = func() {
		fmt.Fprint(env.stderr, snoozeUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	// The monitor may come before the flags: vigil snooze backup --for 1h.
	var target string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		target, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	if target == "" && fs.NArg() > 0 {
		target = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected %q", fs.Arg(0))}
	}
	if target == "" {
		return usageError{"which monitor: vigil snooze MONITOR --for 1h"}
	}
	var body map[string]any
	switch {
	case *end && (*forD != 0 || *until != ""):
		return usageError{"--end ends a snooze: no --for or --until with it"}
	case *end:
	case *forD != 0 && *until != "":
		return usageError{"--for or --until, not both"}
	case *forD != 0:
		if *forD < time.Second {
			return usageError{"--for: at least a second"}
		}
		body = map[string]any{"seconds": int64(forD.Round(time.Second) / time.Second)}
	case *until != "":
		if _, err := time.Parse(time.RFC3339, *until); err != nil {
			return usageError{fmt.Sprintf("--until %q: want an RFC 3339 time such as 2026-01-02T15:04:05Z", *until)}
		}
		body = map[string]any{"until": *until}
	default:
		return usageError{"how long: --for D or --until TIME (or --end)"}
	}
	c, err := newAPIClient(env, *base, *apiKey, *timeout)
	if err != nil {
		return err
	}
	ctx := env.ctx
	id := target
	if ms, err := c.monitors(ctx); err != nil {
		return err
	} else if m, ok := ms[target]; ok {
		id = m.ID
	}
	path := "/api/v1/monitors/" + url.PathEscape(id) + "/snooze"
	var m api.Monitor
	if *end {
		if err := c.do(ctx, http.MethodDelete, path, nil, &m); err != nil {
			return err
		}
		fmt.Fprintf(env.stderr, "%s is not snoozed: an incident still open is notified now\n", m.Slug)
		return nil
	}
	if err := c.do(ctx, http.MethodPost, path, body, &m); err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "%s\n", m.SnoozedUntil.Format(time.RFC3339))
	fmt.Fprintf(env.stderr, "%s is snoozed until %s: its incidents are shown, and notified then if still open\n",
		m.Slug, m.SnoozedUntil.Format(time.RFC3339))
	return nil
}
