package delivery_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// evaluatorOf returns the real evaluator on h's store and clock. Passes in
// these tests jump minutes apart: no outage of Vigil.
func evaluatorOf(t *testing.T, h *harness) func(at time.Time) *evaluator.Pass {
	t.Helper()
	ev, err := evaluator.New(h.store, evaluator.Config{NowFunc: h.clock.Now, BatchSize: 100, Workers: 1,
		OutageThreshold: 30 * 24 * time.Hour, Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry()})
	require.NoError(t, err)
	return func(at time.Time) *evaluator.Pass {
		t.Helper()
		h.clock.Set(at)
		pass, err := ev.RunOnce(context.Background())
		require.NoError(t, err)
		return pass
	}
}

func (h *harness) incidentsOf(m *monitors.Monitor) []*monitors.Incident {
	h.t.Helper()
	ins, err := h.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: h.prj.ID, MonitorID: m.ID})
	require.NoError(h.t, err)
	return ins
}

// requestsSettle waits until recv has had n requests, then a moment more
// to see that no more come.
func requestsSettle(t *testing.T, recv *notifiertest.Receiver, n int) []notifiertest.Request {
	t.Helper()
	require.Eventually(t, func() bool { return len(recv.Requests()) >= n }, 20*time.Second, 10*time.Millisecond,
		"%d requests did not come (%d)", n, len(recv.Requests()))
	time.Sleep(200 * time.Millisecond) // nothing more is on its way: the job poll is 20 ms
	reqs := recv.Requests()
	require.Len(t, reqs, n)
	return reqs
}

// TestSnoozeEndsWithIncidentOpen: a monitor snoozed for an hour fails ten
// minutes in. The incident opens, shown as held, and nothing is sent, not
// even a reminder; when the snooze ends with it still open, it is sent,
// once; its recovery then goes out as usual.
func TestSnoozeEndsWithIncidentOpen(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, func(c *delivery.Config) { c.ReminderInterval = 20 * time.Minute })
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			run := evaluatorOf(t, h)
			svc := manage.New(h.store, h.clock.Now)
			ctx := context.Background()
			m := h.monitor("backup")
			h.succeed(m)

			hour := int64(3600)
			got, err := svc.MonitorSnooze(ctx, h.prj.ID, m.ID, &manage.Snooze{Seconds: &hour})
			require.NoError(t, err)
			require.Equal(t, T0.Add(time.Hour), *got.SnoozedUntil)

			h.clock.Set(T0.Add(10 * time.Minute))
			in := h.fail(m)
			require.True(t, in.Held)
			require.Equal(t, monitors.IncidentStateOpen, in.State(), "held by a snooze, not suppressed")
			got, err = h.store.MonitorGet(ctx, h.prj.ID, m.ID)
			require.NoError(t, err)
			require.Equal(t, T0.Add(time.Hour), *got.NextDeadlineAt, "the evaluator comes back when the snooze ends")
			h.clock.Set(T0.Add(40 * time.Minute))
			h.fail(m) // an update, held too
			n, err := h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "no reminder of a held incident")
			require.Zero(t, run(T0.Add(59*time.Minute)).Evaluated)
			require.Empty(t, h.deliveries(in.ID))
			time.Sleep(100 * time.Millisecond)
			require.Empty(t, recv.Requests())

			require.Equal(t, 1, run(T0.Add(time.Hour)).Evaluated)
			ds := h.settled(in.ID, 1)
			require.Equal(t, monitors.EventOpened, ds[0].Event)
			require.Equal(t, monitors.DeliverySent, ds[0].State)
			reqs := requestsSettle(t, recv, 1)
			require.Equal(t, "incident.opened", eventOf(t, reqs[0].Body))
			ins := h.incidentsOf(m)
			require.Len(t, ins, 1)
			require.False(t, ins[0].Held)

			// Sent once: neither another pass nor a reminder right away.
			require.Zero(t, run(T0.Add(61*time.Minute)).Evaluated)
			n, err = h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "reminders count from the release")
			h.clock.Set(T0.Add(70 * time.Minute))
			h.succeed(m)
			ds = h.settled(in.ID, 2)
			require.Equal(t, monitors.EventResolved, ds[1].Event)
			requestsSettle(t, recv, 2)
		})
	}
}

