package notifiers

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Report events: a summary of a project's week or month, sent to the
// channels whose report field asks for one. They carry
// [Notification.Report] and no incident or monitor. Only email, Slack
// and webhook channels take them (monitors.ChannelReports decides).
const (
	EventReportWeekly  Event = "report.weekly"
	EventReportMonthly Event = "report.monthly"
)

// IsReport reports whether e is a report.
func (e Event) IsReport() bool { return e == EventReportWeekly || e == EventReportMonthly }

// Report is what a report notification says: the numbers of a project's
// period, as the delivery layer built them from the stored report.
type Report struct {
	ID string
	// Period is weekly or monthly; [Start, End) is the period, cut in
	// Zone (UTC).
	Period      string
	Start, End  time.Time
	Zone        string
	ProjectName string
	// URL is the dashboard.
	URL string
	// Monitors counts the project's monitors; Occurrences and OnTime sum
	// their occurrences in the period, and those that succeeded on time.
	Monitors, Occurrences, OnTime int
	// Incidents are the period's incidents by kind, in the order of the
	// kinds, those with none left out.
	Incidents []ReportIncidents
	// WithIncidents lists the monitors with incident time in the period,
	// most first, at most ten; WithIncidentsTotal counts them all.
	WithIncidents      []ReportMonitor
	WithIncidentsTotal int
	// Slowest lists the monitors by the p95 duration of their successful
	// runs, longest first; MostRetried by their retried failed attempts,
	// most first; at most ten each.
	Slowest     []ReportMonitor
	MostRetried []ReportMonitor
	// NeverPinged lists the monitors that had never received a ping,
	// oldest first, at most ten; NeverPingedTotal counts them all.
	NeverPinged      []ReportMonitor
	NeverPingedTotal int
}

// ReportIncidents counts the incidents of one kind and their time in the
// period.
type ReportIncidents struct {
	Kind     IncidentKind
	Count    int
	Duration time.Duration
}

// ReportMonitor is one monitor's line in a report.
type ReportMonitor struct {
	ID, Name, Slug string
	// URL is its dashboard page.
	URL                 string
	CreatedAt           time.Time
	Occurrences, OnTime int
	Incidents           []ReportIncidents
	Runs                int
	RunP50, RunP95      time.Duration
	Retries             int
}

// Label is the monitor's name, or its slug when it has none.
func (m *ReportMonitor) Label() string {
	if m.Name != "" {
		return m.Name
	}
	return m.Slug
}

// Uptime is the share of the occurrences that succeeded on time, false
// when there were none.
func (r *Report) Uptime() (float64, bool) {
	if r.Occurrences == 0 {
		return 0, false
	}
	return float64(r.OnTime) / float64(r.Occurrences), true
}

// Uptime is the share of the monitor's occurrences that succeeded on
// time, false when there were none.
func (m *ReportMonitor) Uptime() (float64, bool) {
	if m.Occurrences == 0 {
		return 0, false
	}
	return float64(m.OnTime) / float64(m.Occurrences), true
}

// PeriodWords names the period for people, its last day included:
// "week of 23–29 Nov 2026 (UTC)", "November 2026 (UTC)".
func (r *Report) PeriodWords() string {
	zone := r.Zone
	if zone == "" {
		zone = "UTC"
	}
	if r.Period == "monthly" {
		return r.Start.UTC().Format("January 2006") + " (" + zone + ")"
	}
	last := r.End.UTC().AddDate(0, 0, -1)
	first := r.Start.UTC()
	switch {
	case first.Year() != last.Year():
		return fmt.Sprintf("week of %s – %s (%s)", first.Format("2 Jan 2006"), last.Format("2 Jan 2006"), zone)
	case first.Month() != last.Month():
		return fmt.Sprintf("week of %s – %s (%s)", first.Format("2 Jan"), last.Format("2 Jan 2006"), zone)
	}
	return fmt.Sprintf("week of %d–%s (%s)", first.Day(), last.Format("2 Jan 2006"), zone)
}

// Span is the period's bounds, exactly: "2026-11-23 00:00 UTC to
// 2026-11-30 00:00 UTC".
func (r *Report) Span() string {
	return FormatTime(r.Start) + " to " + FormatTime(r.End)
}

// UptimeWords says the uptime: "78 of 80 on time (97.5%)", or "no runs
// were due".
func UptimeWords(onTime, occurrences int) string {
	if occurrences == 0 {
		return "no runs were due"
	}
	return fmt.Sprintf("%d of %d on time (%s)", onTime, occurrences, percent(float64(onTime)/float64(occurrences)))
}

