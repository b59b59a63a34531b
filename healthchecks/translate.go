package healthchecks

import (
	"slices"
	"strings"

	"github.com/vigilhq/vigil/monitors"
)

// ScheduleSpec is the schedule of a Healthchecks schedule field and its
// tz: a cron expression (read as cronie reads it, which is how
// Healthchecks reads cron) or a systemd OnCalendar expression, told apart
// as Healthchecks tells them apart, by which one reads it. When neither
// does, it returns the spec of the likelier kind, whose validation then
// says what is wrong.
func ScheduleSpec(expr, tz string) monitors.ScheduleSpec {
	expr = strings.TrimSpace(expr)
	if tz == "" {
		tz = "UTC"
	}
	cron := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: tz, Dialect: monitors.DialectCronie}
	if _, err := monitors.ValidateSchedule(cron); err == nil {
		return cron
	}
	cal := monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: expr, TZ: tz}
	if _, err := monitors.ValidateSchedule(cal); err == nil {
		return cal
	}
	if f := strings.Fields(expr); len(f) == 5 || len(f) == 6 || strings.HasPrefix(expr, "@") {
		return cron
	}
	return cal
}

// ScheduleUpdate is ScheduleSpec for a monitor whose schedule is old: an
// expression that is old's, sent back as Healthchecks shows it, keeps
// old's kind and dialect (a robfig or Quartz schedule stays one), and
// takes the zone tz.
func ScheduleUpdate(old monitors.ScheduleSpec, expr, tz string) monitors.ScheduleSpec {
	expr = strings.TrimSpace(expr)
	if (old.Kind == monitors.ScheduleCron || old.Kind == monitors.ScheduleOnCalendar) && old.Expr == expr {
		if tz == "" {
			tz = "UTC"
		}
		old.TZ = tz
		return old
	}
	return ScheduleSpec(expr, tz)
}

// Tags splits a Healthchecks tags field (space-separated) into tags, each
// once.
func Tags(s string) []string {
	tags := []string{}
	for _, t := range strings.Fields(s) {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	return tags
}

// kindNames are Healthchecks' names of the channel kinds both have, by
// Vigil's name; the first is the one Healthchecks uses today.
var kindNames = map[string][]string{
	"email":     {"email"},
	"webhook":   {"webhook"},
	"slack":     {"slack"},
	"pagerduty": {"pd"},
	"opsgenie":  {"opsgenie"},
	"discord":   {"discord"},
	"teams":     {"msteamsw", "msteams"},
	"telegram":  {"telegram"},
	"ntfy":      {"ntfy"},
}

// KindName returns Healthchecks' name of a Vigil channel kind.
func KindName(vigilKind string) string {
	if names, ok := kindNames[vigilKind]; ok {
		return names[0]
	}
	return vigilKind
}

// VigilKind returns the Vigil channel kind of a Healthchecks integration
// kind, and false when Vigil has none.
func VigilKind(hcKind string) (string, bool) {
	for k, names := range kindNames {
		if slices.Contains(names, hcKind) {
			return k, true
		}
	}
	return "", false
}
