package api

import (
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// gapOccurrences is how many occurrences of a cron schedule the shortest
// gap between runs is looked for in: enough to meet a daylight saving
// change for a daily job, and the shorter days of a month for a job on
// certain weekdays.
const gapOccurrences = 400

// RetryChain returns the longest time the retries of one run may take: the
// sum of the policy's delays before retry 1 … MaxRetries, the last delay
// repeating when the list is shorter. ok is false when it cannot be known
// (no policy, or retries without delays).
func RetryChain(p *monitors.RetryPolicy) (chain time.Duration, ok bool) {
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
// interval, or for cron the shortest gap between consecutive occurrences
// among the next ones after from. ok is false when the schedule does not
// parse or fires less than twice.
func ScheduleGap(spec monitors.ScheduleSpec, from time.Time) (gap time.Duration, ok bool) {
	sched, err := monitors.ParseSchedule(spec)
	if err != nil {
		return 0, false
	}
	if iv, isInterval := sched.(monitors.Interval); isInterval {
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

// advise returns a monitor's retry chain in seconds (nil when unknown) and
// the warnings its numbers call for.
func (h *Handler) advise(m *monitors.Monitor, now time.Time) (*int64, []string) {
	warnings := []string{}
	chain, ok := RetryChain(m.RetryPolicy)
	if !ok {
		return nil, warnings
	}
	secs := int64(chain / time.Second)
	if chain == 0 {
		return &secs, warnings
	}
	if gap, ok := h.scheduleGap(m.Schedule, now); ok && chain > gap {
		warnings = append(warnings, fmt.Sprintf(
			"retry_policy: the retries of one run may take up to %s (retry_chain_seconds), longer than the %s between runs of the schedule %s: the retries of one occurrence would overlap the next occurrence; shorten the retry delays or run the job less often",
			monitors.FormatDuration(chain), monitors.FormatDuration(gap), m.Schedule.Describe()))
	}
	if m.DeadlineSeconds > 0 && chain > m.Deadline() {
		warnings = append(warnings, fmt.Sprintf(
			"deadline_seconds: the retries of one run may take up to %s, longer than the deadline of %s: the deadline incident opens while a retry may still succeed",
			monitors.FormatDuration(chain), monitors.FormatDuration(m.Deadline())))
	}
	return &secs, warnings
}

// scheduleGap is ScheduleGap, remembered per schedule: the shortest gap of
// a cron expression barely moves with the starting time, and lists of
// monitors ask for it on every request.
func (h *Handler) scheduleGap(spec monitors.ScheduleSpec, now time.Time) (time.Duration, bool) {
	type gapResult struct {
		gap time.Duration
		ok  bool
	}
	if v, ok := h.gaps.Load(spec); ok {
		r := v.(gapResult)
		return r.gap, r.ok
	}
	gap, ok := ScheduleGap(spec, now)
	h.gaps.Store(spec, gapResult{gap, ok})
	return gap, ok
}
