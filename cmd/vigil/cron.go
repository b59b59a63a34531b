package main

import (
	"errors"

	"github.com/vigilhq/vigil/monitors"
)

var errHelp = errors.New("help shown")

const cronUsage = `vigil cron next EXPR [--tz ZONE] [--from RFC3339] [-n N] [--dialect cronie|robfig|quartz]`

// cronCmd runs "vigil cron next EXPR [--tz ZONE] [--from RFC3339] [-n N]
// [--dialect cronie|robfig|quartz]".
func cronCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "next" {
		return usageError{"usage: " + cronUsage}
	}
	f := newNextFlags(env, "vigil cron next", cronUsage, "fire times")
	dialect := f.fs.String("dialect", string(monitors.DialectCronie),
		"whose reading of the expression: cronie, robfig (gocron, River, Kubernetes) or quartz")
	expr, start, err := f.parse(args[1:], `vigil cron next "30 2 * * *"`)
	if err != nil {
		return err
	}
	spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: *f.tz, Dialect: monitors.Dialect(*dialect)}
	sched, err := monitors.ValidateSchedule(spec)
	if err != nil {
		return err
	}
	loc := sched.Location()
	if _, ok := sched.(monitors.Interval); ok { // robfig's @every: from --from, in --tz
		if loc, err = monitors.LoadLocation(*f.tz); err != nil {
			return err
		}
	}
	return printNext(env, sched, loc, start, *f.n, "the expression fires no more")
}
