package delivery

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
)

// MonitorURL is the dashboard page of a monitor: baseURL/monitors/{id}.
func MonitorURL(baseURL, monitorID string) string {
	return strings.TrimRight(baseURL, "/") + "/monitors/" + url.PathEscape(monitorID)
}

// SnoozeURL is the signed link of a notification of d that snoozes its
// monitor for an hour without a sign-in (see manage.SnoozeLink), good for
// manage.SnoozeLinkTTL from now; "" for a recovery, whose monitor needs no
// silence, or without a signer.
func SnoozeURL(s manage.Signer, baseURL string, d *monitors.Delivery, in *monitors.Incident, now time.Time) string {
	if s == nil || in.ResolvedAt != nil {
		return ""
	}
	switch d.Event {
	case monitors.EventOpened, monitors.EventUpdated, monitors.EventReminder:
	default:
		return ""
	}
	l := manage.NewSnoozeLink(s, d.ProjectID, d.MonitorID, manage.SnoozeLinkSeconds, now.Add(manage.SnoozeLinkTTL))
	return strings.TrimRight(baseURL, "/") + l.Path()
}

// IncidentFacts are the run and the ping an incident names
// (Incident.RunSeq, Incident.PingID), nil when it names none or they are
// no longer kept.
type IncidentFacts struct {
	Run  *monitors.Run
	Ping *monitors.Ping
}

// NewNotification builds what a channel is told about delivery d of an
// incident event, from the incident, its monitor as it is at now, and the
// run and ping the incident names. The summary is the event's own (an
// update's new facts, a recovery's summary); the incident's opening
// summary goes in the details when it differs. The ping's body (the run's
// output) is left out when the monitor's notify_output is off.
func NewNotification(d *monitors.Delivery, in *monitors.Incident, m *monitors.Monitor, facts IncidentFacts, now time.Time, baseURL string) *notifiers.Notification {
	summary := d.Summary
	if summary == "" {
		summary = in.Summary
	}
	details := ""
	if in.Summary != "" && in.Summary != summary {
		details = "Incident: " + in.Summary
	}
	return &notifiers.Notification{
		Event: notifiers.Event(d.Event),
		Incident: notifiers.Incident{
			ID:         in.ID,
			Kind:       notifiers.IncidentKind(in.Kind),
			OpenedAt:   in.OpenedAt,
			ResolvedAt: in.ResolvedAt,
			Summary:    summary,
			Details:    details,
		},
		Monitor:    notificationMonitor(m, now, baseURL),
		SentAt:     now,
		EventAt:    d.EventAt,
		BaseURL:    strings.TrimRight(baseURL, "/"),
		DeliveryID: DeliveryID(d),
		Run:        notificationRun(facts.Run, MonitorURL(baseURL, m.ID)),
		Ping:       notificationPing(facts.Ping, !m.HideOutput),
	}
}

func notificationRun(r *monitors.Run, monitorURL string) *notifiers.Run {
	if r == nil {
		return nil
	}
	return &notifiers.Run{Seq: r.Seq, RID: r.RID, StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Outcome: string(r.Outcome), DurationMS: r.DurationMS, Attempt: r.Attempt, ExitCode: r.ExitCode,
		WillRetry: r.WillRetry, Stuck: r.Stuck, URL: monitorURL + "#" + monitors.RunAnchor(r.Seq)}
}

func notificationPing(p *monitors.Ping, withOutput bool) *notifiers.Ping {
	if p == nil {
		return nil
	}
	out := &notifiers.Ping{ID: p.ID, Kind: string(p.Kind), At: p.At, RID: p.RID, Attempt: p.Attempt,
		RetryAt: p.RetryAt, ExitCode: p.ExitCode, DurationMS: p.DurationMS}
	if withOutput {
		out.Body, out.BodyTruncated = p.Body, p.BodyTruncated
	}
	return out
}

// DeliveryID names delivery d to receivers (Vigil-Delivery-Id): its
// incident (or, for a monitor event, its monitor; for a report, the
// report) and its own number, the same for every attempt at it.
func DeliveryID(d *monitors.Delivery) string {
	if d.ReportID != "" {
		return "report-" + d.ReportID + "." + strconv.FormatInt(d.ID, 10)
	}
	if d.IncidentID == "" {
		return "monitor-" + d.MonitorID + "." + strconv.FormatInt(d.ID, 10)
	}
	return d.IncidentID + "." + strconv.FormatInt(d.ID, 10)
}

// NewGroupNotification builds the incidents.grouped message of delivery
// d (its group's first) from the incident.opened notifications of the
// group's incidents, in the order they opened.
func NewGroupNotification(d *monitors.Delivery, items []*notifiers.Notification, now time.Time, baseURL string) *notifiers.Notification {
	group := make([]notifiers.GroupItem, len(items))
	for i, it := range items {
		group[i] = notifiers.GroupItem{Incident: it.Incident, Monitor: it.Monitor}
	}
	slices.SortStableFunc(group, func(a, b notifiers.GroupItem) int { return a.Incident.OpenedAt.Compare(b.Incident.OpenedAt) })
	return &notifiers.Notification{
		Event:      notifiers.EventGrouped,
		Incident:   group[0].Incident,
		Monitor:    group[0].Monitor,
		Group:      group,
		SentAt:     now,
		EventAt:    d.EventAt,
		BaseURL:    strings.TrimRight(baseURL, "/"),
		DeliveryID: DeliveryID(d),
	}
}

