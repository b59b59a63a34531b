// Package notifiertest holds what the tests of every channel kind share: a
// recording HTTP receiver, sample notifications, the table of HTTP statuses
// and how each must be classified, and a check that no secret leaks into an
// error.
package notifiertest

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
)

// Times used by the sample notifications.
var (
	OpenedAt   = time.Date(2026, 3, 14, 1, 5, 0, 0, time.UTC)
	ResolvedAt = OpenedAt.Add(12*time.Minute + 20*time.Second)
	LastPingAt = time.Date(2026, 3, 13, 1, 0, 7, 0, time.UTC)
	ExpectedAt = time.Date(2026, 3, 14, 1, 0, 0, 0, time.UTC)
	SentAt     = time.Date(2026, 3, 14, 1, 5, 2, 0, time.UTC)
)

// Notification returns a complete sample notification for event about a
// missed run of "nightly-import". Each call returns a fresh value.
func Notification(event notifiers.Event) *notifiers.Notification {
	opened, lastPing, expected := OpenedAt, LastPingAt, ExpectedAt
	n := &notifiers.Notification{
		Event: event,
		Incident: notifiers.Incident{
			ID:       "inc_01HZX3M4W6",
			Kind:     notifiers.IncidentMissed,
			OpenedAt: opened,
			Summary:  "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)",
			Details:  "Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.",
		},
		Monitor: notifiers.Monitor{
			ID:             "mon_7f3a",
			Name:           "nightly-import",
			Slug:           "nightly-import",
			Status:         "down",
			Tags:           []string{"etl", "billing"},
			URL:            "https://vigil.example.com/monitors/mon_7f3a",
			Schedule:       "0 2 * * * (Europe/Berlin)",
			LastPingAt:     &lastPing,
			NextExpectedAt: &expected,
		},
		SentAt:  SentAt,
		BaseURL: "https://vigil.example.com",
	}
	switch event {
	case notifiers.EventResolved:
		resolved := ResolvedAt
		n.Incident.ResolvedAt = &resolved
		n.Monitor.Status = "up"
		n.SentAt = resolved.Add(time.Second)
	case notifiers.EventReminder:
		n.SentAt = OpenedAt.Add(2 * time.Hour)
	case notifiers.EventTest:
		n.Incident = notifiers.Incident{}
		n.Monitor.Status = "up"
	}
	return n
}

// SnoozeURL is the golden samples' signed "snooze 1 h" link, as delivery
// makes them (manage.SnoozeLink).
const SnoozeURL = "https://vigil.example.com/snooze/mon_7f3a?expires=1773536700&project=prj_1&seconds=3600&sig=k4c1d2e3f.q5mJ2hWq0y3kCwPzN8bXk7rV1uTgHs6aLdE9fY4oIjM"

// Opened is Notification(notifiers.EventOpened).
func Opened() *notifiers.Notification { return Notification(notifiers.EventOpened) }

// Resolved is Notification(notifiers.EventResolved).
func Resolved() *notifiers.Notification { return Notification(notifiers.EventResolved) }

// FailureOutput is the output of the sample failed run: it ends with
// "boom: disk full" and holds characters every kind must escape.
const FailureOutput = "starting import of 2026-03-13\n" +
	"loaded 1200 rows from <orders> & <refunds>\n" +
	"*bold* _italic_ `code` ```fence``` |pipe| ~strike~\n" +
	"\x1b[31mwriting batch 3\x1b[0m\n" +
	"boom: disk full\n"

