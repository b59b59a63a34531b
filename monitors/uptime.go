package monitors

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// UptimeDaysMax is how many days back an uptime reaches.
const UptimeDaysMax = 90

// UptimeWindows are the spans, in days, an uptime sums up.
var UptimeWindows = []int{7, 30, 90}

// IncidentTally counts the incidents of one kind in a span and the time
// they were open in it.
type IncidentTally struct {
	Count    int
	Duration time.Duration
}

// UptimeStats are the numbers of one span (a day, or a window of days).
//
// An occurrence is a run that ended for good (it succeeded, was skipped,
// failed with no retry announced, or was abandoned; a failed attempt the
// scheduler retries belongs to the occurrence its retry finishes, and a
// cancelled run is no occurrence), or a missed incident that no later run
// ended. An occurrence succeeded on time when its run succeeded (or
// skipped) without having ended a missed or deadline incident. Occurrences
// fall on the day their run finished, or their missed incident opened.
type UptimeStats struct {
	Start, End  time.Time // [Start, End): local midnights
	Occurrences int
	OnTime      int
	// Incidents are by kind: Count those opened in the span, Duration the
	// part of every incident's open time (until now when still open) in
	// it.
	Incidents map[IncidentKind]IncidentTally
	// Runs counts the successful runs finished in the span that have a
	// duration; RunP50 and RunP95 are their durations' percentiles
	// (nearest rank), zero when Runs is 0.
	Runs           int
	RunP50, RunP95 time.Duration
	// Retries counts the failed attempts finished in the span that the
	// scheduler announced a retry of.
	Retries int

	durations []time.Duration
}

// Ratio is the share of occurrences that succeeded on time, and false
// when the span had none.
func (s *UptimeStats) Ratio() (float64, bool) {
	if s.Occurrences == 0 {
		return 0, false
	}
	return float64(s.OnTime) / float64(s.Occurrences), true
}

// Down is the time incidents of the kinds that mean the job did not do its
// work (missed, failed, deadline) were open in the span, summed by kind.
func (s *UptimeStats) Down() time.Duration {
	var d time.Duration
	for _, k := range []IncidentKind{IncidentMissed, IncidentFailed, IncidentDeadline} {
		d += s.Incidents[k].Duration
	}
	return d
}

// UptimeDay is the uptime of one local day of the monitor's zone; a day
// that changes to or from daylight saving time lasts 23 or 25 hours.
type UptimeDay struct {
	Date string // YYYY-MM-DD in the zone
	UptimeStats
}

// UptimeWindow sums the last Days days, today included.
type UptimeWindow struct {
	Days int
	UptimeStats
}

// Uptime is a monitor's uptime, computed from its history by
// [ComputeUptime].
type Uptime struct {
	Zone    *time.Location
	Now     time.Time
	Days    []UptimeDay // oldest first, today last
	Windows []UptimeWindow
}

// UptimeSpan returns the instants a monitor's uptime of the last days days
// (today included) and of every [UptimeWindows] window needs history
// between: from the local midnight that starts the earliest day, to now.
func UptimeSpan(loc *time.Location, now time.Time, days int) (from, to time.Time) {
	n := max(days, slices.Max(UptimeWindows))
	return dayStart(now.In(loc), -(n - 1)), now
}

// ValidateUptimeDays checks the number of days asked for.
func ValidateUptimeDays(days int) error {
	if days < 1 || days > UptimeDaysMax {
		return invalid("days", "must be a whole number from 1 to %d", UptimeDaysMax)
	}
	return nil
}

// UptimeSchedule is the schedule a monitor's uptime is computed with; its
// days are those of the schedule's zone (UTC for an interval).
func UptimeSchedule(m *Monitor) (Schedule, error) {
	sch, err := ValidateSchedule(m.Schedule)
	if err != nil {
		return nil, fmt.Errorf("schedule of monitor %s: %w", m.ID, err)
	}
	return sch, nil
}

// dayStart is the local midnight that starts the day offset days after
// t's (in t's zone).
func dayStart(t time.Time, offset int) time.Time {
	y, mo, d := t.Date()
	return time.Date(y, mo, d+offset, 0, 0, 0, 0, t.Location())
}