// NewMonitorNotification builds what a channel is told about delivery d
// of a monitor event (monitor.undeclared, monitor.redeclared): the event's
// summary and time, and the monitor as it is at now, with its source.
func NewMonitorNotification(d *monitors.Delivery, m *monitors.Monitor, now time.Time, baseURL string) *notifiers.Notification {
	return &notifiers.Notification{
		Event:      notifiers.Event(d.Event),
		Incident:   notifiers.Incident{Summary: d.Summary},
		Monitor:    notificationMonitor(m, now, baseURL),
		SentAt:     now,
		EventAt:    d.EventAt,
		BaseURL:    strings.TrimRight(baseURL, "/"),
		DeliveryID: DeliveryID(d),
	}
}

func notificationMonitor(m *monitors.Monitor, now time.Time, baseURL string) notifiers.Monitor {
	words, zone := m.Schedule.Words()
	if zone != "" {
		words += ", " + zone
	}
	tz := ""
	if m.Schedule.Kind != monitors.ScheduleInterval {
		tz = m.Schedule.TZ
	}
	return notifiers.Monitor{
		ID:             m.ID,
		Name:           m.Name,
		Slug:           m.Slug,
		Status:         string(m.StatusAt(now)),
		Tags:           m.Tags,
		Source:         m.Source,
		URL:            MonitorURL(baseURL, m.ID),
		Schedule:       m.Schedule.Describe(),
		ScheduleWords:  words,
		Zone:           tz,
		LastPingAt:     timeOrNil(m.State.LastPingAt),
		NextExpectedAt: timeOrNil(m.State.Expected),
	}
}

// newTestNotification is what POST /api/v1/channels/{id}/test sends: a
// test event, named after the channel.
func newTestNotification(ch *monitors.Channel, now time.Time, baseURL string) *notifiers.Notification {
	n := &notifiers.Notification{
		Event:   notifiers.EventTest,
		Monitor: notifiers.Monitor{ID: ch.ID, Name: ch.Name, Status: string(monitors.StatusUp)},
		SentAt:  now,
		BaseURL: strings.TrimRight(baseURL, "/"),
	}
	n.DeliveryID = n.DedupKey()
	return n
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// DashboardURL is the dashboard's home page: baseURL/.
func DashboardURL(baseURL string) string { return strings.TrimRight(baseURL, "/") + "/" }

// NewReportNotification builds what a channel is told about delivery d of
// report r: the report as it was claimed, with links to the dashboard and
// to each monitor it names.
func NewReportNotification(d *monitors.Delivery, r *monitors.Report, now time.Time, baseURL string) *notifiers.Notification {
	line := func(m monitors.ReportMonitor) notifiers.ReportMonitor {
		return notifiers.ReportMonitor{ID: m.ID, Name: m.Name, Slug: m.Slug, URL: MonitorURL(baseURL, m.ID),
			CreatedAt: m.CreatedAt, Occurrences: m.Occurrences, OnTime: m.OnTime, Incidents: reportIncidents(m.Incidents),
			Runs: m.Runs, RunP50: m.RunP50, RunP95: m.RunP95, Retries: m.Retries}
	}
	lines := func(ms []monitors.ReportMonitor) []notifiers.ReportMonitor {
		out := make([]notifiers.ReportMonitor, len(ms))
		for i, m := range ms {
			out[i] = line(m)
		}
		return out
	}
	return &notifiers.Notification{
		Event:   notifiers.Event(d.Event),
		SentAt:  now,
		EventAt: d.EventAt,
		BaseURL: strings.TrimRight(baseURL, "/"),
		// The same for every attempt at it.
		DeliveryID: DeliveryID(d),
		Report: &notifiers.Report{ID: r.ID, Period: string(r.Period), Start: r.Start, End: r.End,
			Zone: monitors.ReportZone.String(), ProjectName: r.ProjectName, URL: DashboardURL(baseURL),
			Monitors: r.Monitors, Occurrences: r.Occurrences, OnTime: r.OnTime, Incidents: reportIncidents(r.Incidents),
			WithIncidents: lines(r.WithIncidents), WithIncidentsTotal: r.WithIncidentsTotal, Slowest: lines(r.Slowest),
			MostRetried: lines(r.MostRetried), NeverPinged: lines(r.NeverPinged), NeverPingedTotal: r.NeverPingedTotal},
	}
}

// reportIncidents lists tallies in the order of the incident kinds,
// leaving out the kinds with none.
func reportIncidents(in map[monitors.IncidentKind]monitors.IncidentTally) []notifiers.ReportIncidents {
	out := []notifiers.ReportIncidents{}
	for _, k := range monitors.IncidentKinds {
		if t, ok := in[k]; ok && (t.Count > 0 || t.Duration > 0) {
			out = append(out, notifiers.ReportIncidents{Kind: notifiers.IncidentKind(k), Count: t.Count, Duration: t.Duration})
		}
	}
	return out
}