// Samples of the three incidents every kind has a golden rendering of:
// a run that failed with output, a missed run, and a stuck run, of a
// monitor that runs at 02:00 Berlin time.
//
// Failure is the fourth and final attempt of the 02:00 run, which exited
// with status 3 after 12.4 s, printing FailureOutput.
func Failure() *notifiers.Notification {
	n := berlin(Opened())
	started := time.Date(2026, 3, 14, 1, 0, 0, 0, time.UTC)
	finished := started.Add(12400 * time.Millisecond)
	code, ms := 3, int64(12400)
	n.Incident.Kind = notifiers.IncidentFailed
	n.Incident.Summary = "nightly-import failed at 02:00 Europe/Berlin (exit status 3)"
	n.Incident.Details = ""
	n.Incident.OpenedAt = finished
	last := finished
	n.Monitor.LastPingAt = &last
	next := time.Date(2026, 3, 15, 1, 0, 0, 0, time.UTC)
	n.Monitor.NextExpectedAt = &next
	n.SentAt = finished.Add(time.Second)
	n.Run = &notifiers.Run{Seq: 42, RID: "run-42", StartedAt: &started, FinishedAt: &finished, Outcome: "fail",
		DurationMS: &ms, Attempt: 4, ExitCode: &code, URL: "https://vigil.example.com/monitors/mon_7f3a#run-42"}
	n.Ping = &notifiers.Ping{ID: 9001, Kind: "fail", At: finished, RID: "run-42", Attempt: 4, ExitCode: &code,
		DurationMS: &ms, Body: FailureOutput}
	n.DeliveryID = "inc_01HZX3M4W6.17"
	n.SnoozeURL = SnoozeURL
	return n
}

// Missed is the 02:00 run that never pinged.
func Missed() *notifiers.Notification {
	n := berlin(Opened())
	n.Incident.Details = ""
	n.DeliveryID = "inc_01HZX3M4W6.18"
	n.SnoozeURL = SnoozeURL
	return n
}

// Stuck is the 02:00 run, started and not finished 1 h 12 min later.
func Stuck() *notifiers.Notification {
	n := berlin(Opened())
	started := time.Date(2026, 3, 14, 1, 0, 3, 0, time.UTC)
	n.Incident.Kind = notifiers.IncidentStuck
	n.Incident.Summary = "nightly-import: run run-42 started at 02:00 Europe/Berlin and has not finished after 1h (max runtime 1h)"
	n.Incident.Details = ""
	n.Incident.OpenedAt = started.Add(time.Hour)
	last := started
	n.Monitor.LastPingAt = &last
	n.Monitor.Status = "running"
	n.SentAt = started.Add(72 * time.Minute)
	n.Run = &notifiers.Run{Seq: 42, RID: "run-42", StartedAt: &started, Attempt: 1, Stuck: true,
		URL: "https://vigil.example.com/monitors/mon_7f3a#run-42"}
	n.DeliveryID = "inc_01HZX3M4W6.19"
	n.SnoozeURL = SnoozeURL
	return n
}

// TooFast is the 02:00 backup that succeeded after 2 s, under a min
// runtime of 1 min.
func TooFast() *notifiers.Notification {
	n := berlin(Opened())
	started := time.Date(2026, 3, 14, 1, 0, 0, 0, time.UTC)
	finished := started.Add(2 * time.Second)
	ms := int64(2000)
	n.Monitor.Name, n.Monitor.Slug = "nightly-backup", "nightly-backup"
	n.Incident.Kind = notifiers.IncidentTooFast
	n.Incident.Summary = `nightly-backup: run "run-43" succeeded at 2026-03-14 02:00:02 Europe/Berlin after only 2s, less than its min runtime of 1m`
	n.Incident.Details = ""
	n.Incident.OpenedAt = finished
	last := finished
	n.Monitor.LastPingAt = &last
	next := time.Date(2026, 3, 15, 1, 0, 0, 0, time.UTC)
	n.Monitor.NextExpectedAt = &next
	n.SentAt = finished.Add(time.Second)
	n.Run = &notifiers.Run{Seq: 43, RID: "run-43", StartedAt: &started, FinishedAt: &finished, Outcome: "success",
		DurationMS: &ms, Attempt: 1, URL: "https://vigil.example.com/monitors/mon_7f3a#run-43"}
	n.Ping = &notifiers.Ping{ID: 9002, Kind: "success", At: finished, RID: "run-43", Attempt: 1, DurationMS: &ms}
	n.DeliveryID = "inc_01HZX3M4W6.20"
	return n
}

