package storetest

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func runDelivery(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"Delivery/Routing", testDeliveryRouting},
		{"Delivery/NoChannels", testDeliveryNoChannels},
		{"Delivery/AttemptRecord", testDeliveryAttemptRecord},
		{"Delivery/AttemptErrors", testDeliveryAttemptErrors},
		{"Delivery/WaitsForEarlier", testDeliveryWaitsFor},
		{"Delivery/CrossProject", testDeliveryCrossProject},
		{"IncidentRemind/Interval", testIncidentRemind},
		{"IncidentRemind/SkipsPendingChannel", testIncidentRemindSkipsPending},
		{"IncidentRemind/Concurrent", testIncidentRemindConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
}

// failing opens a failed incident on m at at.
func failing(t *testing.T, b *bundle, m *monitors.Monitor, at time.Time) *monitors.Incident {
	t.Helper()
	MustRecord(t, b.s, Ping(m, monitors.PingFail, at))
	ins := b.incidents(t, monitors.IncidentListParams{MonitorID: m.ID, OpenOnly: true})
	require.Len(t, ins, 1)
	return ins[0]
}

func (b *bundle) deliveries(t *testing.T, incidentIDs ...string) []*monitors.Delivery {
	t.Helper()
	ds, err := b.s.DeliveryList(b.ctx, &monitors.DeliveryListParams{ProjectID: b.prj.ID, IncidentIDs: incidentIDs})
	require.NoError(t, err)
	return ds
}

type routed struct {
	Channel string
	Event   monitors.IncidentEventKind
}

func routes(ds []*monitors.Delivery) []routed {
	out := make([]routed, len(ds))
	for i, d := range ds {
		out[i] = routed{d.ChannelID, d.Event}
	}
	return out
}

func testDeliveryRouting(t *testing.T, b *bundle) {
	chA := mustChannel(t, b, b.prj.ID, "a default", true)
	chB := mustChannel(t, b, b.prj.ID, "b default", true)
	chC := mustChannel(t, b, b.prj.ID, "c named", false)
	other := MustProject(t, b.s)
	mustChannel(t, b, other.ID, "other default", true)
	// Channel IDs are random: list them in ID order, as deliveries are.
	ab := []string{chA.ID, chB.ID}
	if ab[0] > ab[1] {
		ab[0], ab[1] = ab[1], ab[0]
	}

	byDefault := b.monitor(t, "by-default", func(m *monitors.Monitor) { m.AlertOnFailure = monitors.AlertEveryAttempt })
	named := b.monitor(t, "named", func(m *monitors.Monitor) { m.Channels = []string{chC.ID} })

	in := failing(t, b, byDefault, T0)
	MustRecord(t, b.s, Ping(byDefault, monitors.PingFail, T0.Add(time.Minute)))
	MustRecord(t, b.s, Ping(byDefault, monitors.PingSuccess, T0.Add(2*time.Minute)))
	evs := b.events(t, in.ID)
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventUpdated, monitors.EventResolved}, eventKinds(evs))

	ds := b.deliveries(t, in.ID)
	require.Equal(t, []routed{
		{ab[0], monitors.EventOpened}, {ab[1], monitors.EventOpened},
		{ab[0], monitors.EventUpdated}, {ab[1], monitors.EventUpdated},
		{ab[0], monitors.EventResolved}, {ab[1], monitors.EventResolved},
	}, routes(ds), "a monitor without channels uses its project's default channels, never another project's")
	for i, d := range ds {
		e := evs[i/2]
		require.Equal(t, e.ID, d.EventID)
		require.Equal(t, e.At, d.EventAt)
		require.Equal(t, e.Summary, d.Summary)
		require.Equal(t, e.At, d.CreatedAt)
		require.Equal(t, &e.At, d.NextAttemptAt)
		require.Equal(t, b.prj.ID, d.ProjectID)
		require.Equal(t, in.ID, d.IncidentID)
		require.Equal(t, byDefault.ID, d.MonitorID)
		require.Equal(t, monitors.DeliveryPending, d.State)
		require.Zero(t, d.Attempts)
		require.Nil(t, d.FinishedAt)
		require.Empty(t, d.AttemptLog)
		require.NotNil(t, d.AttemptLog)
	}

	in2 := failing(t, b, named, T0)
	require.Equal(t, []routed{{chC.ID, monitors.EventOpened}}, routes(b.deliveries(t, in2.ID)),
		"a monitor with channels uses only its own")

	both := b.deliveries(t, in2.ID, in.ID)
	require.Len(t, both, 7)
}

