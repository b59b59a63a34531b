package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runEvaluator runs the tests of the evaluator's heartbeat and outages.
func runEvaluator(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"Heartbeat/Stamps", testHeartbeatStamps},
		{"Heartbeat/OutagePostponesAndSettles", testHeartbeatOutage},
		{"Heartbeat/ExtendsUnsettledOutage", testHeartbeatExtends},
		{"Heartbeat/SettlesAtOnceWhenNothingIsDue", testHeartbeatNothingDue},
		{"Heartbeat/ConcurrentDetectOnce", testHeartbeatConcurrent},
		{"Outage/List", testOutageList},
		{"EvaluateDue/DeliversItsIncidents", testEvaluateDelivers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
}

func (b *bundle) heartbeat(t *testing.T, now time.Time) *monitors.EvaluatorHeartbeat {
	t.Helper()
	hb, err := b.s.EvaluatorHeartbeat(b.ctx, &monitors.EvaluatorHeartbeatParams{Now: now, Threshold: time.Minute})
	require.NoError(t, err)
	return hb
}

func (b *bundle) outages(t *testing.T, p monitors.OutageListParams) []*monitors.Outage {
	t.Helper()
	os, err := b.s.OutageList(b.ctx, &p)
	require.NoError(t, err)
	return os
}

func testHeartbeatStamps(t *testing.T, b *bundle) {
	hb := b.heartbeat(t, T0)
	require.Equal(t, &monitors.EvaluatorHeartbeat{}, hb, "the first pass ever: nothing before it")
	require.Equal(t, monitors.TimeOptions{}, hb.TimeOptions())

	hb = b.heartbeat(t, T0.Add(time.Minute))
	require.Equal(t, &monitors.EvaluatorHeartbeat{Previous: ptr(T0)}, hb, "a gap of exactly the threshold is no outage")

	// A replica whose clock is behind does not move the stamp back.
	hb = b.heartbeat(t, T0.Add(50*time.Second))
	require.Equal(t, ptr(T0.Add(time.Minute)), hb.Previous)
	hb = b.heartbeat(t, T0.Add(70*time.Second))
	require.Equal(t, ptr(T0.Add(time.Minute)), hb.Previous)
	require.Empty(t, b.outages(t, monitors.OutageListParams{}))

	_, err := b.s.EvaluatorHeartbeat(b.ctx, &monitors.EvaluatorHeartbeatParams{Now: T0})
	require.Error(t, err, "a threshold is required")
}

