package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

var errHelp = errors.New("help shown")

// cronCmd runs "vigil cron next EXPR [--tz ZONE] [--from RFC3339] [-n N]
// [--dialect cronie|robfig|quartz]".
func cronCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "next" {
		return usageError{`usage: vigil cron next EXPR [--tz ZONE] [--from RFC3339] [-n N] [--dialect cronie|robfig|quartz]`}
	}
	fs := flag.NewFlagSet("vigil cron next", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	tz := fs.String("tz", "UTC", "IANA time zone the expression runs in")
	from := fs.String("from", "", "print fire times strictly after this RFC 3339 instant (default: now)")
	n := fs.Int("n", 5, "how many fire times to print")
	dialect := fs.String("dialect", string(monitors.DialectCronie),
		"whose reading of the expression: cronie, robfig (gocron, River, Kubernetes) or quartz")
	fs.Usage = func() {
		fmt.Fprintln(env.stderr, "Usage: vigil cron next EXPR [--tz ZONE] [--from RFC3339] [-n N] [--dialect cronie|robfig|quartz]")
		fmt.Fprintln(env.stderr, "Prints the next N fire times, one per line, in RFC 3339 with the zone's offset.")
		fs.PrintDefaults()
	}
	// Flags may come before or after the expression.
	var expr []string
	rest := args[1:]
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return errHelp
			}
			return usageError{err.Error()}
		}
		rest = fs.Args()
		if len(rest) > 0 {
			expr = append(expr, rest[0])
			rest = rest[1:]
		}
	}
	if len(expr) != 1 {
		return usageError{"give exactly one expression, quoted: vigil cron next \"30 2 * * *\""}
	}
	if *n < 1 || *n > 10000 {
		return usageError{"-n must be between 1 and 10000"}
	}
	start := time.Now()
	if *from != "" {
		t, err := time.Parse(time.RFC3339, *from)
		if err != nil {
			return usageError{fmt.Sprintf("--from %q is not an RFC 3339 time such as 2026-03-07T12:00:00-05:00", *from)}
		}
		start = t
	}
	spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr[0], TZ: *tz, Dialect: monitors.Dialect(*dialect)}
	sched, err := monitors.ValidateSchedule(spec)
	if err != nil {
		return err
	}
	loc := sched.Location()
	if _, ok := sched.(monitors.Interval); ok { // robfig's @every: from --from, in --tz
		if loc, err = monitors.LoadLocation(*tz); err != nil {
			return err
		}
	}
	t := start
	for i := 0; i < *n; i++ {
		t = sched.Next(t)
		if t.IsZero() {
			return errors.New("the expression fires no more")
		}
		fmt.Fprintln(env.stdout, t.In(loc).Format(time.RFC3339))
	}
	return nil
}