func testDeliveryNoChannels(t *testing.T, b *bundle) {
	mustChannel(t, b, b.prj.ID, "not default", false)
	m := b.monitor(t, "job", nil)
	in := failing(t, b, m, T0)
	require.Empty(t, b.deliveries(t, in.ID), "no default channel, no delivery")
	require.Empty(t, b.deliveries(t))
}

func testDeliveryAttemptRecord(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	ch := mustChannel(t, b, b.prj.ID, "hook", true)
	m := b.monitor(t, "job", nil)
	in := failing(t, b, m, T0)
	d := b.deliveries(t, in.ID)[0]

	next := T0.Add(10 * time.Second)
	a1, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
		StartedAt: T0.Add(time.Second), FinishedAt: T0.Add(2 * time.Second), Outcome: monitors.AttemptRetry,
		StatusCode: 503, Error: "HTTP 503 Service Unavailable\x00 " + strings.Repeat("é", monitors.DeliveryErrorMax),
		NextAttemptAt: &next})
	require.NoError(t, err)
	require.Equal(t, 1, a1.Attempt)
	require.Equal(t, d.ID, a1.DeliveryID)
	require.Equal(t, ch.ID, a1.ChannelID)
	require.Equal(t, in.ID, a1.IncidentID)
	require.Equal(t, monitors.EventOpened, a1.Event)
	require.Equal(t, monitors.AttemptRetry, a1.Outcome)
	require.Equal(t, 503, a1.StatusCode)
	require.Equal(t, T0.Add(time.Second), a1.StartedAt)
	require.Equal(t, T0.Add(2*time.Second), a1.FinishedAt)
	require.Equal(t, &next, a1.NextAttemptAt)
	require.Equal(t, monitors.DeliveryErrorMax, len([]rune(a1.Error)), "errors are cut")
	require.True(t, strings.HasPrefix(a1.Error, "HTTP 503 Service Unavailable\uFFFD "), "and cleaned: %q", a1.Error[:40])

	got, err := s.DeliveryGet(ctx, b.prj.ID, d.ID)
	require.NoError(t, err)
	require.Equal(t, monitors.DeliveryPending, got.State)
	require.Equal(t, 1, got.Attempts)
	require.Equal(t, &next, got.NextAttemptAt)

	a2, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
		StartedAt: T0.Add(11 * time.Second), FinishedAt: T0.Add(12 * time.Second), Outcome: monitors.AttemptSuccess,
		StatusCode: 200})
	require.NoError(t, err)
	require.Equal(t, 2, a2.Attempt)
	require.Empty(t, a2.Error)
	require.Nil(t, a2.NextAttemptAt)

	got, err = s.DeliveryGet(ctx, b.prj.ID, d.ID)
	require.NoError(t, err)
	require.Equal(t, monitors.DeliverySent, got.State)
	require.Equal(t, 2, got.Attempts)
	require.Nil(t, got.NextAttemptAt)
	require.Equal(t, T0.Add(12*time.Second), *got.FinishedAt)

	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
		StartedAt: T0.Add(time.Minute), FinishedAt: T0.Add(time.Minute), Outcome: monitors.AttemptSuccess})
	require.ErrorIs(t, err, monitors.ErrConflict, "a sent delivery is never sent again")

	list := b.deliveries(t, in.ID)
	require.Len(t, list, 1)
	require.Equal(t, []*monitors.DeliveryAttempt{a1, a2}, list[0].AttemptLog)

	// A permanent failure ends the delivery too.
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, T0.Add(time.Hour)))
	resolved := b.deliveries(t, in.ID)[1]
	require.Equal(t, monitors.EventResolved, resolved.Event)
	a, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: resolved.ID,
		StartedAt: T0.Add(time.Hour), FinishedAt: T0.Add(time.Hour + time.Second), Outcome: monitors.AttemptFailed,
		StatusCode: 400, Error: "HTTP 400 Bad Request"})
	require.NoError(t, err)
	require.Equal(t, 1, a.Attempt)
	got, err = s.DeliveryGet(ctx, b.prj.ID, resolved.ID)
	require.NoError(t, err)
	require.Equal(t, monitors.DeliveryFailed, got.State)
	require.Equal(t, T0.Add(time.Hour+time.Second), *got.FinishedAt)
	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: resolved.ID,
		StartedAt: T0.Add(2 * time.Hour), FinishedAt: T0.Add(2 * time.Hour), Outcome: monitors.AttemptSuccess})
	require.ErrorIs(t, err, monitors.ErrConflict)
}

