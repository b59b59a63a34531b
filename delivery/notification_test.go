package delivery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
)

func TestNewNotification(t *testing.T) {
	t.Parallel()
	opened := T0
	resolved := T0.Add(12 * time.Minute)
	lastPing := T0.Add(-23 * time.Hour)
	in := &monitors.Incident{ID: "inc_1", MonitorID: "mon 1", Kind: monitors.IncidentMissed, OpenedAt: opened,
		ResolvedAt: &resolved, Summary: "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)"}
	m := &monitors.Monitor{ID: "mon 1", Name: "Nightly import", Slug: "nightly-import", Tags: []string{"etl"},
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin"},
		State:    monitors.State{Status: monitors.StatusUp, LastPingAt: lastPing}}
	d := &monitors.Delivery{ID: 7, IncidentID: "inc_1", Event: monitors.EventResolved, Summary: "nightly-import ran again"}

	n := delivery.NewNotification(d, in, m, delivery.IncidentFacts{}, resolved.Add(time.Second), baseURL+"/")
	require.NoError(t, n.Validate())
	require.Equal(t, &notifiers.Notification{
		Event: notifiers.EventResolved,
		Incident: notifiers.Incident{ID: "inc_1", Kind: notifiers.IncidentMissed, OpenedAt: opened, ResolvedAt: &resolved,
			Summary: "nightly-import ran again", Details: "Incident: " + in.Summary},
		Monitor: notifiers.Monitor{ID: "mon 1", Name: "Nightly import", Slug: "nightly-import", Status: "up",
			Tags: []string{"etl"}, URL: baseURL + "/monitors/mon%201", Schedule: "0 2 * * * (Europe/Berlin)",
			ScheduleWords: "at 02:00 every day, Europe/Berlin", Zone: "Europe/Berlin", LastPingAt: &lastPing},
		SentAt:     resolved.Add(time.Second),
		BaseURL:    baseURL,
		DeliveryID: "inc_1.7",
	}, n)
	require.Equal(t, "UP Nightly import: recovered after 12m", n.Headline())
	require.Equal(t, "inc_1", n.DedupKey())

	// An opening carries the incident's own summary, and the expected time.
	expected := T0.Add(time.Hour)
	m.State = monitors.State{Status: monitors.StatusDown, Expected: expected}
	n = delivery.NewNotification(&monitors.Delivery{Event: monitors.EventOpened, Summary: in.Summary}, in, m, delivery.IncidentFacts{}, T0, baseURL)
	require.Equal(t, in.Summary, n.Incident.Summary)
	require.Empty(t, n.Incident.Details)
	require.Equal(t, "down", n.Monitor.Status)
	require.Equal(t, &expected, n.Monitor.NextExpectedAt)
	require.Nil(t, n.Monitor.LastPingAt)
	require.Equal(t, "DOWN Nightly import: missed", n.Headline())
}

// TestNewNotificationOfFailure: the failing run and ping go in, the ping's
// body only while the monitor's notify_output is on.
func TestNewNotificationOfFailure(t *testing.T) {
	t.Parallel()
	code, ms := 3, int64(1500)
	started := T0.Add(-1500 * time.Millisecond)
	in := &monitors.Incident{ID: "inc_1", MonitorID: "mon_1", Kind: monitors.IncidentFailed, OpenedAt: T0,
		Summary: "job failed", RunSeq: 5, PingID: 77}
	m := &monitors.Monitor{ID: "mon_1", Name: "job", Slug: "job",
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}}
	facts := delivery.IncidentFacts{
		Run: &monitors.Run{MonitorID: "mon_1", Seq: 5, RID: "r5", StartedAt: &started, FinishedAt: &T0,
			Outcome: monitors.RunFailed, DurationMS: &ms, Attempt: 2, ExitCode: &code},
		Ping: &monitors.Ping{ID: 77, Kind: monitors.PingFail, At: T0, RID: "r5", Attempt: 2, ExitCode: &code,
			DurationMS: &ms, Body: "boom: disk full\n", BodyTruncated: true},
	}
	d := &monitors.Delivery{ID: 3, IncidentID: "inc_1", Event: monitors.EventOpened, Summary: "job failed"}
	n := delivery.NewNotification(d, in, m, facts, T0, baseURL)
	require.Equal(t, &notifiers.Run{Seq: 5, RID: "r5", StartedAt: &started, FinishedAt: &T0, Outcome: "fail",
		DurationMS: &ms, Attempt: 2, ExitCode: &code, URL: baseURL + "/monitors/mon_1#run-5"}, n.Run)
	require.Equal(t, &notifiers.Ping{ID: 77, Kind: "fail", At: T0, RID: "r5", Attempt: 2, ExitCode: &code,
		DurationMS: &ms, Body: "boom: disk full\n", BodyTruncated: true}, n.Ping)
	require.Equal(t, "every 1 hour, counted from the last ping", n.Monitor.ScheduleWords)
	require.Equal(t, "DOWN job: failed after 2 attempts", n.Headline())
	out, cut := n.OutputTail(20, 2000)
	require.Equal(t, "boom: disk full", out)
	require.True(t, cut, "ingest cut the body")

	m.HideOutput = true
	n = delivery.NewNotification(d, in, m, facts, T0, baseURL)
	require.Empty(t, n.Ping.Body, "notify_output: false")
	require.False(t, n.Ping.BodyTruncated)
	require.Equal(t, &code, n.Ping.ExitCode, "the rest of the ping stays")
	out, _ = n.OutputTail(20, 2000)
	require.Empty(t, out)
}
