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