// Early is the 02:00 report started at 01:00, under early_seconds 300.
func Early() *notifiers.Notification {
	n := berlin(Opened())
	started := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	n.Monitor.Name, n.Monitor.Slug, n.Monitor.Status = "daily-report", "daily-report", "down"
	n.Incident.Kind = notifiers.IncidentEarly
	n.Incident.Summary = "daily-report: a run started at 2026-03-14 01:00 Europe/Berlin, 1h before its occurrence of 2026-03-14 02:00 Europe/Berlin (early_seconds: 5m)"
	n.Incident.Details = ""
	n.Incident.OpenedAt = started
	last := started
	n.Monitor.LastPingAt = &last
	next := time.Date(2026, 3, 15, 1, 0, 0, 0, time.UTC)
	n.Monitor.NextExpectedAt = &next
	n.SentAt = started.Add(time.Second)
	n.Run = &notifiers.Run{Seq: 44, RID: "run-44", StartedAt: &started, URL: "https://vigil.example.com/monitors/mon_7f3a#run-44"}
	n.Ping = &notifiers.Ping{ID: 9003, Kind: "start", At: started, RID: "run-44"}
	n.DeliveryID = "inc_01HZX3M4W6.21"
	return n
}

// TooOften is the 02:00 import run a second time at 13:00 the same day.
func TooOften() *notifiers.Notification {
	n := berlin(Opened())
	started := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	finished := started.Add(12400 * time.Millisecond)
	ms := int64(12400)
	n.Incident.Kind = notifiers.IncidentTooOften
	n.Incident.Summary = "nightly-import: a run started at 2026-03-14 13:00 Europe/Berlin succeeded, run 2 for its occurrence of 2026-03-14 02:00 Europe/Berlin; too_often allows one success an occurrence, besides retries"
	n.Incident.Details = ""
	n.Incident.OpenedAt = finished
	last := finished
	n.Monitor.LastPingAt = &last
	next := time.Date(2026, 3, 15, 1, 0, 0, 0, time.UTC)
	n.Monitor.NextExpectedAt = &next
	n.SentAt = finished.Add(time.Second)
	n.Run = &notifiers.Run{Seq: 45, RID: "run-45", StartedAt: &started, FinishedAt: &finished, Outcome: "success",
		DurationMS: &ms, URL: "https://vigil.example.com/monitors/mon_7f3a#run-45"}
	n.Ping = &notifiers.Ping{ID: 9004, Kind: "success", At: finished, RID: "run-45", DurationMS: &ms}
	n.DeliveryID = "inc_01HZX3M4W6.22"
	return n
}

// berlin gives n's monitor the schedule in words and the zone, as
// delivery does.
func berlin(n *notifiers.Notification) *notifiers.Notification {
	n.Monitor.ScheduleWords, n.Monitor.Zone = "at 02:00 every day, Europe/Berlin", "Europe/Berlin"
	return n
}

// Samples returns the samples by name, for golden tests: the three
// above and a run of each run rule (too fast, early, too often).
func Samples() map[string]*notifiers.Notification {
	return map[string]*notifiers.Notification{"failure": Failure(), "missed": Missed(), "stuck": Stuck(),
		"too_fast": TooFast(), "early": Early(), "too_often": TooOften()}
}

// Undeclared is the monitor.undeclared notice of nightly-import, which
// its source billing-service stopped declaring on a deploy, as
// monitors.Undeclare words it. It has no incident: its open one was
// closed, without a recovery notice.
func Undeclared() *notifiers.Notification {
	n := berlin(Notification(notifiers.EventMonitorUndeclared))
	at := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	n.Incident = notifiers.Incident{Summary: `nightly-import is no longer declared by source "billing-service" (last declared 2026-03-10 08:12 Europe/Berlin); it is kept, with its history, and watched again if declared again`}
	n.Monitor.Source, n.Monitor.Status = "billing-service", "undeclared"
	n.Monitor.NextExpectedAt = nil
	n.EventAt, n.SentAt = at, at.Add(2*time.Second)
	n.DeliveryID = "monitor-mon_7f3a.20"
	return n
}