func percent(r float64) string {
	return strconv.FormatFloat(100*r, 'f', 1, 64) + "%"
}

// IncidentWords says a list of incident tallies: "missed 2 (1h 5m),
// failed 1 (12m)", or "none".
func IncidentWords(in []ReportIncidents) string {
	if len(in) == 0 {
		return "none"
	}
	parts := make([]string, len(in))
	for i, t := range in {
		parts[i] = fmt.Sprintf("%s %d (%s)", t.Kind, t.Count, FormatDuration(t.Duration))
	}
	return strings.Join(parts, ", ")
}

// RunDuration renders a run duration: "850 ms", "12.4 s", "3m 5s".
func RunDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return FormatDuration(d)
}

// ReportSection is one part of a report as every text kind shows it: a
// title and its lines, each with the page it links to ("" for none).
type ReportSection struct {
	Title string
	Lines []ReportLine
	// More says how many were left out of the list ("and 3 more").
	More int
}

// ReportLine is one line of a [ReportSection]: Label (a monitor's name,
// linked to URL when set) then Text.
type ReportLine struct {
	Label, URL, Text string
}

// ReportSections are the parts of the report, in order: incidents, the
// slowest jobs, the most retried, the monitors that never pinged. A part
// with nothing to list says so in one line with no label.
func (n *Notification) ReportSections() []ReportSection {
	r := n.Report
	if r == nil {
		return nil
	}
	var out []ReportSection
	s := ReportSection{Title: "Monitors with incidents", More: r.WithIncidentsTotal - len(r.WithIncidents)}
	for _, m := range r.WithIncidents {
		s.Lines = append(s.Lines, ReportLine{Label: m.Label(), URL: m.URL,
			Text: IncidentWords(m.Incidents) + "; " + UptimeWords(m.OnTime, m.Occurrences)})
	}
	if len(s.Lines) == 0 {
		s.Lines = []ReportLine{{Text: "No incidents."}}
	}
	out = append(out, s)
	s = ReportSection{Title: "Slowest jobs (p95 run duration)"}
	for _, m := range r.Slowest {
		s.Lines = append(s.Lines, ReportLine{Label: m.Label(), URL: m.URL,
			Text: fmt.Sprintf("p95 %s, p50 %s over %d %s", RunDuration(m.RunP95), RunDuration(m.RunP50), m.Runs, plural(m.Runs, "run", "runs"))})
	}
	if len(s.Lines) == 0 {
		s.Lines = []ReportLine{{Text: "No successful run reported a duration."}}
	}
	out = append(out, s)
	s = ReportSection{Title: "Most retried jobs"}
	for _, m := range r.MostRetried {
		s.Lines = append(s.Lines, ReportLine{Label: m.Label(), URL: m.URL,
			Text: fmt.Sprintf("%d %s retried", m.Retries, plural(m.Retries, "failed attempt", "failed attempts"))})
	}
	if len(s.Lines) == 0 {
		s.Lines = []ReportLine{{Text: "No job was retried."}}
	}
	out = append(out, s)
	s = ReportSection{Title: "Monitors that never pinged", More: r.NeverPingedTotal - len(r.NeverPinged)}
	for _, m := range r.NeverPinged {
		s.Lines = append(s.Lines, ReportLine{Label: m.Label(), URL: m.URL, Text: "created " + FormatTime(m.CreatedAt)})
	}
	if len(s.Lines) == 0 {
		s.Lines = []ReportLine{{Text: "Every monitor has pinged."}}
	}
	return append(out, s)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// reportHeadline is the headline of a report: "Weekly report for Acme:
// week of 23–29 Nov 2026 (UTC)".
func (n *Notification) reportHeadline() string {
	r := n.Report
	if r == nil {
		return "Vigil report"
	}
	kind := "Weekly"
	if r.Period == "monthly" {
		kind = "Monthly"
	}
	name := r.ProjectName
	if name == "" {
		name = "your project"
	}
	return fmt.Sprintf("%s report for %s: %s", kind, name, r.PeriodWords())
}

// reportSummary is the report's numbers in a sentence.
func (n *Notification) reportSummary() string {
	r := n.Report
	if r == nil {
		return ""
	}
	s := fmt.Sprintf("%d %s: %s; incidents: %s", r.Monitors, plural(r.Monitors, "monitor", "monitors"),
		UptimeWords(r.OnTime, r.Occurrences), IncidentWords(r.Incidents))
	if r.NeverPingedTotal > 0 {
		s += fmt.Sprintf("; %d never pinged", r.NeverPingedTotal)
	}
	return s + "."
}
