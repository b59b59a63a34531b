package monitors

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"
)

// ReportPeriod is how often a channel gets a report (its report field):
// weekly, monthly, or "" for none.
type ReportPeriod string

// Report periods.
const (
	ReportNone    ReportPeriod = ""
	ReportWeekly  ReportPeriod = "weekly"
	ReportMonthly ReportPeriod = "monthly"
)

// Report events: the event of a report's delivery, and of the webhook
// payload.
const (
	EventReportWeekly  IncidentEventKind = "report.weekly"
	EventReportMonthly IncidentEventKind = "report.monthly"
)

// IsReport reports whether k is the event of a report.
func (k IncidentEventKind) IsReport() bool {
	return k == EventReportWeekly || k == EventReportMonthly
}

// Event is the event of a report of period p.
func (p ReportPeriod) Event() IncidentEventKind {
	if p == ReportMonthly {
		return EventReportMonthly
	}
	return EventReportWeekly
}

// ValidateReportPeriod checks a channel's report field.
func ValidateReportPeriod(p ReportPeriod) error {
	switch p {
	case ReportNone, ReportWeekly, ReportMonthly:
		return nil
	}
	return invalid("report", "%q is not weekly or monthly (leave it out for no report)", string(p))
}

// ReportZone is the zone report periods are cut in: a week ends on
// Monday at 00:00 UTC, a month on the 1st at 00:00 UTC. One zone for
// every project, so that every replica and every channel cut the same
// periods, whatever the zones of the monitors.
var ReportZone = time.UTC

// ReportPeriodAt returns the last complete period of kind p at now:
// [start, end) with end at or before now. A week runs from Monday 00:00
// to the next Monday 00:00, a month from the 1st 00:00 to the next 1st,
// in [ReportZone].
func ReportPeriodAt(p ReportPeriod, now time.Time) (start, end time.Time) {
	t := now.In(ReportZone)
	y, m, d := t.Date()
	if p == ReportMonthly {
		end = time.Date(y, m, 1, 0, 0, 0, 0, ReportZone)
		return end.AddDate(0, -1, 0), end
	}
	back := (int(t.Weekday()) + 6) % 7 // days since Monday
	end = time.Date(y, m, d-back, 0, 0, 0, 0, ReportZone)
	return end.AddDate(0, 0, -7), end
}

// ReportID names the report of a channel and period: the same on every
// replica, so the claim of one is the claim of all.
func ReportID(channelID string, p ReportPeriod, start time.Time) string {
	return channelID + "." + string(p) + "." + start.In(ReportZone).Format(time.DateOnly)
}

// ReportChannel is a channel with a report, as the evaluator sees it.
type ReportChannel struct {
	ID, ProjectID string
	Report        ReportPeriod
	// LastStart is the start of the latest period of this kind reported
	// to the channel; nil when none was.
	LastStart *time.Time
}

// ReportDue is a report to make: a channel and the period it covers.
type ReportDue struct {
	Channel    ReportChannel
	Start, End time.Time
	// Skipped counts the whole periods before this one that were never
	// reported because Vigil was down all through them, or the channel
	// had no report yet (0 when the last report is the period before).
	Skipped int
}

// ReportsDue returns the reports due at now: for each channel, the last
// complete period, unless reported already. Only the last complete period
// is ever due: after an outage, the report missed at its due time is sent
// when Vigil is back, once, but a report older than that (the outage
// lasted more than a period) is not sent any more; Skipped counts those.
// A channel that just got a report field gets the last complete period's
// report at once.
func ReportsDue(chs []ReportChannel, now time.Time) []ReportDue {
	var out []ReportDue
	for _, c := range chs {
		if c.Report == ReportNone {
			continue
		}
		start, end := ReportPeriodAt(c.Report, now)
		if c.LastStart != nil && !c.LastStart.Before(start) {
			continue
		}
		skipped := 0
		if c.LastStart != nil {
			for s := start; ; skipped++ {
				s, _ = ReportPeriodAt(c.Report, s)
				if !s.After(*c.LastStart) {
					break
				}
			}
		}
		out = append(out, ReportDue{Channel: c, Start: start, End: end, Skipped: skipped})
	}
	return out
}

// ReportListMax bounds each list of a report; the totals count them all.
const ReportListMax = 10