// Redeclared is the monitor.redeclared notice that follows Undeclared when
// the next deploy declares nightly-import again.
func Redeclared() *notifiers.Notification {
	n := berlin(Notification(notifiers.EventMonitorRedeclared))
	at := time.Date(2026, 3, 14, 11, 0, 0, 0, time.UTC)
	n.Incident = notifiers.Incident{Summary: `nightly-import is declared again by source "billing-service" and watched again from 2026-03-14 12:00 Europe/Berlin`}
	n.Monitor.Source, n.Monitor.Status = "billing-service", "up"
	next := time.Date(2026, 3, 15, 1, 0, 0, 0, time.UTC)
	n.Monitor.NextExpectedAt = &next
	n.EventAt, n.SentAt = at, at.Add(2*time.Second)
	n.DeliveryID = "monitor-mon_7f3a.21"
	return n
}

// Late is the monitor.late warning of nightly-import, halfway through the
// grace of its 02:00 run, as monitors.ApplyTime words it.
func Late() *notifiers.Notification {
	n := berlin(Notification(notifiers.EventMonitorLate))
	at := ExpectedAt.Add(150 * time.Second)
	n.Incident = notifiers.Incident{Summary: "nightly-import is late: it did not run at 2026-03-14 02:00 Europe/Berlin; it is missed at 2026-03-14 02:05 Europe/Berlin (grace 5m) unless a ping comes first; last ping: success at 2026-03-13 02:00:07 Europe/Berlin (1d ago)"}
	n.Monitor.Status = "late"
	n.EventAt, n.SentAt = at, at.Add(time.Second)
	n.DeliveryID = "monitor-mon_7f3a.22"
	return n
}

// Flapping is the monitor.flapping notice of nightly-import.
func Flapping() *notifiers.Notification {
	n := berlin(Notification(notifiers.EventMonitorFlapping))
	at := time.Date(2026, 3, 14, 9, 40, 0, 0, time.UTC)
	n.Incident = notifiers.Incident{Summary: "nightly-import is flapping: more than 3 incidents opened and resolved within 1h; its incidents are recorded but not notified until none opens for 1h (now: open: failed since 2026-03-14 10:40 Europe/Berlin)"}
	n.EventAt, n.SentAt = at, at.Add(time.Second)
	n.DeliveryID = "monitor-mon_7f3a.23"
	return n
}

// Stable is the monitor.stable notice that follows Flapping.
func Stable() *notifiers.Notification {
	n := berlin(Notification(notifiers.EventMonitorStable))
	at := time.Date(2026, 3, 14, 11, 10, 0, 0, time.UTC)
	n.Incident = notifiers.Incident{Summary: "nightly-import is stable again: no incident opened for 1h (flapping since 2026-03-14 10:40 Europe/Berlin); its incidents are notified again (now: no incident open)"}
	n.Monitor.Status = "up"
	n.EventAt, n.SentAt = at, at.Add(time.Second)
	n.DeliveryID = "monitor-mon_7f3a.24"
	return n
}

// Grouped is the incidents.grouped message of three monitors of one
// project missed within 10 seconds of each other.
func Grouped() *notifiers.Notification {
	n := berlin(Notification(notifiers.EventGrouped))
	names := []string{"nightly-import", "billing-export", "db-backup"}
	for i, name := range names {
		g := berlin(Missed())
		g.Incident.ID = fmt.Sprintf("inc_01HZX3M4W%d", 6+i)
		g.Incident.OpenedAt = OpenedAt.Add(time.Duration(i) * 5 * time.Second)
		g.Incident.Summary = name + " did not run at 02:00 Europe/Berlin (grace 5m); last ping: success at 2026-03-13 02:00 Europe/Berlin (1d ago)"
		g.Monitor.ID, g.Monitor.Name, g.Monitor.Slug = fmt.Sprintf("mon_7f3%c", 'a'+i), name, name
		g.Monitor.URL = "https://vigil.example.com/monitors/" + g.Monitor.ID
		n.Group = append(n.Group, notifiers.GroupItem{Incident: g.Incident, Monitor: g.Monitor})
	}
	n.Incident, n.Monitor = n.Group[0].Incident, n.Group[0].Monitor
	n.SentAt = OpenedAt.Add(30 * time.Second)
	n.DeliveryID = "inc_01HZX3M4W6.25"
	return n
}