func testDeliveryAttemptErrors(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	mustChannel(t, b, b.prj.ID, "hook", true)
	in := failing(t, b, b.monitor(t, "job", nil), T0)
	d := b.deliveries(t, in.ID)[0]

	_, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
		StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptRetry})
	require.ErrorContains(t, err, "next attempt", "a retry says when")
	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
		StartedAt: T0, FinishedAt: T0, Outcome: "maybe"})
	require.ErrorContains(t, err, "maybe")
	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID + 1000,
		StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptSuccess})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.DeliveryGet(ctx, b.prj.ID, d.ID+1000)
	require.ErrorIs(t, err, monitors.ErrNotFound)

	got, err := s.DeliveryGet(ctx, b.prj.ID, d.ID)
	require.NoError(t, err)
	require.Zero(t, got.Attempts, "refused attempts leave nothing")
	require.Empty(t, b.deliveries(t, in.ID)[0].AttemptLog)
}

func testDeliveryWaitsFor(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	mustChannel(t, b, b.prj.ID, "hook", true)
	m := b.monitor(t, "job", nil)
	in := failing(t, b, m, T0)
	MustRecord(t, s, Ping(m, monitors.PingSuccess, T0.Add(time.Minute)))
	ds := b.deliveries(t, in.ID)
	require.Len(t, ds, 2)
	opened, resolved := ds[0], ds[1]

	got, err := s.DeliveryGet(ctx, b.prj.ID, opened.ID)
	require.NoError(t, err)
	require.Zero(t, got.WaitsFor)
	require.Nil(t, got.WaitsForNextAttemptAt)

	next := T0.Add(30 * time.Second)
	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: opened.ID,
		StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptRetry, NextAttemptAt: &next})
	require.NoError(t, err)
	got, err = s.DeliveryGet(ctx, b.prj.ID, resolved.ID)
	require.NoError(t, err)
	require.Equal(t, opened.ID, got.WaitsFor, "the recovery waits for the alert it ends")
	require.Equal(t, &next, got.WaitsForNextAttemptAt)
	require.Equal(t, T0.Add(time.Minute), got.EventAt)
	require.Equal(t, monitors.EventResolved, got.Event)

	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: opened.ID,
		StartedAt: next, FinishedAt: next, Outcome: monitors.AttemptSuccess})
	require.NoError(t, err)
	got, err = s.DeliveryGet(ctx, b.prj.ID, resolved.ID)
	require.NoError(t, err)
	require.Zero(t, got.WaitsFor)
}

func testDeliveryCrossProject(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	mustChannel(t, b, b.prj.ID, "hook", true)
	in := failing(t, b, b.monitor(t, "job", nil), T0)
	d := b.deliveries(t, in.ID)[0]
	other := MustProject(t, s)

	_, err := s.DeliveryGet(ctx, other.ID, d.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: other.ID, DeliveryID: d.ID,
		StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptSuccess})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	ds, err := s.DeliveryList(ctx, &monitors.DeliveryListParams{ProjectID: other.ID, IncidentIDs: []string{in.ID}})
	require.NoError(t, err)
	require.Empty(t, ds)
}