func testHeartbeatOutage(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)           // due at T0+1h5m
	early := b.monitor(t, "early", nil)     // due at T0+35m, before the gap
	running := b.monitor(t, "running", nil) // a run stuck inside the gap
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, T0), Ping(early, monitors.PingSuccess, T0.Add(-30*time.Minute)),
		Ping(running, monitors.PingStart, T0.Add(50*time.Minute)))
	require.Len(t, b.evaluate(t, T0.Add(40*time.Minute), 10, monitors.TimeOptions{}), 1, "early was due before the gap")
	require.Nil(t, b.heartbeat(t, T0.Add(40*time.Minute)).Outage)

	// No pass from T0+40m to T0+2h.
	end := T0.Add(2 * time.Hour)
	hb := b.heartbeat(t, end)
	require.True(t, hb.Detected)
	require.False(t, hb.Settled, "two monitors are still due inside the gap")
	require.Equal(t, ptr(T0.Add(40*time.Minute)), hb.Previous)
	require.NotNil(t, hb.Outage)
	require.Equal(t, T0.Add(40*time.Minute), hb.Outage.StartedAt)
	require.Equal(t, end, hb.Outage.EndedAt)
	require.Equal(t, 80*time.Minute, hb.Outage.Duration())
	require.Nil(t, hb.Outage.SettledAt)
	opts := hb.TimeOptions()
	require.Equal(t, monitors.TimeOptions{OutageStart: T0.Add(40 * time.Minute), OutageEnd: end}, opts)

	// Every pass until it settles gets the outage, detected or not.
	hb = b.heartbeat(t, end.Add(time.Second))
	require.False(t, hb.Detected)
	require.False(t, hb.Settled)
	require.Equal(t, opts, hb.TimeOptions())

	ev := b.evaluate(t, end.Add(time.Second), 1, opts)
	require.Len(t, ev, 1)
	require.Empty(t, ev[0].Transition.Incidents)
	hb = b.heartbeat(t, end.Add(2*time.Second))
	require.False(t, hb.Settled, "one monitor is still due inside the gap")
	require.Equal(t, int64(1), hb.Outage.MonitorsPostponed)

	ev = b.evaluate(t, end.Add(2*time.Second), 10, opts)
	require.Len(t, ev, 1)
	require.Empty(t, ev[0].Transition.Incidents)
	require.Len(t, b.incidents(t, monitors.IncidentListParams{}), 1, "no alert for deadlines inside the gap, only early's")

	hb = b.heartbeat(t, end.Add(3*time.Second))
	require.True(t, hb.Settled)
	require.False(t, hb.Detected)
	require.Equal(t, int64(2), hb.Outage.MonitorsPostponed)
	require.Equal(t, ptr(end.Add(3*time.Second)), hb.Outage.SettledAt)
	require.Equal(t, monitors.TimeOptions{}, hb.TimeOptions(), "settled: claims go on without it")
	require.Nil(t, b.heartbeat(t, end.Add(4*time.Second)).Outage)

	// Claims with the options of a settled outage postpone nothing more.
	require.Empty(t, b.evaluate(t, end.Add(4*time.Second), 10, opts))

	require.Equal(t, []*monitors.Outage{hb.Outage}, b.outages(t, monitors.OutageListParams{}))

	// After the fresh grace window (5 minutes from the end), the alerts
	// come if no ping did.
	ev = b.evaluate(t, end.Add(5*time.Minute+time.Microsecond), 10, monitors.TimeOptions{})
	require.Len(t, ev, 2)
	var kinds []string
	for _, in := range b.incidents(t, monitors.IncidentListParams{MonitorID: running.ID}) {
		kinds = append(kinds, string(in.Kind))
	}
	require.ElementsMatch(t, []string{"missed", "stuck"}, kinds)
	require.Len(t, b.incidents(t, monitors.IncidentListParams{MonitorID: m.ID}), 1)
}

func testHeartbeatExtends(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, T0))
	b.heartbeat(t, T0)
	first := b.heartbeat(t, T0.Add(2*time.Hour))
	require.True(t, first.Detected)
	require.False(t, first.Settled)

	// Down again before any claim settled it: one outage, extended.
	again := b.heartbeat(t, T0.Add(3*time.Hour))
	require.True(t, again.Detected)
	require.Equal(t, first.Outage.ID, again.Outage.ID)
	require.Equal(t, T0, again.Outage.StartedAt)
	require.Equal(t, T0.Add(3*time.Hour), again.Outage.EndedAt)

	// A monitor held by the first part is postponed again, and counted
	// once.
	ev := b.evaluate(t, T0.Add(2*time.Hour), 10, first.TimeOptions())
	require.Len(t, ev, 1)
	ev = b.evaluate(t, T0.Add(3*time.Hour), 10, again.TimeOptions())
	require.Len(t, ev, 1, "its hold ran out at 2h5m, inside the extended gap")
	require.Empty(t, ev[0].Transition.Incidents)
	got := b.get(t, m)
	require.Equal(t, T0.Add(3*time.Hour+5*time.Minute), got.State.Hold.Until, "a fresh grace window from the new end")

	os := b.outages(t, monitors.OutageListParams{})
	require.Len(t, os, 1)
	require.Equal(t, int64(1), os[0].MonitorsPostponed)
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{}))
}