// MonitorEventSamples returns the monitor events ("undeclared",
// "redeclared", "late", "flapping", "stable") and a grouped message of
// incidents ("grouped") by name, for the golden tests of the kinds that
// carry them (all but PagerDuty and Opsgenie, which page).
func MonitorEventSamples() map[string]*notifiers.Notification {
	return map[string]*notifiers.Notification{"undeclared": Undeclared(), "redeclared": Redeclared(),
		"late": Late(), "flapping": Flapping(), "stable": Stable(), "grouped": Grouped()}
}

// WeeklyReport is the report.weekly of project "Billing & Ops" for the
// week of 23-29 Nov 2026: two monitors with incidents (one of them with a
// name to escape), the slowest and most retried jobs, and one of twelve
// monitors that never pinged (the list shows one, the total says 12).
func WeeklyReport() *notifiers.Notification {
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 7)
	url := func(id string) string { return "https://vigil.example.com/monitors/" + id }
	nightly := notifiers.ReportMonitor{ID: "mon_7f3a", Name: "nightly-import", Slug: "nightly-import", URL: url("mon_7f3a"),
		CreatedAt: time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC), Occurrences: 7, OnTime: 5,
		Incidents: []notifiers.ReportIncidents{{Kind: notifiers.IncidentMissed, Count: 1, Duration: 23*time.Hour + 55*time.Minute},
			{Kind: notifiers.IncidentFailed, Count: 1, Duration: 24*time.Hour + 55*time.Second}},
		Runs: 5, RunP50: 30 * time.Second, RunP95: time.Minute, Retries: 1}
	odd := notifiers.ReportMonitor{ID: "mon_b2", Name: "<b>reports</b> & exports", Slug: "reports-exports", URL: url("mon_b2"),
		CreatedAt: time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC), Occurrences: 2, OnTime: 1,
		Incidents: []notifiers.ReportIncidents{{Kind: notifiers.IncidentFailed, Count: 1, Duration: 3*time.Hour + 59*time.Minute + 30*time.Second}},
		Runs:      1, RunP50: 2 * time.Minute, RunP95: 2 * time.Minute}
	fast := notifiers.ReportMonitor{ID: "mon_c3", Name: "cache-warm", Slug: "cache-warm", URL: url("mon_c3"),
		CreatedAt: time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC), Occurrences: 168, OnTime: 168, Incidents: []notifiers.ReportIncidents{},
		Runs: 168, RunP50: 420 * time.Millisecond, RunP95: 850 * time.Millisecond, Retries: 3}
	quiet := notifiers.ReportMonitor{ID: "mon_d4", Name: "", Slug: "quarterly-close", URL: url("mon_d4"),
		CreatedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Incidents: []notifiers.ReportIncidents{}}
	return &notifiers.Notification{
		Event:      notifiers.EventReportWeekly,
		SentAt:     end.Add(40 * time.Second),
		EventAt:    end.Add(30 * time.Second),
		BaseURL:    "https://vigil.example.com",
		DeliveryID: "report-ch_1.weekly.2026-11-23.31",
		Report: &notifiers.Report{ID: "ch_1.weekly.2026-11-23", Period: "weekly", Start: start, End: end, Zone: "UTC",
			ProjectName: "Billing & Ops", URL: "https://vigil.example.com/", Monitors: 15, Occurrences: 177, OnTime: 174,
			Incidents: []notifiers.ReportIncidents{{Kind: notifiers.IncidentMissed, Count: 1, Duration: 23*time.Hour + 55*time.Minute},
				{Kind: notifiers.IncidentFailed, Count: 2, Duration: 28*time.Hour + 25*time.Second}},
			WithIncidents: []notifiers.ReportMonitor{nightly, odd}, WithIncidentsTotal: 2,
			Slowest:     []notifiers.ReportMonitor{odd, nightly, fast},
			MostRetried: []notifiers.ReportMonitor{fast, nightly},
			NeverPinged: []notifiers.ReportMonitor{quiet}, NeverPingedTotal: 12},
	}
}