func testIncidentRemind(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	ch := mustChannel(t, b, b.prj.ID, "hook", true)
	m := b.monitor(t, "job", nil)
	quiet := b.monitor(t, "quiet", nil)
	in := failing(t, b, m, T0)
	done := failing(t, b, quiet, T0)
	MustRecord(t, s, Ping(quiet, monitors.PingSuccess, T0.Add(time.Minute)))
	// The alerts went out: reminders are not held back by them.
	for _, d := range b.deliveries(t, in.ID, done.ID) {
		_, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
			StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptSuccess})
		require.NoError(t, err)
	}

	remind := func(now time.Time) []*monitors.IncidentEvent {
		t.Helper()
		evs, err := s.IncidentRemind(ctx, &monitors.IncidentRemindParams{Now: now, Interval: time.Hour})
		require.NoError(t, err)
		require.NotNil(t, evs)
		return evs
	}
	require.Empty(t, remind(T0.Add(time.Hour-time.Second)), "not due yet")
	evs := remind(T0.Add(time.Hour))
	require.Len(t, evs, 1, "only the open incident")
	e := evs[0]
	require.Equal(t, monitors.EventReminder, e.Kind)
	require.Equal(t, in.ID, e.IncidentID)
	require.Equal(t, m.ID, e.MonitorID)
	require.Equal(t, b.prj.ID, e.ProjectID)
	require.Equal(t, T0.Add(time.Hour), e.At)
	require.Equal(t, in.Summary, e.Summary, "a reminder repeats what the incident is")
	require.Equal(t, e, b.events(t, in.ID)[1])

	ds := b.deliveries(t, in.ID)
	require.Equal(t, []routed{{ch.ID, monitors.EventOpened}, {ch.ID, monitors.EventReminder}}, routes(ds))
	require.Equal(t, e.ID, ds[1].EventID)

	require.Empty(t, remind(T0.Add(time.Hour)), "reminded once per interval")
	require.Empty(t, remind(T0.Add(2*time.Hour-time.Second)))
	_, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: ds[1].ID,
		StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptSuccess})
	require.NoError(t, err)
	require.Len(t, remind(T0.Add(2*time.Hour)), 1, "the interval counts from the last reminder")

	MustRecord(t, s, Ping(m, monitors.PingSuccess, T0.Add(2*time.Hour+time.Minute)))
	require.Empty(t, remind(T0.Add(10*time.Hour)), "resolved incidents are not reminded")

	_, err = s.IncidentRemind(ctx, &monitors.IncidentRemindParams{Now: T0, Interval: 0})
	require.Error(t, err)
}

func testIncidentRemindSkipsPending(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	down := mustChannel(t, b, b.prj.ID, "down", false)
	up := mustChannel(t, b, b.prj.ID, "up", false)
	m := b.monitor(t, "job", func(m *monitors.Monitor) { m.Channels = []string{down.ID, up.ID} })
	in := failing(t, b, m, T0)
	for _, d := range b.deliveries(t, in.ID) {
		if d.ChannelID == up.ID {
			_, err := s.DeliveryAttemptRecord(ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
				StartedAt: T0, FinishedAt: T0, Outcome: monitors.AttemptSuccess})
			require.NoError(t, err)
		}
	}
	evs, err := s.IncidentRemind(ctx, &monitors.IncidentRemindParams{Now: T0.Add(time.Hour), Interval: time.Hour})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	var reminders []string
	for _, d := range b.deliveries(t, in.ID) {
		if d.Event == monitors.EventReminder {
			reminders = append(reminders, d.ChannelID)
		}
	}
	require.Equal(t, []string{up.ID}, reminders, "a channel still working on the alert gets no reminder on top")
}

func testIncidentRemindConcurrent(t *testing.T, b *bundle) {
	mustChannel(t, b, b.prj.ID, "hook", true)
	const incidents = 6
	for i := range incidents {
		failing(t, b, b.monitor(t, RandomID("job-"), nil), T0.Add(time.Duration(i)*time.Second))
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total = map[string]int{}
	)
	for range 4 {
		wg.Go(func() {
			evs, err := b.s.IncidentRemind(b.ctx, &monitors.IncidentRemindParams{Now: T0.Add(2 * time.Hour),
				Interval: time.Hour, Limit: 2})
			if !assertNoError(t, err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, e := range evs {
				total[e.IncidentID]++
			}
		})
	}
	wg.Wait()
	for id, n := range total {
		require.Equal(t, 1, n, "incident %s reminded %d times", id, n)
	}
	// Whatever the calls above left (each takes at most 2), later calls
	// finish, and no incident is reminded twice for one interval.
	for {
		evs, err := b.s.IncidentRemind(b.ctx, &monitors.IncidentRemindParams{Now: T0.Add(2 * time.Hour), Interval: time.Hour, Limit: 2})
		require.NoError(t, err)
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			total[e.IncidentID]++
			require.Equal(t, 1, total[e.IncidentID])
		}
	}
	require.Len(t, total, incidents)
}

// assertNoError reports err from a goroutine other than the test's.
func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}
