package main

import (
	"github.com/vigilhq/vigil/monitors"
)

const oncalendarUsage = `vigil oncalendar next EXPR [--tz ZONE] [--from RFC3339] [-n N]`

// oncalendarCmd runs "vigil oncalendar next EXPR [--tz ZONE] [--from
// RFC3339] [-n N]": the elapses of a systemd calendar expression that a
// running timer reaches (each computed by systemd's rules from the one
// before), in the expression's zone (--tz, or the zone named at its end).
func oncalendarCmd(env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "next" {
		return usageError{"usage: " + oncalendarUsage}
	}
	f := newNextFlags(env, "vigil oncalendar next", oncalendarUsage, "elapses")
	expr, start, err := f.parse(args[1:], `vigil oncalendar next "Mon..Fri 02:30"`)
	if err != nil {
		return err
	}
	sched, err := monitors.ValidateSchedule(monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: expr, TZ: *f.tz})
	if err != nil {
		return err
	}
	return printNext(env, sched, sched.Location(), start, *f.n, "the expression elapses no more")
}