// MonthlyReport is the report.monthly of a quiet month: no incidents, no
// runs with durations, nothing retried, every monitor pinged.
func MonthlyReport() *notifiers.Notification {
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	return &notifiers.Notification{
		Event:      notifiers.EventReportMonthly,
		SentAt:     end.Add(40 * time.Second),
		EventAt:    end.Add(30 * time.Second),
		BaseURL:    "https://vigil.example.com",
		DeliveryID: "report-ch_2.monthly.2026-11-01.32",
		Report: &notifiers.Report{ID: "ch_2.monthly.2026-11-01", Period: "monthly", Start: start, End: end, Zone: "UTC",
			ProjectName: "Quiet", URL: "https://vigil.example.com/", Monitors: 1, Occurrences: 30, OnTime: 30,
			Incidents: []notifiers.ReportIncidents{}, WithIncidents: []notifiers.ReportMonitor{},
			Slowest: []notifiers.ReportMonitor{}, MostRetried: []notifiers.ReportMonitor{}, NeverPinged: []notifiers.ReportMonitor{}},
	}
}

// ReportSamples returns the two reports by name ("report-weekly",
// "report-monthly"), for the golden tests of the kinds that carry them
// (email, Slack, webhook).
func ReportSamples() map[string]*notifiers.Notification {
	return map[string]*notifiers.Notification{"report-weekly": WeeklyReport(), "report-monthly": MonthlyReport()}
}

// GoldenReports is [GoldenSamples] for [ReportSamples].
func GoldenReports(t *testing.T, send func(t *testing.T, url string, n *notifiers.Notification) error) {
	t.Helper()
	goldenRequests(t, ReportSamples(), send)
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Golden compares got with the file testdata/name of the test's package,
// or, with go test -update, writes it there.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test with -update to create %s", path)
	require.Equal(t, string(want), string(got), "differs from %s (go test -update rewrites it)", path)
}

// GoldenJSON is Golden for a JSON body, indented.
func GoldenJSON(t testing.TB, name string, body []byte) {
	t.Helper()
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, body, "", "  "))
	indented.WriteByte('\n')
	Golden(t, name, indented.Bytes())
}

// GoldenSamples sends each of [Samples] with send (to a fresh receiver
// at url) and compares the request with testdata/{name}.json (a JSON body,
// indented) or testdata/{name}.txt (the headers a kind sets, then the
// body).
func GoldenSamples(t *testing.T, send func(t *testing.T, url string, n *notifiers.Notification) error) {
	t.Helper()
	goldenRequests(t, Samples(), send)
}

// GoldenMonitorEvents is [GoldenSamples] for [MonitorEventSamples].
func GoldenMonitorEvents(t *testing.T, send func(t *testing.T, url string, n *notifiers.Notification) error) {
	t.Helper()
	goldenRequests(t, MonitorEventSamples(), send)
}

func goldenRequests(t *testing.T, samples map[string]*notifiers.Notification, send func(t *testing.T, url string, n *notifiers.Notification) error) {
	t.Helper()
	for name, n := range samples {
		t.Run(name, func(t *testing.T) {
			recv := NewReceiver(t, nil)
			require.NoError(t, send(t, recv.URL, n))
			req := recv.Only(t)
			if json.Valid(req.Body) {
				GoldenJSON(t, name+".json", req.Body)
				return
			}
			var b strings.Builder
			for _, k := range slices.Sorted(maps.Keys(req.Header)) {
				switch k {
				case "Accept-Encoding", "Content-Length", "User-Agent", "Authorization":
					continue
				}
				fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(req.Header[k], ", "))
			}
			b.WriteString("\n")
			b.Write(req.Body)
			b.WriteString("\n")
			Golden(t, name+".txt", []byte(b.String()))
		})
	}
}