// UptimeStore is what [LoadUptime] reads.
type UptimeStore interface {
	UptimeHistory(ctx context.Context, p *UptimeHistoryParams) (*UptimeHistory, error)
}

// LoadUptime reads the history of a monitor of the project from s and
// computes its uptime of the last days days at now: the one way the API,
// the dashboard and the status pages get it.
func LoadUptime(ctx context.Context, s UptimeStore, m *Monitor, now time.Time, days int) (*Uptime, error) {
	if err := ValidateUptimeDays(days); err != nil {
		return nil, err
	}
	sch, err := UptimeSchedule(m)
	if err != nil {
		return nil, err
	}
	from, to := UptimeSpan(sch.Location(), now, days)
	h, err := s.UptimeHistory(ctx, &UptimeHistoryParams{ProjectID: m.ProjectID, MonitorID: m.ID, From: from, To: to})
	if err != nil {
		return nil, err
	}
	return ComputeUptime(sch, h, now, days)
}

// ComputeUptime computes the uptime of the last days days (today included)
// in the schedule's zone, and of every [UptimeWindows] window, from h,
// which must hold the history of [UptimeSpan].
func ComputeUptime(sch Schedule, h *UptimeHistory, now time.Time, days int) (*Uptime, error) {
	if err := ValidateUptimeDays(days); err != nil {
		return nil, err
	}
	loc := sch.Location()
	n := max(days, slices.Max(UptimeWindows))
	local := now.In(loc)
	all := make([]UptimeStats, n)
	for i := range all {
		all[i] = UptimeStats{Start: dayStart(local, i-(n-1)), End: dayStart(local, i-(n-1)+1),
			Incidents: map[IncidentKind]IncidentTally{}}
	}
	tally(sch, h, now, all)

	u := &Uptime{Zone: loc, Now: now}
	for i := n - days; i < n; i++ {
		s := all[i]
		s.percentiles()
		u.Days = append(u.Days, UptimeDay{Date: s.Start.Format(time.DateOnly), UptimeStats: s})
	}
	for _, w := range UptimeWindows {
		s := sumStats(all[n-w:])
		s.percentiles()
		u.Windows = append(u.Windows, UptimeWindow{Days: w, UptimeStats: s})
	}
	return u, nil
}

// ComputeUptimeSpan computes the numbers of one span [from, to) from h,
// which must hold the history of that span, as [ComputeUptime] computes
// those of a day: the one rule, over any span (a report's week or
// month). Incidents still open at to count until to.
func ComputeUptimeSpan(sch Schedule, h *UptimeHistory, from, to time.Time) UptimeStats {
	all := []UptimeStats{{Start: from, End: to, Incidents: map[IncidentKind]IncidentTally{}}}
	tally(sch, h, to, all)
	all[0].percentiles()
	return all[0]
}