// TestSnoozeEndedEarly: ending a snooze sends the held incident at once;
// one that recovered while snoozed is never sent.
func TestSnoozeEndedEarly(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			svc := manage.New(h.store, h.clock.Now)
			ctx := context.Background()
			flaky, broken := h.monitor("flaky"), h.monitor("broken")
			until := T0.Add(2 * time.Hour)
			for _, m := range []*monitors.Monitor{flaky, broken} {
				_, err := svc.MonitorSnooze(ctx, h.prj.ID, m.ID, &manage.Snooze{Until: &until})
				require.NoError(t, err)
			}
			h.clock.Set(T0.Add(time.Minute))
			gone := h.fail(flaky)
			in := h.fail(broken)
			h.clock.Set(T0.Add(2 * time.Minute))
			h.succeed(flaky)

			h.clock.Set(T0.Add(5 * time.Minute))
			for _, m := range []*monitors.Monitor{flaky, broken} {
				got, err := svc.MonitorUnsnooze(ctx, h.prj.ID, m.ID)
				require.NoError(t, err)
				require.Nil(t, got.SnoozedUntil)
			}
			h.settled(in.ID, 1)
			reqs := requestsSettle(t, recv, 1)
			require.Equal(t, "incident.opened", eventOf(t, reqs[0].Body))
			require.Empty(t, h.deliveries(gone.ID), "recovered while held: nothing to tell")
		})
	}
}

// TestParentDownFiveChildren: a database monitor and five jobs that depend
// on it all miss their run at once. One notification goes out, the
// parent's; the children's incidents open suppressed under it, shown and
// linked to it. Two children recover while the parent is down (closed
// without a word); when the parent recovers, the three still failing are
// notified then, once each.
func TestParentDownFiveChildren(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			run := evaluatorOf(t, h)
			hourly := func(m *monitors.Monitor) {
				m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}
				m.GraceSeconds = 300
			}
			db := storetest.MustMonitor(t, h.store, h.prj.ID, "db", hourly)
			var children []*monitors.Monitor
			for _, slug := range []string{"job-a", "job-b", "job-c", "job-d", "job-e"} {
				children = append(children, storetest.MustMonitor(t, h.store, h.prj.ID, slug, func(m *monitors.Monitor) {
					hourly(m)
					m.DependsOn = []string{db.ID}
				}))
			}
			for _, m := range append([]*monitors.Monitor{db}, children...) {
				h.succeed(m)
			}

			down := T0.Add(time.Hour + 5*time.Minute)
			require.Equal(t, 6, run(down).Opened)
			parent := h.incidentsOf(db)
			require.Len(t, parent, 1)
			h.settled(parent[0].ID, 1)
			reqs := requestsSettle(t, recv, 1)
			require.Equal(t, "incident.opened", eventOf(t, reqs[0].Body))
			for _, c := range children {
				ins := h.incidentsOf(c)
				require.Len(t, ins, 1, c.Slug)
				require.Equal(t, monitors.IncidentStateSuppressed, ins[0].State(), c.Slug)
				require.Equal(t, parent[0].ID, ins[0].SuppressedBy, c.Slug)
				require.Empty(t, h.deliveries(ins[0].ID), c.Slug)
			}
			// Looked at again while the parent is down: still held.
			run(down.Add(time.Minute))
			run(down.Add(2 * time.Minute))
			requestsSettle(t, recv, 1)

			h.clock.Set(down.Add(3 * time.Minute))
			h.succeed(children[0])
			h.succeed(children[1])
			up := down.Add(4 * time.Minute)
			h.clock.Set(up)
			h.succeed(db)
			h.settled(parent[0].ID, 2)
			// The parent's recovery woke its dependents: due now.
			for _, c := range children[2:] {
				got, err := h.store.MonitorGet(context.Background(), h.prj.ID, c.ID)
				require.NoError(t, err)
				require.False(t, got.NextDeadlineAt.After(up), c.Slug)
			}
			require.Equal(t, 3, run(up).Evaluated)
			for i, c := range children {
				ins := h.incidentsOf(c)
				require.Len(t, ins, 1)
				if i < 2 {
					require.Equal(t, monitors.IncidentStateResolved, ins[0].State(), c.Slug)
					require.Empty(t, h.deliveries(ins[0].ID), "%s recovered while suppressed", c.Slug)
					continue
				}
				require.Equal(t, monitors.IncidentStateOpen, ins[0].State(), c.Slug)
				require.Equal(t, parent[0].ID, ins[0].SuppressedBy, "%s keeps its link", c.Slug)
				ds := h.settled(ins[0].ID, 1)
				require.Equal(t, monitors.EventOpened, ds[0].Event)
			}
			reqs = requestsSettle(t, recv, 5) // db opened, db resolved, three children
			run(up.Add(2 * time.Minute))
			requestsSettle(t, recv, 5)
		})
	}
}

