package plan

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func TestRoute(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	targets := &Targets{
		Monitors: map[string]MonitorTarget{
			"m-default": {ProjectID: "p1"},
			"m-own":     {ProjectID: "p1", Channels: []string{"c-b", "c-gone", "c-other-project"}},
		},
		Channels: map[string][]ChannelTarget{
			"p1": {{ID: "c-b"}, {ID: "c-a", IsDefault: true}, {ID: "c-d", IsDefault: true}},
			"p2": {{ID: "c-other-project"}},
		},
		Pending: map[string]map[string]bool{"i-busy": {"c-d": true}},
	}
	ev := func(id int64, monitor, incident string, kind monitors.IncidentEventKind) *monitors.IncidentEvent {
		return &monitors.IncidentEvent{ID: id, IncidentID: incident, MonitorID: monitor, ProjectID: "p1", Kind: kind,
			At: at, Summary: "s"}
	}
	type routed struct {
		event   int64
		channel string
	}
	var got []routed
	for _, d := range Route([]*monitors.IncidentEvent{
		ev(3, "m-default", "i-busy", monitors.EventReminder), // c-d is still busy with it
		ev(1, "m-default", "i-1", monitors.EventOpened),
		ev(2, "m-own", "i-2", monitors.EventOpened), // its own channels only, of its project, that exist
		ev(4, "m-unknown", "i-4", monitors.EventOpened),
		ev(5, "m-default", "i-busy", monitors.EventResolved), // not a reminder: sent even behind a pending one
	}, targets) {
		require.Equal(t, monitors.DeliveryPending, d.State)
		require.Equal(t, at, d.EventAt)
		require.Equal(t, at, *d.NextAttemptAt)
		got = append(got, routed{d.EventID, d.ChannelID})
	}
	require.Equal(t, []routed{{1, "c-a"}, {1, "c-d"}, {2, "c-b"}, {3, "c-a"}, {5, "c-a"}, {5, "c-d"}}, got)
}

func TestBuilder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	m := &monitors.Monitor{ID: "m1", ProjectID: "p1", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60},
		GraceSeconds: 30, State: monitors.State{Status: monitors.StatusUp, Expected: at}}
	other := &monitors.Monitor{ID: "m2", ProjectID: "p1"}
	var b builder
	run := func(seq int64, outcome monitors.RunOutcome) monitors.RunChange {
		return monitors.RunChange{Run: monitors.Run{Seq: seq, Outcome: outcome}}
	}
	open := monitors.IncidentChange{Op: monitors.IncidentOpen, Kind: monitors.IncidentMissed, At: at}
	ping := &monitors.Ping{ID: 7}
	require.NoError(t, b.change(m, &monitors.Transition{Runs: []monitors.RunChange{run(1, "")}}, ping, true))
	require.NoError(t, b.change(m, &monitors.Transition{Runs: []monitors.RunChange{run(1, monitors.RunSucceeded), run(2, "")}}, nil, true))
	require.NoError(t, b.change(other, &monitors.Transition{Incidents: []monitors.IncidentChange{open}}, nil, true))
	require.NoError(t, b.change(m, &monitors.Transition{Incidents: []monitors.IncidentChange{
		{Op: monitors.IncidentResolve, Kind: monitors.IncidentMissed, At: at}, open}}, ping, true))
	require.Error(t, b.change(m, &monitors.Transition{Incidents: []monitors.IncidentChange{{Op: "close"}}}, nil, false))
	w := b.done()

	require.Equal(t, []*monitors.Monitor{m, other}, w.Monitors, "each monitor once, in order")
	require.Equal(t, m.NextDeadline(), m.NextDeadlineAt, "the deadline is derived from the state")
	require.Len(t, w.Runs, 2)
	require.Equal(t, monitors.RunSucceeded, w.Runs[0].Outcome, "the last change of a run wins")
	require.Equal(t, "m1", w.Runs[1].MonitorID)
	require.Len(t, w.Opens, 1, "a transition of opens only may be written with the claim's others")
	require.NotEmpty(t, w.Opens[0].ID)
	require.Equal(t, "m2", w.Opens[0].MonitorID)
	require.Len(t, w.Incidents, 2, "a resolve and a reopen keep their order")
	require.Equal(t, monitors.IncidentResolve, w.Incidents[0].Change.Op)
	require.Equal(t, int64(7), w.Incidents[1].PingID())
	require.NotEqual(t, w.Opens[0].ID, w.Incidents[1].ID)
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) *time.Time { t := now.Add(-d); return &t }
	for _, tc := range []struct {
		name   string
		prev   *time.Time
		stamp  time.Time
		outage bool
	}{
		{"first pass", nil, now, false},
		{"within the threshold", ago(30 * time.Second), now, false},
		{"at the threshold", ago(time.Minute), now, false},
		{"past it", ago(time.Minute + time.Millisecond), now, true},
		{"a replica's clock ahead", ago(-5 * time.Second), now.Add(5 * time.Second), false},
	} {
		stamp, outage := Heartbeat(tc.prev, now, time.Minute)
		require.Equal(t, tc.stamp, stamp, tc.name)
		require.Equal(t, tc.outage, outage, tc.name)
	}
}

