package monitors

import (
	"fmt"
	"sync"
	"time"
)

// Advice is a warning about a monitor's settings: a combination that will
// page for runs that are fine, or stay silent about runs that are not.
// Advice never changes what Vigil does; it is shown where people look (the
// API's warnings, the dashboard, the SDK's log at declaration, vigil run's
// standard error), and every one of those gets it from [Adviser.Advise],
// so the rules live here only.
type Advice struct {
	// Field is the monitor field to change, such as "retry_policy".
	Field string
	// Text says what will go wrong, and what to do about it.
	Text string
}

// String is the advice as the API's warnings show it: "field: text".
func (a Advice) String() string { return a.Field + ": " + a.Text }

// AdviceStrings returns each advice's String.
func AdviceStrings(advice []Advice) []string {
	out := make([]string, len(advice))
	for i, a := range advice {
		out[i] = a.String()
	}
	return out
}

// gapOccurrences is how many occurrences of a cron schedule the shortest
// gap between runs is looked for in: enough to meet a daylight saving
// change for a daily job, and the shorter days of a month for a job on
// certain weekdays.
const gapOccurrences = 400

// RetryChain returns the longest time the retries of one run may take: the
// sum of the policy's delays before retry 1 … MaxRetries, the last delay
// repeating when the list is shorter. ok is false when it cannot be known
// (no policy, or retries without delays).
func RetryChain(p *RetryPolicy) (chain time.Duration, ok bool) {
	if p == nil {
		return 0, false
	}
	if p.MaxRetries == 0 {
		return 0, true
	}
	if len(p.MaxDelaysSeconds) == 0 {
		return 0, false
	}
	var sum int64
	for i := range p.MaxRetries {
		sum += p.MaxDelaysSeconds[min(i, len(p.MaxDelaysSeconds)-1)]
	}
	return time.Duration(sum) * time.Second, true
}

// ScheduleGap returns the shortest gap between two runs of a schedule: the
// interval, or for cron and oncalendar the shortest gap between
// consecutive occurrences among the next ones after from, as the
// schedule's dialect reads them. ok is false when the schedule does not
// parse or fires less than twice.
func ScheduleGap(spec ScheduleSpec, from time.Time) (gap time.Duration, ok bool) {
	sched, err := ParseSchedule(spec)
	if err != nil {
		return 0, false
	}
	if iv, isInterval := sched.(Interval); isInterval {
		return iv.Every, true
	}
	prev := sched.Next(from)
	if prev.IsZero() {
		return 0, false
	}
	for range gapOccurrences {
		next := sched.Next(prev)
		if next.IsZero() {
			break
		}
		if d := next.Sub(prev); !ok || d < gap {
			gap, ok = d, true
		}
		prev = next
	}
	return gap, ok
}

// An Adviser gives the advice for monitors ([Adviser.Advise]). It
// remembers the shortest gap of each schedule it has seen, since that
// barely moves with the starting time and lists of monitors, and pings,
// ask for it again and again. The zero Adviser is ready to use and safe
// for concurrent use; hold one per service, not one per call.
type Adviser struct {
	gaps sync.Map // ScheduleSpec → gapResult
}

type gapResult struct {
	gap time.Duration
	ok  bool
}

// gap is ScheduleGap, remembered per schedule.
func (a *Adviser) gap(spec ScheduleSpec, now time.Time) (time.Duration, bool) {
	if v, ok := a.gaps.Load(spec); ok {
		r := v.(gapResult)
		return r.gap, r.ok
	}
	gap, ok := ScheduleGap(spec, now)
	a.gaps.Store(spec, gapResult{gap, ok})
	return gap, ok
}

// Advise returns the advice for m's settings, in a fixed order, or none.
// The rules:
//
//   - retry_policy: the longest retry chain ([RetryChain]) is longer than
//     the shortest gap between runs ([ScheduleGap]): the retries of one
//     occurrence overlap the next occurrence.
//   - deadline_seconds: the retry chain is longer than the deadline: the
//     deadline incident opens while a retry may still succeed.
//   - grace_seconds: on a cron or oncalendar schedule, the grace is at
//     least the shortest gap between runs: a missed run is never reported
//     when the next run pings within the grace, since that ping covers the
//     missed occurrence (see the state machine's Missed rule). An interval
//     schedule is measured from the last ping, so has no such gap.
//   - early_seconds: it is at least half the shortest gap between runs: a
//     run is taken for the coming occurrence only when it starts nearer
//     to it than to the one before, so no run can start early by more than
//     that, and early never opens.
func (a *Adviser) Advise(m *Monitor, now time.Time) []Advice {
	var out []Advice
	gap, gapOK := a.gap(m.Schedule, now)
	if chain, ok := RetryChain(m.RetryPolicy); ok && chain > 0 {
		if gapOK && chain > gap {
			out = append(out, Advice{Field: "retry_policy", Text: fmt.Sprintf(
				"the retries of one run may take up to %s (retry_chain_seconds), longer than the %s between runs of the schedule %s: the retries of one occurrence would overlap the next occurrence; shorten the retry delays or run the job less often",
				FormatDuration(chain), FormatDuration(gap), m.Schedule.Describe())})
		}
		if m.DeadlineSeconds > 0 && chain > m.Deadline() {
			out = append(out, Advice{Field: "deadline_seconds", Text: fmt.Sprintf(
				"the retries of one run may take up to %s, longer than the deadline of %s: the deadline incident opens while a retry may still succeed",
				FormatDuration(chain), FormatDuration(m.Deadline()))})
		}
	}
	if gapOK && m.Schedule.Kind != ScheduleInterval && m.Grace() >= gap {
		out = append(out, Advice{Field: "grace_seconds", Text: fmt.Sprintf(
			"the grace of %s is not shorter than the %s between runs of the schedule %s: a run that never happens is not reported when the next run pings within the grace, since that ping counts for the missed occurrence; only a job that stops altogether is; make the grace shorter than %s",
			FormatDuration(m.Grace()), FormatDuration(gap), m.Schedule.Describe(), FormatDuration(gap))})
	}
	if gapOK && m.EarlySeconds > 0 && m.Early() >= gap/2 {
		out = append(out, Advice{Field: "early_seconds", Text: fmt.Sprintf(
			"early_seconds of %s is not less than half the %s between runs of the schedule %s: a run counts for the coming occurrence only when it starts nearer to it than to the one before, so none can be found early by more than %s; make it shorter than %s",
			FormatDuration(m.Early()), FormatDuration(gap), m.Schedule.Describe(), FormatDuration(gap/2), FormatDuration(gap/2))})
	}
	return out
}