// Report is the summary of a project's period sent to a channel: which
// monitors had incidents, the uptime, the slowest and most retried jobs,
// and the monitors that never pinged. Every number comes from
// [ComputeUptimeSpan] over the period.
type Report struct {
	ID          string       `json:"id"`
	ProjectID   string       `json:"project_id"`
	ProjectName string       `json:"project_name"`
	ChannelID   string       `json:"channel_id"`
	Period      ReportPeriod `json:"period"`
	// Start and End are the period, [Start, End), in ReportZone.
	Start     time.Time `json:"start"`
	End       time.Time `json:"end"`
	CreatedAt time.Time `json:"created_at"`
	// Monitors counts the monitors that existed at End (undeclared
	// ones left out).
	Monitors    int `json:"monitors"`
	Occurrences int `json:"occurrences"`
	OnTime      int `json:"on_time"`
	// Incidents sums every monitor's incidents by kind.
	Incidents map[IncidentKind]IncidentTally `json:"incidents"`
	// WithIncidents are the monitors with incident time in the period,
	// most down time first.
	WithIncidents      []ReportMonitor `json:"with_incidents"`
	WithIncidentsTotal int             `json:"with_incidents_total"`
	// Slowest are the monitors with successful runs, by p95 run duration,
	// longest first.
	Slowest []ReportMonitor `json:"slowest"`
	// MostRetried are the monitors with retried failed attempts, most
	// first.
	MostRetried []ReportMonitor `json:"most_retried"`
	// NeverPinged are the monitors that had received no ping at all when
	// the report was made, oldest first.
	NeverPinged      []ReportMonitor `json:"never_pinged"`
	NeverPingedTotal int             `json:"never_pinged_total"`
}

// Ratio is the share of the period's occurrences that succeeded on time,
// false when there were none.
func (r *Report) Ratio() (float64, bool) {
	if r.Occurrences == 0 {
		return 0, false
	}
	return float64(r.OnTime) / float64(r.Occurrences), true
}

// ReportMonitor is one monitor's line in a report.
type ReportMonitor struct {
	ID          string                         `json:"id"`
	Name        string                         `json:"name"`
	Slug        string                         `json:"slug"`
	CreatedAt   time.Time                      `json:"created_at"`
	Occurrences int                            `json:"occurrences"`
	OnTime      int                            `json:"on_time"`
	Incidents   map[IncidentKind]IncidentTally `json:"incidents"`
	Runs        int                            `json:"runs"`
	RunP50      time.Duration                  `json:"run_p50"`
	RunP95      time.Duration                  `json:"run_p95"`
	Retries     int                            `json:"retries"`
}

// Down is the monitor's incident time in the period, all kinds.
func (m *ReportMonitor) Down() time.Duration {
	var d time.Duration
	for _, t := range m.Incidents {
		d += t.Duration
	}
	return d
}

// ReportInput is one monitor and its numbers over a report's period.
type ReportInput struct {
	Monitor *Monitor
	Stats   UptimeStats
}

