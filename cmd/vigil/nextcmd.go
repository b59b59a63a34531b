package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// nextFlags are the flags every "vigil … next" command takes.
type nextFlags struct {
	fs   *flag.FlagSet
	tz   *string
	from *string
	n    *int
}

// newNextFlags returns the flag set of a "next" command named name
// ("vigil oncalendar next"), whose usage line is usage.
func newNextFlags(env *cmdEnv, name, usage, what string) *nextFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	f := &nextFlags{fs: fs,
		tz:   fs.String("tz", "UTC", "IANA time zone the expression runs in"),
		from: fs.String("from", "", "print "+what+" strictly after this RFC 3339 instant (default: now)"),
		n:    fs.Int("n", 5, "how many "+what+" to print"),
	}
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: "+usage)
		fmt.Fprintln(env.stderr, "Prints the next N "+what+", one per line, in RFC 3339 with the zone's offset.")
		fs.PrintDefaults()
	}
	return f
}

// parse reads args, flags before or after the one expression, and
// returns the expression and the instant to start after.
func (f *nextFlags) parse(args []string, example string) (string, time.Time, error) {
	var expr []string
	rest := args
	for len(rest) > 0 {
		if err := f.fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", time.Time{}, errHelp
			}
			return "", time.Time{}, usageError{err.Error()}
		}
		rest = f.fs.Args()
		if len(rest) > 0 {
			expr = append(expr, rest[0])
			rest = rest[1:]
		}
	}
	if len(expr) != 1 {
		return "", time.Time{}, usageError{"give exactly one expression, quoted: " + example}
	}
	if *f.n < 1 || *f.n > 10000 {
		return "", time.Time{}, usageError{"-n must be between 1 and 10000"}
	}
	start := time.Now()
	if *f.from != "" {
		t, err := time.Parse(time.RFC3339, *f.from)
		if err != nil {
			return "", time.Time{}, usageError{fmt.Sprintf("--from %q is not an RFC 3339 time such as 2026-03-07T12:00:00-05:00", *f.from)}
		}
		start = t
	}
	return expr[0], start, nil
}

// printNext prints the n occurrences of sched after start, in loc.
func printNext(env *cmdEnv, sched monitors.Schedule, loc *time.Location, start time.Time, n int, none string) error {
	t := start
	for range n {
		t = sched.Next(t)
		if t.IsZero() {
			return errors.New(none)
		}
		fmt.Fprintln(env.stdout, t.In(loc).Format(time.RFC3339))
	}
	return nil
}
