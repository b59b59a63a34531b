package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// TestSuppressedUnderTwoParents: a child of two parents that are both
// down is suppressed; the recovery of one keeps it held (the other is
// still down), the recovery of the second releases it, once.
func TestSuppressedUnderTwoParents(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			run := evaluatorOf(t, h)
			a, b := h.monitor("db"), h.monitor("queue")
			child := storetest.MustMonitor(t, h.store, h.prj.ID, "report", func(m *monitors.Monitor) {
				m.DependsOn = []string{a.ID, b.ID}
			})
			h.clock.Set(T0.Add(time.Minute))
			h.fail(a)
			h.fail(b)
			in := h.fail(child)
			require.Equal(t, monitors.IncidentStateSuppressed, in.State())
			requestsSettle(t, recv, 2) // the parents

			h.clock.Set(T0.Add(2 * time.Minute))
			h.succeed(a)
			run(T0.Add(3 * time.Minute))
			run(T0.Add(4 * time.Minute))
			require.Empty(t, h.deliveries(in.ID), "the other parent is still down")
			requestsSettle(t, recv, 3) // a resolved

			h.clock.Set(T0.Add(5 * time.Minute))
			h.succeed(b)
			run(T0.Add(5 * time.Minute))
			ds := h.settled(in.ID, 1)
			require.Equal(t, monitors.EventOpened, ds[0].Event)
			run(T0.Add(7 * time.Minute))
			requestsSettle(t, recv, 5) // b resolved, the child opened
		})
	}
}

// TestSuppressedUnderDeletedParent: a child suppressed under a parent
// that is then deleted (its incidents with it) is not held for ever: the
// next look at it, a minute later at most, releases it.
func TestSuppressedUnderDeletedParent(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			run := evaluatorOf(t, h)
			db := h.monitor("db")
			child := storetest.MustMonitor(t, h.store, h.prj.ID, "report", func(m *monitors.Monitor) {
				m.DependsOn = []string{db.ID}
			})
			h.clock.Set(T0.Add(time.Minute))
			h.fail(db)
			in := h.fail(child)
			require.Equal(t, monitors.IncidentStateSuppressed, in.State())
			requestsSettle(t, recv, 1)

			require.NoError(t, h.store.MonitorDelete(context.Background(), h.prj.ID, db.ID))
			run(T0.Add(2 * time.Minute))
			ds := h.settled(in.ID, 1)
			require.Equal(t, monitors.EventOpened, ds[0].Event)
			requestsSettle(t, recv, 2)

			// Nothing is left held under the deleted parent.
			got, err := h.store.MonitorGet(context.Background(), h.prj.ID, child.ID)
			require.NoError(t, err)
			require.Empty(t, got.State.Held)
		})
	}
}

// TestFlappingKeepsRecovery: an incident notified before its monitor began
// to flap still has its recovery sent while it flaps (so a pager closes
// what it opened), as during a snooze; the flapping incidents themselves
// send nothing.
func TestFlappingKeepsRecovery(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			m := storetest.MustMonitor(t, h.store, h.prj.ID, "backup", func(m *monitors.Monitor) {
				m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}
				m.MinRuntimeSeconds = 60
			})
			success := func(at time.Time, took time.Duration) {
				p := storetest.Ping(m, monitors.PingSuccess, at)
				ms := took.Milliseconds()
				p.Ping.DurationMS = &ms
				storetest.MustRecord(t, h.store, p)
			}
			h.clock.Set(T0)
			success(T0, 2*time.Second)
			fast := h.incidentsOf(m)
			require.Len(t, fast, 1)
			require.Equal(t, monitors.IncidentTooFast, fast[0].Kind)
			at := T0.Add(time.Minute)
			for range monitors.FlapThreshold + 1 {
				h.clock.Set(at)
				storetest.MustRecord(t, h.store, storetest.Ping(m, monitors.PingFail, at))
				h.clock.Set(at.Add(time.Minute))
				h.succeed(m) // no duration: too_fast is not judged
				at = at.Add(5 * time.Minute)
			}
			got, err := h.store.MonitorGet(context.Background(), h.prj.ID, m.ID)
			require.NoError(t, err)
			require.True(t, got.State.IsFlapping())
			// too_fast opened, three failures opened and resolved, the notice.
			requestsSettle(t, recv, 1+2*monitors.FlapThreshold+1)

			h.clock.Set(at)
			success(at, 2*time.Second) // an update of too_fast: held
			h.clock.Set(at.Add(time.Minute))
			success(at.Add(time.Minute), 2*time.Minute)
			ds := h.settled(fast[0].ID, 2)
			require.Equal(t, monitors.EventResolved, ds[1].Event)
			reqs := requestsSettle(t, recv, 1+2*monitors.FlapThreshold+2)
			require.Equal(t, "incident.resolved", eventOf(t, reqs[len(reqs)-1].Body))
		})
	}
}