// HTTPClient returns a client from notifiers.NewHTTPClient that may reach
// loopback (httptest servers), and closes its idle connections when the
// test ends.
func HTTPClient(t testing.TB) *http.Client {
	t.Helper()
	c := notifiers.NewHTTPClient(notifiers.HTTPClientOptions{AllowPrivate: true, Timeout: 10 * time.Second})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// Request is one request a [Receiver] got.
type Request struct {
	Method string
	Path   string
	// RawPath is the escaped path as sent.
	RawPath string
	Query   url.Values
	Header  http.Header
	Body    []byte
}

// Receiver is an httptest server that records every request and answers
// with its Handler (200 and an empty body when nil).
type Receiver struct {
	*httptest.Server

	mu       sync.Mutex
	requests []Request
	handler  http.HandlerFunc
}

// NewReceiver starts a recording server that answers with handler (nil
// answers 200) and closes it when the test ends.
func NewReceiver(t testing.TB, handler http.HandlerFunc) *Receiver {
	t.Helper()
	r := &Receiver{handler: handler}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.requests = append(r.requests, Request{
		Method:  req.Method,
		Path:    req.URL.Path,
		RawPath: req.URL.EscapedPath(),
		Query:   req.URL.Query(),
		Header:  req.Header.Clone(),
		Body:    body,
	})
	handler := r.handler
	r.mu.Unlock()
	if handler == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	handler(w, req)
}

// Requests returns the requests received so far.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Request(nil), r.requests...)
}

// Only returns the single request received, failing the test when there
// was not exactly one.
func (r *Receiver) Only(t testing.TB) Request {
	t.Helper()
	reqs := r.Requests()
	require.Len(t, reqs, 1, "requests received")
	return reqs[0]
}

// AssertNoSecretLeak fails the test when the text of err, or of any error
// in its chain, contains one of the secrets (as is, URL-escaped, or
// query-escaped).
func AssertNoSecretLeak(t testing.TB, err error, secrets ...string) {
	t.Helper()
	for _, text := range chainTexts(err) {
		for _, secret := range secrets {
			if secret == "" {
				continue
			}
			for _, form := range []string{secret, url.PathEscape(secret), url.QueryEscape(secret)} {
				require.NotContains(t, text, form, "error text leaks a secret")
			}
		}
	}
}

// chainTexts returns the Error() text and the %+v and %#v renderings of
// every error in err's tree.
func chainTexts(err error) []string {
	var texts []string
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		texts = append(texts, e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, inner := range u.Unwrap() {
				walk(inner)
			}
		}
	}
	walk(err)
	return texts
}

// Outcome is how an attempt's error is classified.
type Outcome int

// The three outcomes of an attempt.
const (
	OK Outcome = iota
	Retry
	Fail // permanent
)

func (o Outcome) String() string {
	switch o {
	case OK:
		return "ok"
	case Retry:
		return "retry"
	}
	return "permanent"
}

// OutcomeOf classifies err.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OK
	case notifiers.IsPermanent(err):
		return Fail
	}
	return Retry
}

// StatusCase is one row of the status table: an answer and how it must be
// classified.
type StatusCase struct {
	Status int
	// Header is added to the answer (Retry-After, Date).
	Header http.Header
	Body   string
	Want   Outcome
	// HasRetryAfter says that RetryAfter must report a wait, and
	// WantRetryAfter is that wait.
	WantRetryAfter time.Duration
	HasRetryAfter  bool
}

// Name describes the case for t.Run.
func (c StatusCase) Name() string {
	name := fmt.Sprintf("%d_%s", c.Status, strings.ReplaceAll(http.StatusText(c.Status), " ", ""))
	if ra := c.Header.Get("Retry-After"); ra != "" {
		name += "_RetryAfter_" + strings.NewReplacer(" ", "", ",", "", ":", "").Replace(ra)
	}
	return name
}

