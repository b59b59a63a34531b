package monitors

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Words says the schedule in plain words, with the zone its times are in
// ("" for intervals), and the scheduler whose reading it follows when that
// is not cronie: ("at 02:30 every day", "Europe/Berlin"), or ("every 15
// minutes, counted from the last ping", ""). The dashboard and the
// notifications both say it so.
func (spec ScheduleSpec) Words() (words, zone string) {
	if spec.Kind == ScheduleInterval {
		return "every " + PlainDuration(time.Duration(spec.EverySeconds)*time.Second) + ", counted from the last ping", ""
	}
	zone = spec.TZ
	if zone == "" {
		zone = "UTC"
	}
	sched, err := ParseSchedule(spec)
	if err != nil {
		return spec.Expr, zone
	}
	if _, ok := sched.(Interval); ok { // robfig's @every
		return "every " + PlainDuration(sched.Next(time.Time{}).Sub(time.Time{})) + ", counted from the last run", ""
	}
	zone = sched.Location().String()
	if d := spec.WithDefaults().Dialect; spec.Kind == ScheduleCron && d != DialectCronie {
		zone += ", as " + dialectNames[d] + " reads it"
	}
	words = ScheduleWords(sched)
	if words == "" {
		return spec.Expr, zone
	}
	return words, zone
}

// dialectNames name the scheduler behind each dialect, for the words of a
// schedule.
var dialectNames = map[Dialect]string{
	DialectCronie: "cronie", DialectRobfig: "robfig/cron", DialectQuartz: "Quartz",
}

// PlainDuration says d in words, with at most two units: "5 minutes",
// "1 hour 30 minutes", "2 days".
func PlainDuration(d time.Duration) string {
	if d <= 0 {
		return "0 seconds"
	}
	units := []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}}
	var parts []string
	for _, u := range units {
		if n := int64(d / u.d); n > 0 {
			word := u.name
			if n > 1 {
				word += "s"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, word))
			d -= time.Duration(n) * u.d
		}
		if len(parts) == 2 {
			break
		}
	}
	if len(parts) == 0 {
		return "less than a second"
	}
	return strings.Join(parts, " ")
}

// RunAnchor is the fragment that names run seq on its monitor's page
// ("run-12"), so that a notification can link to the failing run.
func RunAnchor(seq int64) string { return "run-" + strconv.FormatInt(seq, 10) }

// RuleWords is one of a monitor's run rules in words, for the people who
// read its page: its label and what it does.
type RuleWords struct {
	Label, Words string
}

// RunRuleWords says the run rules that are on for m (min_runtime_seconds,
// early_seconds, too_often), in words; none when all are off.
func (m *Monitor) RunRuleWords() []RuleWords {
	var out []RuleWords
	if m.MinRuntimeSeconds > 0 {
		out = append(out, RuleWords{"Too fast", "a success in less than " + PlainDuration(m.MinRuntime()) +
			" opens a too_fast incident; the next success that takes at least that long resolves it (judged when the run's duration is known: a start ping, or duration_ms)"})
	}
	if m.EarlySeconds > 0 {
		out = append(out, RuleWords{"Early", "a run that starts more than " + PlainDuration(m.Early()) +
			" before its occurrence opens an early incident; the next run that starts on time resolves it"})
	}
	if m.TooOften == TooOftenAlert {
		words := "a second success for one occurrence opens a too_often incident; it resolves once an occurrence ran once (retries, and reruns after a failure, never count)"
		if m.Schedule.Kind == ScheduleInterval {
			words = "a run that starts less than " + PlainDuration(time.Duration(m.Schedule.EverySeconds)*time.Second/2) +
				" (half the interval) after the one before opens a too_often incident; the next run at least that far apart resolves it (retries, and reruns after a failure, never count)"
		}
		out = append(out, RuleWords{"Too often", words})
	}
	return out
}
