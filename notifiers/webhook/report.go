package webhook

import (
	"time"

	"github.com/vigilhq/vigil/notifiers"
)

// ReportPayload is the default body of a report (report.weekly,
// report.monthly): an event of its own shape, with "report" in place of
// "incident" and "monitor", which a report does not have.
type ReportPayload struct {
	Event  string        `json:"event"`
	Report PayloadReport `json:"report"`
	SentAt time.Time     `json:"sent_at"`
}

// PayloadReport is the payload's "report": the period [start, end), cut
// in zone (UTC); the project's numbers over it; and the lists, each of at
// most ten monitors, with totals where a list may be cut. Durations are
// in seconds; uptime is the share of occurrences on time, null when none
// were due.
type PayloadReport struct {
	ID                 string                   `json:"id"`
	Period             string                   `json:"period"`
	Start              time.Time                `json:"start"`
	End                time.Time                `json:"end"`
	Zone               string                   `json:"zone"`
	Project            string                   `json:"project"`
	URL                string                   `json:"url"`
	Monitors           int                      `json:"monitors"`
	Occurrences        int                      `json:"occurrences"`
	OnTime             int                      `json:"on_time"`
	Uptime             *float64                 `json:"uptime"`
	Incidents          []PayloadReportIncidents `json:"incidents"`
	WithIncidents      []PayloadReportMonitor   `json:"monitors_with_incidents"`
	WithIncidentsTotal int                      `json:"monitors_with_incidents_total"`
	Slowest            []PayloadReportMonitor   `json:"slowest"`
	MostRetried        []PayloadReportMonitor   `json:"most_retried"`
	NeverPinged        []PayloadReportMonitor   `json:"never_pinged"`
	NeverPingedTotal   int                      `json:"never_pinged_total"`
}

// PayloadReportIncidents counts the incidents of one kind, and the
// seconds they were open in the period.
type PayloadReportIncidents struct {
	Kind            string  `json:"kind"`
	Count           int     `json:"count"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// PayloadReportMonitor is one monitor of a report's list.
type PayloadReportMonitor struct {
	ID            string                   `json:"id"`
	Name          string                   `json:"name"`
	Slug          string                   `json:"slug"`
	URL           string                   `json:"url"`
	CreatedAt     time.Time                `json:"created_at"`
	Occurrences   int                      `json:"occurrences"`
	OnTime        int                      `json:"on_time"`
	Uptime        *float64                 `json:"uptime"`
	Incidents     []PayloadReportIncidents `json:"incidents"`
	Runs          int                      `json:"runs"`
	RunP50Seconds float64                  `json:"run_p50_seconds"`
	RunP95Seconds float64                  `json:"run_p95_seconds"`
	Retries       int                      `json:"retries"`
}

// NewReportPayload builds the default payload of a report notification.
func NewReportPayload(n *notifiers.Notification) ReportPayload {
	r := n.Report
	if r == nil {
		r = &notifiers.Report{}
	}
	zone := r.Zone
	if zone == "" {
		zone = "UTC"
	}
	p := PayloadReport{ID: r.ID, Period: r.Period, Start: r.Start.UTC(), End: r.End.UTC(), Zone: zone,
		Project: r.ProjectName, URL: n.Link(), Monitors: r.Monitors, Occurrences: r.Occurrences, OnTime: r.OnTime,
		Incidents: payloadIncidents(r.Incidents), WithIncidents: payloadMonitors(r.WithIncidents),
		WithIncidentsTotal: r.WithIncidentsTotal, Slowest: payloadMonitors(r.Slowest),
		MostRetried: payloadMonitors(r.MostRetried), NeverPinged: payloadMonitors(r.NeverPinged),
		NeverPingedTotal: r.NeverPingedTotal}
	if u, ok := r.Uptime(); ok {
		p.Uptime = &u
	}
	return ReportPayload{Event: string(n.Event), Report: p, SentAt: n.SentAt.UTC()}
}

func payloadIncidents(in []notifiers.ReportIncidents) []PayloadReportIncidents {
	out := make([]PayloadReportIncidents, len(in))
	for i, t := range in {
		out[i] = PayloadReportIncidents{Kind: string(t.Kind), Count: t.Count, DurationSeconds: t.Duration.Seconds()}
	}
	return out
}

func payloadMonitors(ms []notifiers.ReportMonitor) []PayloadReportMonitor {
	out := make([]PayloadReportMonitor, len(ms))
	for i, m := range ms {
		out[i] = PayloadReportMonitor{ID: m.ID, Name: m.Name, Slug: m.Slug, URL: m.URL, CreatedAt: m.CreatedAt.UTC(),
			Occurrences: m.Occurrences, OnTime: m.OnTime, Incidents: payloadIncidents(m.Incidents), Runs: m.Runs,
			RunP50Seconds: m.RunP50.Seconds(), RunP95Seconds: m.RunP95.Seconds(), Retries: m.Retries}
		if u, ok := m.Uptime(); ok {
			out[i].Uptime = &u
		}
	}
	return out
}