// tally adds the runs and incidents of h to the spans of all, which are
// in order and do not overlap; now ends the incidents still open.
func tally(sch Schedule, h *UptimeHistory, now time.Time, all []UptimeStats) {
	dayOf := func(t time.Time) int {
		for i := range all {
			if !t.Before(all[i].Start) && t.Before(all[i].End) {
				return i
			}
		}
		return -1
	}

	// A run that ends a deadline incident is late; so is one that ends
	// a missed incident opened for the occurrence the run belongs to (the
	// last one of the schedule at or before its start; for an interval,
	// any), which is then that run's occurrence, not another one.
	endedMissed := map[string]bool{}
	lateRun := func(r *Run) bool {
		end := *r.FinishedAt
		begin := end
		if r.StartedAt != nil {
			begin = *r.StartedAt
		}
		late := false
		for _, in := range h.Incidents {
			if in.ResolvedAt == nil {
				continue
			}
			switch in.Kind {
			case IncidentMissed:
				if in.ResolvedAt.Before(begin) || in.ResolvedAt.After(end) {
					continue
				}
				if occ := sch.Prev(begin.Add(time.Nanosecond)); occ.IsZero() || !in.OpenedAt.Before(occ) {
					endedMissed[in.ID] = true
					late = true
				}
			case IncidentDeadline:
				if in.ResolvedAt.Equal(end) {
					late = true
				}
			}
		}
		return late
	}
	for _, r := range h.Runs {
		if r.FinishedAt == nil {
			continue
		}
		i := dayOf(*r.FinishedAt)
		if i < 0 {
			continue
		}
		day := &all[i]
		if r.Outcome == RunSucceeded && r.DurationMS != nil {
			day.durations = append(day.durations, time.Duration(*r.DurationMS)*time.Millisecond)
		}
		if r.Outcome == RunFailed && r.WillRetry {
			day.Retries++
		}
		switch {
		case r.Outcome == RunCancelled, r.Outcome == RunFailed && r.WillRetry, r.Outcome == "":
			continue
		}
		day.Occurrences++
		late := lateRun(r)
		if (r.Outcome == RunSucceeded || r.Outcome == RunSkipped) && !late {
			day.OnTime++
		}
	}
	for _, in := range h.Incidents {
		if i := dayOf(in.OpenedAt); i >= 0 {
			t := all[i].Incidents[in.Kind]
			t.Count++
			all[i].Incidents[in.Kind] = t
			if in.Kind == IncidentMissed && !endedMissed[in.ID] {
				all[i].Occurrences++
			}
		}
		end := now
		if in.ResolvedAt != nil && in.ResolvedAt.Before(now) {
			end = *in.ResolvedAt
		}
		for i := range all {
			from, to := maxTime(in.OpenedAt, all[i].Start), minTime(end, all[i].End)
			if to.After(from) {
				t := all[i].Incidents[in.Kind]
				t.Duration += to.Sub(from)
				all[i].Incidents[in.Kind] = t
			}
		}
	}
}

func sumStats(days []UptimeStats) UptimeStats {
	s := UptimeStats{Start: days[0].Start, End: days[len(days)-1].End, Incidents: map[IncidentKind]IncidentTally{}}
	for _, d := range days {
		s.Occurrences += d.Occurrences
		s.OnTime += d.OnTime
		s.Retries += d.Retries
		s.durations = append(s.durations, d.durations...)
		for k, t := range d.Incidents {
			sum := s.Incidents[k]
			sum.Count += t.Count
			sum.Duration += t.Duration
			s.Incidents[k] = sum
		}
	}
	return s
}

func (s *UptimeStats) percentiles() {
	s.Runs = len(s.durations)
	if s.Runs == 0 {
		return
	}
	d := slices.Clone(s.durations)
	slices.Sort(d)
	rank := func(p float64) time.Duration {
		return d[max(int(math.Ceil(p*float64(len(d))))-1, 0)]
	}
	s.RunP50, s.RunP95 = rank(0.50), rank(0.95)
}

// Words describe the span's numbers in one line, for a label.
func (s *UptimeStats) Words() string {
	out := "no occurrences"
	if r, ok := s.Ratio(); ok {
		out = fmt.Sprintf("%d of %d on time (%.1f%%)", s.OnTime, s.Occurrences, 100*r)
	}
	for _, k := range IncidentKinds {
		if t := s.Incidents[k]; t.Count > 0 || t.Duration > 0 {
			out += fmt.Sprintf("; %s: %d, %s", k, t.Count, t.Duration.Round(time.Second))
		}
	}
	if s.Runs > 0 {
		out += fmt.Sprintf("; runs p50 %s, p95 %s", s.RunP50.Round(time.Millisecond), s.RunP95.Round(time.Millisecond))
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// RunTrend fits a straight line, by least squares, to the median run
// duration of each day that had runs (x the day's index in Days), and
// returns its value on the first day and its slope: how much longer (or,
// negative, shorter) runs grew each day. It is false with fewer than two
// such days.
func (u *Uptime) RunTrend() (first, perDay time.Duration, ok bool) {
	var n, sx, sy, sxx, sxy float64
	for i := range u.Days {
		if u.Days[i].Runs == 0 {
			continue
		}
		x, y := float64(i), float64(u.Days[i].RunP50)
		n++
		sx, sy, sxx, sxy = sx+x, sy+y, sxx+x*x, sxy+x*y
	}
	d := n*sxx - sx*sx
	if n < 2 || d == 0 {
		return 0, 0, false
	}
	slope := (n*sxy - sx*sy) / d
	return time.Duration((sy - slope*sx) / n), time.Duration(slope), true
}