// TestSuppressedByPingFailure: a parent failing by a ping suppresses a
// child failing by a ping in a later batch, and in the same batch.
func TestSuppressedByPingFailure(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			db := h.monitor("db")
			dep := func(slug string) *monitors.Monitor {
				return storetest.MustMonitor(t, h.store, h.prj.ID, slug, func(m *monitors.Monitor) { m.DependsOn = []string{db.ID} })
			}
			later, same := dep("later"), dep("same")
			h.clock.Set(T0.Add(time.Minute))
			storetest.MustRecord(t, h.store, storetest.Ping(same, monitors.PingFail, T0.Add(time.Minute)),
				storetest.Ping(db, monitors.PingFail, T0.Add(time.Minute)))
			h.fail(later)
			requestsSettle(t, recv, 2) // db, and same: its ping came first in the batch
			require.Equal(t, monitors.IncidentStateSuppressed, h.incidentsOf(later)[0].State())
			require.Equal(t, monitors.IncidentStateOpen, h.incidentsOf(same)[0].State())

			h.clock.Set(T0.Add(2 * time.Minute))
			storetest.MustRecord(t, h.store, storetest.Ping(db, monitors.PingSuccess, T0.Add(2*time.Minute)),
				storetest.Ping(same, monitors.PingSuccess, T0.Add(2*time.Minute)))
			h.clock.Set(T0.Add(3 * time.Minute))
			storetest.MustRecord(t, h.store, storetest.Ping(db, monitors.PingFail, T0.Add(3*time.Minute)),
				storetest.Ping(same, monitors.PingFail, T0.Add(3*time.Minute)))
			requestsSettle(t, recv, 5) // db resolved, same resolved; then db opened: same suppressed
			require.Equal(t, monitors.IncidentStateSuppressed, h.incidentsOf(same)[0].State())
		})
	}
}

// TestSnoozeHoldsRemindersNotRecovery: an incident notified before the
// snooze gets no reminder while the monitor is snoozed, and one again
// after; its recovery during a snooze still goes out, so a pager closes
// what it opened.
func TestSnoozeHoldsRemindersNotRecovery(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, func(c *delivery.Config) { c.ReminderInterval = time.Hour })
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			svc := manage.New(h.store, h.clock.Now)
			ctx := context.Background()
			m := h.monitor("job")
			in := h.fail(m)
			h.settled(in.ID, 1)

			h.clock.Set(T0.Add(30 * time.Minute))
			secs := int64(2 * 3600)
			_, err := svc.MonitorSnooze(ctx, h.prj.ID, m.ID, &manage.Snooze{Seconds: &secs})
			require.NoError(t, err)
			h.clock.Set(T0.Add(90 * time.Minute))
			n, err := h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "no reminder while snoozed")
			h.clock.Set(T0.Add(150 * time.Minute))
			n, err = h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n, "reminded once the snooze is over")
			h.settled(in.ID, 2)

			_, err = svc.MonitorSnooze(ctx, h.prj.ID, m.ID, &manage.Snooze{Seconds: &secs})
			require.NoError(t, err)
			h.clock.Set(T0.Add(160 * time.Minute))
			h.succeed(m)
			ds := h.settled(in.ID, 3)
			require.Equal(t, monitors.EventResolved, ds[2].Event, "the recovery of a notified incident goes out while snoozed")
			reqs := requestsSettle(t, recv, 3)
			require.Equal(t, "incident.resolved", eventOf(t, reqs[2].Body))
		})
	}
}