func TestAttemptEffect(t *testing.T) {
	t.Parallel()
	fin := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	next := fin.Add(time.Minute)
	for _, tc := range []struct {
		p        monitors.DeliveryAttemptRecordParams
		state    monitors.DeliveryState
		next     *time.Time
		finished *time.Time
		err      string
	}{
		{p: monitors.DeliveryAttemptRecordParams{Outcome: monitors.AttemptSuccess, FinishedAt: fin}, state: monitors.DeliverySent, finished: &fin},
		{p: monitors.DeliveryAttemptRecordParams{Outcome: monitors.AttemptFailed, FinishedAt: fin}, state: monitors.DeliveryFailed, finished: &fin},
		{p: monitors.DeliveryAttemptRecordParams{Outcome: monitors.AttemptRetry, FinishedAt: fin, NextAttemptAt: &next}, state: monitors.DeliveryPending, next: &next},
		{p: monitors.DeliveryAttemptRecordParams{Outcome: monitors.AttemptRetry}, err: "needs the time of the next attempt"},
		{p: monitors.DeliveryAttemptRecordParams{Outcome: "maybe"}, err: `unknown outcome "maybe"`},
	} {
		state, n, f, err := AttemptEffect(&tc.p)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.state, state)
		require.Equal(t, tc.next, n)
		require.Equal(t, tc.finished, f)
	}
}

func TestAttemptErrorText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "refused \uFFFD", AttemptErrorText("refused \x00"))
	long := AttemptErrorText(strings.Repeat("é", monitors.DeliveryErrorMax+10))
	require.Equal(t, monitors.DeliveryErrorMax, utf8.RuneCountInString(long))
	require.True(t, strings.HasSuffix(long, "…"))
	exact := strings.Repeat("x", monitors.DeliveryErrorMax)
	require.Equal(t, exact, AttemptErrorText(exact))
}

func TestCleanPing(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	retry := at.Add(time.Minute)
	code, dur := 3, int64(40)
	p := monitors.Ping{At: at, RetryAt: &retry, RID: "a\x00b", Body: "ok \xff", RemoteAddr: "1.2.3.4", UserAgent: "curl",
		ExitCode: &code, DurationMS: &dur}
	c := CleanPing(p)
	require.Equal(t, time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC), c.At)
	require.Equal(t, time.UTC, c.RetryAt.Location())
	require.Equal(t, "a\uFFFDb", c.RID)
	require.Equal(t, "ok \uFFFD", c.Body)
	code, dur = 9, 9
	require.Equal(t, 3, *c.ExitCode, "its own copies")
	require.Equal(t, int64(40), *c.DurationMS)
}

func TestNewPingMonitor(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	_, err := NewPingMonitor("p1", "job", &monitors.PingRecordParams{Ping: monitors.Ping{At: at}})
	require.ErrorContains(t, err, "no NewMonitor given")

	nm := &monitors.Monitor{ID: "m1", PingKey: "k", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60}}
	nm.ApplyDefaults()
	m, err := NewPingMonitor("p1", "job", &monitors.PingRecordParams{NewMonitor: nm, Ping: monitors.Ping{At: at}})
	require.NoError(t, err)
	require.Equal(t, "job", m.Name, "named after its slug")
	require.Equal(t, "p1", m.ProjectID)
	require.Equal(t, at, m.CreatedAt)
	require.Equal(t, at, m.UpdatedAt)
	require.Empty(t, nm.Slug, "the template is not changed")

	bad := *nm
	bad.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 0 30 2 *"}
	_, err = NewPingMonitor("p1", "job", &monitors.PingRecordParams{NewMonitor: &bad, Ping: monitors.Ping{At: at}})
	require.ErrorContains(t, err, `create monitor "job"`)
}