func testHeartbeatNothingDue(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, T0))
	b.heartbeat(t, T0)
	hb := b.heartbeat(t, T0.Add(30*time.Minute))
	require.True(t, hb.Detected)
	require.True(t, hb.Settled, "no deadline fell inside the gap")
	require.Zero(t, hb.Outage.MonitorsPostponed)
	require.Equal(t, monitors.TimeOptions{}, hb.TimeOptions())
	require.Len(t, b.outages(t, monitors.OutageListParams{}), 1)
}

func testHeartbeatConcurrent(t *testing.T, b *bundle) {
	b.heartbeat(t, T0)
	const callers = 8
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		detected int
		errs     []error
	)
	for i := range callers {
		wg.Go(func() {
			hb, err := b.s.EvaluatorHeartbeat(b.ctx, &monitors.EvaluatorHeartbeatParams{
				Now: T0.Add(time.Hour + time.Duration(i)*time.Millisecond), Threshold: time.Minute})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if hb.Detected {
				detected++
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Equal(t, 1, detected, "one replica records the outage")
	require.Len(t, b.outages(t, monitors.OutageListParams{}), 1)
}

func testOutageList(t *testing.T, b *bundle) {
	now := T0
	b.heartbeat(t, now)
	var want []*monitors.Outage
	for i := range 3 {
		now = now.Add(time.Duration(i+2) * time.Minute)
		hb := b.heartbeat(t, now)
		require.True(t, hb.Detected && hb.Settled)
		want = append([]*monitors.Outage{hb.Outage}, want...)
	}
	require.Equal(t, want, b.outages(t, monitors.OutageListParams{}), "newest first")
	require.Equal(t, want[:2], b.outages(t, monitors.OutageListParams{Limit: 2}))
	require.Equal(t, want[2:], b.outages(t, monitors.OutageListParams{Limit: 2, Before: want[1].ID}))
	require.Empty(t, b.outages(t, monitors.OutageListParams{Before: want[2].ID}))
}

// testEvaluateDelivers checks that the incidents a claim opens and
// resolves get their deliveries in the claim's transaction, as those that
// pings cause do.
func testEvaluateDelivers(t *testing.T, b *bundle) {
	ch := mustChannel(t, b, b.prj.ID, "ops", true)
	missed := b.monitor(t, "missed", nil)
	hung := b.monitor(t, "hung", func(m *monitors.Monitor) { m.MaxRuntimeSeconds = 60 })
	MustRecord(t, b.s, Ping(missed, monitors.PingSuccess, T0), Ping(hung, monitors.PingStart, T0))

	// One claim opens three incidents: missed's, and hung's stuck and
	// missed ones.
	ev := b.evaluate(t, T0.Add(time.Hour+5*time.Minute), 10, monitors.TimeOptions{})
	require.Len(t, ev, 2)
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 3)
	for _, in := range ins {
		evs := b.events(t, in.ID)
		require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened}, eventKinds(evs))
		ds := b.deliveries(t, in.ID)
		require.Equal(t, []routed{{ch.ID, monitors.EventOpened}}, routes(ds), "incident %s (%s)", in.Kind, in.MonitorID)
		require.Equal(t, evs[0].ID, ds[0].EventID)
	}

	// A day later the hung run is abandoned: its stuck incident resolves,
	// with its delivery.
	ev = b.evaluate(t, T0.Add(24*time.Hour+time.Minute), 10, monitors.TimeOptions{})
	require.Len(t, ev, 1)
	var stuck *monitors.Incident
	for _, in := range b.incidents(t, monitors.IncidentListParams{MonitorID: hung.ID}) {
		if in.Kind == monitors.IncidentStuck {
			stuck = in
		}
	}
	require.NotNil(t, stuck)
	require.NotNil(t, stuck.ResolvedAt)
	require.Equal(t, []routed{{ch.ID, monitors.EventOpened}, {ch.ID, monitors.EventResolved}}, routes(b.deliveries(t, stuck.ID)))
}