// StatusTable returns one case for every status constant of net/http, plus
// the Retry-After variants of 429 and 503.
func StatusTable() []StatusCase {
	codes := map[Outcome][]int{
		Fail: {
			http.StatusContinue, http.StatusSwitchingProtocols, http.StatusProcessing, http.StatusEarlyHints,
			http.StatusMultipleChoices, http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
			http.StatusNotModified, http.StatusUseProxy, http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
			http.StatusBadRequest, http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden,
			http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable,
			http.StatusProxyAuthRequired, http.StatusConflict, http.StatusGone, http.StatusLengthRequired,
			http.StatusPreconditionFailed, http.StatusRequestEntityTooLarge, http.StatusRequestURITooLong,
			http.StatusUnsupportedMediaType, http.StatusRequestedRangeNotSatisfiable,
			http.StatusExpectationFailed, http.StatusTeapot, http.StatusMisdirectedRequest,
			http.StatusUnprocessableEntity, http.StatusLocked, http.StatusFailedDependency, http.StatusTooEarly,
			http.StatusUpgradeRequired, http.StatusPreconditionRequired,
			http.StatusRequestHeaderFieldsTooLarge, http.StatusUnavailableForLegalReasons,
		},
		Retry: {
			http.StatusRequestTimeout, http.StatusTooManyRequests,
			http.StatusInternalServerError, http.StatusNotImplemented, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusHTTPVersionNotSupported,
			http.StatusVariantAlsoNegotiates, http.StatusInsufficientStorage, http.StatusLoopDetected,
			http.StatusNotExtended, http.StatusNetworkAuthenticationRequired,
		},
		OK: {
			http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNonAuthoritativeInfo,
			http.StatusNoContent, http.StatusResetContent, http.StatusPartialContent, http.StatusMultiStatus,
			http.StatusAlreadyReported, http.StatusIMUsed,
		},
	}
	var cases []StatusCase
	for _, outcome := range []Outcome{OK, Retry, Fail} {
		for _, code := range codes[outcome] {
			c := StatusCase{Status: code, Want: outcome}
			if outcome != OK {
				c.Body = `{"error":"something went wrong"}`
			}
			cases = append(cases, c)
		}
	}
	date := time.Date(2026, 3, 14, 1, 5, 0, 0, time.UTC)
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		cases = append(cases,
			StatusCase{Status: code, Want: Retry, Header: http.Header{"Retry-After": {"120"}},
				HasRetryAfter: true, WantRetryAfter: 2 * time.Minute},
			StatusCase{Status: code, Want: Retry, Header: http.Header{
				"Retry-After": {date.Add(90 * time.Second).Format(http.TimeFormat)},
				"Date":        {date.Format(http.TimeFormat)},
			}, HasRetryAfter: true, WantRetryAfter: 90 * time.Second},
		)
	}
	return cases
}

// RunClassifyHTTP checks classify (notifiers.ClassifyHTTP, normally)
// against every case, with answers built in memory, so that 1xx statuses
// that no real server can send as a final answer are covered too.
func RunClassifyHTTP(t *testing.T, cases []StatusCase, classify func(*http.Response) error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{
				StatusCode: c.Status,
				Status:     fmt.Sprintf("%d %s", c.Status, http.StatusText(c.Status)),
				Header:     c.Header.Clone(),
				Body:       io.NopCloser(strings.NewReader(c.Body)),
			}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			err := classify(resp)
			checkOutcome(t, c, err)
			if err != nil {
				require.Contains(t, err.Error(), fmt.Sprint(c.Status), "error names the status")
				var status *notifiers.HTTPStatusError
				require.ErrorAs(t, err, &status)
				require.Equal(t, c.Status, status.StatusCode)
			}
		})
	}
}

// RunNotifierStatusTable sends n through the notifier returned by
// newNotifier (pointed at a server that answers each case's status) and
// checks the outcome. 1xx cases are skipped: a server cannot send them as a
// final answer. secrets must not appear in any error.
func RunNotifierStatusTable(t *testing.T, cases []StatusCase, n *notifiers.Notification,
	newNotifier func(t *testing.T, serverURL string) notifiers.Notifier, secrets ...string,
) {
	t.Helper()
	for _, c := range cases {
		if c.Status < 200 {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			t.Parallel()
			recv := NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, vs := range c.Header {
					w.Header()[k] = vs
				}
				w.WriteHeader(c.Status)
				_, _ = io.WriteString(w, c.Body)
			})
			err := newNotifier(t, recv.URL).Notify(context.Background(), n)
			checkOutcome(t, c, err)
			AssertNoSecretLeak(t, err, secrets...)
		})
	}
}

func checkOutcome(t *testing.T, c StatusCase, err error) {
	t.Helper()
	require.Equal(t, c.Want.String(), OutcomeOf(err).String(), "outcome of %d: %v", c.Status, err)
	after, ok := notifiers.RetryAfter(err)
	require.Equal(t, c.HasRetryAfter, ok, "RetryAfter reported: %v", err)
	if c.HasRetryAfter {
		require.Equal(t, c.WantRetryAfter, after)
	}
}