// BuildReport makes the report of the period [start, end) from the
// monitors' numbers over it. It decides what a report holds; ID,
// ProjectID, ProjectName and ChannelID are the caller's.
func BuildReport(p ReportPeriod, start, end, now time.Time, in []ReportInput) *Report {
	r := &Report{Period: p, Start: start.UTC(), End: end.UTC(), CreatedAt: now.UTC(),
		Incidents: map[IncidentKind]IncidentTally{}, WithIncidents: []ReportMonitor{}, Slowest: []ReportMonitor{},
		MostRetried: []ReportMonitor{}, NeverPinged: []ReportMonitor{}}
	var all []ReportMonitor
	for _, x := range in {
		m := x.Monitor
		if m.State.Status == StatusUndeclared || !m.CreatedAt.Before(end) {
			continue
		}
		s := x.Stats
		line := ReportMonitor{ID: m.ID, Name: m.Name, Slug: m.Slug, CreatedAt: m.CreatedAt.UTC(),
			Occurrences: s.Occurrences, OnTime: s.OnTime, Incidents: map[IncidentKind]IncidentTally{}, Runs: s.Runs,
			RunP50: s.RunP50, RunP95: s.RunP95, Retries: s.Retries}
		for k, t := range s.Incidents {
			if t.Count > 0 || t.Duration > 0 {
				line.Incidents[k] = t
				sum := r.Incidents[k]
				sum.Count += t.Count
				sum.Duration += t.Duration
				r.Incidents[k] = sum
			}
		}
		r.Monitors++
		r.Occurrences += s.Occurrences
		r.OnTime += s.OnTime
		all = append(all, line)
		if m.State.LastPingAt.IsZero() {
			r.NeverPinged = append(r.NeverPinged, line)
		}
	}
	byName := func(a, b ReportMonitor) int { return cmp.Or(cmp.Compare(a.Slug, b.Slug), cmp.Compare(a.ID, b.ID)) }
	for _, m := range all {
		if len(m.Incidents) > 0 {
			r.WithIncidents = append(r.WithIncidents, m)
		}
		if m.Runs > 0 {
			r.Slowest = append(r.Slowest, m)
		}
		if m.Retries > 0 {
			r.MostRetried = append(r.MostRetried, m)
		}
	}
	slices.SortFunc(r.WithIncidents, func(a, b ReportMonitor) int {
		return cmp.Or(cmp.Compare(b.Down(), a.Down()), byName(a, b))
	})
	slices.SortFunc(r.Slowest, func(a, b ReportMonitor) int { return cmp.Or(cmp.Compare(b.RunP95, a.RunP95), byName(a, b)) })
	slices.SortFunc(r.MostRetried, func(a, b ReportMonitor) int { return cmp.Or(cmp.Compare(b.Retries, a.Retries), byName(a, b)) })
	slices.SortFunc(r.NeverPinged, func(a, b ReportMonitor) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), byName(a, b))
	})
	r.WithIncidentsTotal, r.NeverPingedTotal = len(r.WithIncidents), len(r.NeverPinged)
	r.WithIncidents = r.WithIncidents[:min(len(r.WithIncidents), ReportListMax)]
	r.Slowest = r.Slowest[:min(len(r.Slowest), ReportListMax)]
	r.MostRetried = r.MostRetried[:min(len(r.MostRetried), ReportListMax)]
	r.NeverPinged = r.NeverPinged[:min(len(r.NeverPinged), ReportListMax)]
	return r
}

// ReportStore is what [LoadReport] reads.
type ReportStore interface {
	UptimeStore
	ProjectGet(ctx context.Context, id string) (*Project, error)
	MonitorList(ctx context.Context, p *MonitorListParams) ([]*Monitor, error)
}

// reportPage is how many monitors LoadReport lists at a time.
const reportPage = 500

// LoadReport reads the history of every monitor of the project over
// [start, end) and makes its report at now: the one way reports are made.
func LoadReport(ctx context.Context, s ReportStore, projectID string, p ReportPeriod, start, end, now time.Time) (*Report, error) {
	proj, err := s.ProjectGet(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("report of project %s: %w", projectID, err)
	}
	var in []ReportInput
	for offset := 0; ; offset += reportPage {
		ms, err := s.MonitorList(ctx, &MonitorListParams{ProjectID: projectID, Now: now, Limit: reportPage, Offset: offset})
		if err != nil {
			return nil, fmt.Errorf("report of project %s: %w", projectID, err)
		}
		for _, m := range ms {
			if m.State.Status == StatusUndeclared || !m.CreatedAt.Before(end) {
				continue
			}
			sch, err := UptimeSchedule(m)
			if err != nil {
				return nil, err
			}
			h, err := s.UptimeHistory(ctx, &UptimeHistoryParams{ProjectID: projectID, MonitorID: m.ID, From: start, To: end})
			if err != nil {
				return nil, fmt.Errorf("report of project %s: %w", projectID, err)
			}
			in = append(in, ReportInput{Monitor: m, Stats: ComputeUptimeSpan(sch, h, start, end)})
		}
		if len(ms) < reportPage {
			break
		}
	}
	r := BuildReport(p, start, end, now, in)
	r.ProjectID, r.ProjectName = proj.ID, proj.Name
	return r, nil
}

// ReportClaimParams are the inputs of [Store.ReportClaim].
type ReportClaimParams struct {
	// Report is the report to send, with its ID (see ReportID) and
	// ChannelID set.
	Report *Report
	// Now stamps the delivery.
	Now time.Time
}
