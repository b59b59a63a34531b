package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

// channelWith creates a channel of the harness's project with the late
// warning and grouping given.
func (h *harness) channelWith(kind, name string, config any, isDefault, late bool, group int) *monitors.Channel {
	h.t.Helper()
	raw, err := json.Marshal(config)
	require.NoError(h.t, err)
	ch, err := h.store.ChannelCreate(context.Background(), &monitors.ChannelCreateParams{ID: storetest.RandomID("ch_"),
		ProjectID: h.prj.ID, Kind: kind, Name: name, Config: raw, IsDefault: isDefault, NotifyLate: late,
		GroupSeconds: &group, Now: T0})
	require.NoError(h.t, err)
	return ch
}

// evaluate runs one pass of a real evaluator at at.
func (h *harness) evaluate(ev *evaluator.Evaluator, at time.Time) *evaluator.Pass {
	h.t.Helper()
	h.clock.Set(at)
	pass, err := ev.RunOnce(context.Background())
	require.NoError(h.t, err)
	return pass
}

func (h *harness) newEvaluator() *evaluator.Evaluator {
	h.t.Helper()
	ev, err := evaluator.New(h.store, evaluator.Config{NowFunc: h.clock.Now, BatchSize: 100, Workers: 1,
		Logger: testdb.Logger(h.t)})
	require.NoError(h.t, err)
	return ev
}

// events lists the events of the requests a receiver got, in order.
func events(t *testing.T, r *notifiertest.Receiver) []string {
	t.Helper()
	var out []string
	for _, q := range r.Requests() {
		out = append(out, eventOf(t, q.Body))
	}
	return out
}

// assertEventually waits, a bounded time, for cond.
func assertEventually(cond func() bool) bool {
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}

// TestStormGrouped: 20 monitors are missed within 10 s, as a real
// evaluator finds them. A Slack channel with group_seconds 30 gets one
// message naming all 20, 30 s after the first opened (not before); a
// PagerDuty channel gets 20 events at once; a webhook with group_seconds 0
// gets 20 incident.opened. Every incident keeps its own deliveries, and
// each recovery goes out on its own. On PostgreSQL a second delivery
// service runs on the same database, as another replica: the group is
// still sent once.
func TestStormGrouped(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			slackRecv, pdRecv, hookRecv := notifiertest.NewReceiver(t, nil), notifiertest.NewReceiver(t, nil), notifiertest.NewReceiver(t, nil)
			client := rewriteClient(t, map[string]*notifiertest.Receiver{"hooks.slack.com": slackRecv, "events.pagerduty.com": pdRecv})
			h := newHarness(t, dialect, func(c *delivery.Config) {
				c.HTTPClient = client
				delivery.SetGroupPoll(c, 20*time.Millisecond)
			})
			if dialect == "postgres" {
				cfg := h.cfg
				cfg.Store, cfg.NowFunc, cfg.HTTPClient = h.store, h.clock.Now, client
				delivery.SetGroupPoll(&cfg, 20*time.Millisecond)
				other, err := delivery.NewPostgres(h.store.(*pgstore.Store).Pool(), cfg)
				require.NoError(t, err)
				require.NoError(t, other.Start(context.Background()))
				t.Cleanup(func() { require.NoError(t, other.Stop(context.Background())) })
			}
			slack := h.channelWith("slack", "team", map[string]any{"webhook_url": "https://hooks.slack.com" + slackPath}, true, false, 30)
			h.channelWith("pagerduty", "pager", map[string]any{"routing_key": pdRoutingKey}, true, false, 0)
			h.channelWith("webhook", "hook", map[string]any{"url": hookRecv.URL + "/hook"}, true, false, 0)

			const n = 20
			var ms []*monitors.Monitor
			for i := range n {
				m := storetest.MustMonitor(t, h.store, h.prj.ID, fmt.Sprintf("job-%02d", i), func(m *monitors.Monitor) {
					m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}
					m.GraceSeconds = 60
				})
				// Pinged half a second apart: missed half a second apart,
				// within 10 s.
				storetest.MustRecord(t, h.store, storetest.Ping(m, monitors.PingSuccess, T0.Add(time.Duration(i)*500*time.Millisecond)))
				ms = append(ms, m)
			}
			ev := h.newEvaluator()
			first := T0.Add(time.Hour + time.Minute)
			opened := 0
			for s := 0; s <= 10; s += 2 {
				opened += h.evaluate(ev, first.Add(time.Duration(s)*time.Second)).Opened
			}
			require.Equal(t, n, opened)

			require.Eventually(t, func() bool { return len(pdRecv.Requests()) == n && len(hookRecv.Requests()) == n },
				20*time.Second, 10*time.Millisecond, "PagerDuty and the webhook get each incident at once")
			require.Empty(t, slackRecv.Requests(), "Slack waits for the group")
			ins, err := h.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: h.prj.ID, OpenOnly: true})
			require.NoError(t, err)
			require.Len(t, ins, n, "each incident has its own record")
			var ids []string
			for _, in := range ins {
				ids = append(ids, in.ID)
			}
			for _, d := range h.deliveries(ids...) {
				if d.ChannelID == slack.ID {
					require.Equal(t, monitors.DeliveryPending, d.State)
					require.NotNil(t, d.GroupAt)
					require.Equal(t, first.Add(30*time.Second), *d.GroupAt, "one group, 30 s after its first incident")
				} else {
					require.Nil(t, d.GroupAt)
				}
			}

			h.clock.Set(first.Add(30*time.Second - time.Millisecond))
			require.Never(t, func() bool { return len(slackRecv.Requests()) > 0 }, 200*time.Millisecond, 10*time.Millisecond,
				"not before the group's time")
			h.clock.Set(first.Add(30 * time.Second))
			for _, id := range ids {
				h.settled(id, 3)
			}
			reqs := slackRecv.Requests()
			require.Len(t, reqs, 1, "one message for the 20")
			body := string(reqs[0].Body)
			require.Contains(t, body, "20 incidents opened together")
			for _, m := range ms {
				require.Contains(t, body, m.Slug)
			}
			for _, d := range h.deliveries(ids...) {
				require.Equal(t, monitors.DeliverySent, d.State, "delivery %d", d.ID)
				require.Len(t, d.AttemptLog, 1, "one attempt each, the group's")
			}

			// Each recovery goes out on its own, to every channel.
			h.clock.Set(first.Add(time.Minute))
			for _, m := range ms {
				storetest.MustRecord(t, h.store, storetest.Ping(m, monitors.PingSuccess, h.clock.Now()))
			}
			for _, id := range ids {
				h.settled(id, 6)
			}
			require.Len(t, slackRecv.Requests(), 1+n)
			for _, q := range slackRecv.Requests()[1:] {
				require.Contains(t, string(q.Body), "UP job-")
			}
			require.Len(t, pdRecv.Requests(), 2*n)
			require.Len(t, hookRecv.Requests(), 2*n)
		})
	}
}

// TestLateWarningOnce: a nightly job with a grace of 10 min does not run.
// A real evaluator ticking every 30 s sends one monitor.late, 5 min after
// the expected time, to the channel with notify_late only, then the
// missed incident to every channel; the next night, after a run, the
// warning comes again, once.
func TestLateWarningOnce(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			lateRecv, quietRecv := notifiertest.NewReceiver(t, nil), notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channelWith("webhook", "warned", map[string]any{"url": lateRecv.URL + "/hook"}, true, true, 0)
			h.channelWith("webhook", "paged", map[string]any{"url": quietRecv.URL + "/hook"}, true, false, 0)
			m := storetest.MustMonitor(t, h.store, h.prj.ID, "nightly", func(m *monitors.Monitor) {
				m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}
				m.GraceSeconds = 600
			})
			day1 := time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)
			storetest.MustRecord(t, h.store, storetest.Ping(m, monitors.PingSuccess, day1))
			ev := h.newEvaluator()
			day2 := day1.Add(24 * time.Hour)
			tick := func(from, to time.Time) {
				for at := from; !at.After(to); at = at.Add(30 * time.Second) {
					h.evaluate(ev, at)
				}
			}
			tick(day2, day2.Add(4*time.Minute+30*time.Second))
			got, err := h.store.MonitorGet(context.Background(), h.prj.ID, m.ID)
			require.NoError(t, err)
			require.Equal(t, day2.Add(5*time.Minute), *got.NextDeadlineAt, "the warning is the next deadline")
			tick(day2.Add(5*time.Minute), day2.Add(9*time.Minute+30*time.Second))
			// The warning is out before the grace ends (on the real clock,
			// five minutes before the page).
			require.Eventually(t, func() bool { return len(lateRecv.Requests()) == 1 }, 20*time.Second, 10*time.Millisecond)
			require.Empty(t, quietRecv.Requests())
			tick(day2.Add(10*time.Minute), day2.Add(12*time.Minute))
			require.Eventually(t, func() bool { return len(lateRecv.Requests()) == 2 && len(quietRecv.Requests()) == 1 },
				20*time.Second, 10*time.Millisecond)
			require.Equal(t, []string{"monitor.late", "incident.opened"}, events(t, lateRecv))
			require.Equal(t, []string{"incident.opened"}, events(t, quietRecv))
			var late webhook.Payload
			require.NoError(t, json.Unmarshal(lateRecv.Requests()[0].Body, &late))
			require.Equal(t, day2.Add(5*time.Minute), late.MonitorEvent.At)
			require.Contains(t, late.MonitorEvent.Summary, "nightly is late")

			evs, err := h.store.IncidentEventList(context.Background(), &monitors.IncidentEventListParams{ProjectID: h.prj.ID})
			require.NoError(t, err)
			var lates int
			for _, e := range evs {
				if e.Kind == monitors.EventMonitorLate {
					lates++
					require.Empty(t, e.IncidentID, "not an incident")
				}
			}
			require.Equal(t, 1, lates, "once per occurrence")

			// It runs late; the next night is late again: one more warning.
			h.clock.Set(day2.Add(20 * time.Minute))
			h.succeed(m)
			require.Eventually(t, func() bool { return len(lateRecv.Requests()) == 3 }, 20*time.Second, 10*time.Millisecond)
			day3 := day2.Add(24 * time.Hour)
			tick(day3, day3.Add(6*time.Minute))
			require.Eventually(t, func() bool { return len(lateRecv.Requests()) == 4 }, 20*time.Second, 10*time.Millisecond)
			require.Equal(t, []string{"monitor.late", "incident.opened", "incident.resolved", "monitor.late"}, events(t, lateRecv))
			require.Equal(t, []string{"incident.opened", "incident.resolved"}, events(t, quietRecv))
		})
	}
}

// TestFlappingNoticeOnce: a job that fails and recovers every 10 minutes
// is notified for its first three incidents; the fourth sends one
// monitor.flapping instead; then nothing, however often it flaps, not
// even a reminder, until an hour without an incident opening, when a real
// evaluator sends one monitor.stable, and the incident.opened of the one
// still open (held while it flapped); its next events are notified again.
func TestFlappingNoticeOnce(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, func(c *delivery.Config) { c.ReminderInterval = 30 * time.Minute })
			h.channelWith("webhook", "hook", map[string]any{"url": recv.URL + "/hook"}, true, false, 0)
			m := storetest.MustMonitor(t, h.store, h.prj.ID, "sync", func(m *monitors.Monitor) {
				m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}
			})
			at := T0
			for range monitors.FlapThreshold + 4 {
				h.clock.Set(at)
				h.fail(m)
				h.clock.Set(at.Add(time.Minute))
				h.succeed(m)
				at = at.Add(10 * time.Minute)
			}
			want := []string{}
			for range monitors.FlapThreshold {
				want = append(want, "incident.opened", "incident.resolved")
			}
			want = append(want, "monitor.flapping")
			if !assertEventually(func() bool { return len(recv.Requests()) >= len(want) }) {
				t.Fatalf("got %v, want %v", events(t, recv), want)
			}
			require.Never(t, func() bool { return len(recv.Requests()) > len(want) }, 300*time.Millisecond, 10*time.Millisecond)
			// Deliveries of different incidents go out side by side: the
			// order of their arrival is not theirs.
			require.ElementsMatch(t, want, events(t, recv))
			ins, err := h.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: h.prj.ID, MonitorID: m.ID})
			require.NoError(t, err)
			require.Len(t, ins, monitors.FlapThreshold+4, "every incident is recorded")

			// One more incident while flapping: recorded, held (not
			// notified), and so without reminders.
			h.clock.Set(at)
			still := h.fail(m)
			h.clock.Set(at.Add(45 * time.Minute))
			n, err := h.svc.RemindOnce(context.Background())
			require.NoError(t, err)
			require.Equal(t, 0, n, "a held incident is not reminded of")
			require.Never(t, func() bool { return len(recv.Requests()) > len(want) }, 300*time.Millisecond, 10*time.Millisecond)
			require.Empty(t, h.deliveries(still.ID))

			ev := h.newEvaluator()
			h.evaluate(ev, at.Add(monitors.FlapWindow-time.Second))
			h.evaluate(ev, at.Add(monitors.FlapWindow))
			// The incident still open was held while the monitor flapped:
			// it is notified now, once, beside the notice.
			want = append(want, "monitor.stable", "incident.opened")
			require.Eventually(t, func() bool { return len(recv.Requests()) == len(want) }, 20*time.Second, 10*time.Millisecond)
			require.ElementsMatch(t, want, events(t, recv))
			var stable string
			for _, r := range recv.Requests()[len(want)-2:] {
				if strings.Contains(string(r.Body), "monitor.stable") {
					stable = string(r.Body)
				}
			}
			require.Contains(t, stable, "stable again")
			require.Contains(t, stable, "open: failed since", "it says what is still open")
			require.Len(t, h.deliveries(still.ID), 1, "the held incident's opened event")

			// Stable, its incidents are notified again.
			h.clock.Set(at.Add(monitors.FlapWindow + time.Minute))
			h.succeed(m)
			h.clock.Set(at.Add(monitors.FlapWindow + 2*time.Minute))
			h.fail(m)
			want = append(want, "incident.resolved", "incident.opened")
			require.Eventually(t, func() bool { return len(recv.Requests()) == len(want) }, 20*time.Second, 10*time.Millisecond)
			require.ElementsMatch(t, []string{"incident.resolved", "incident.opened"}, events(t, recv)[len(want)-2:], "notified again")
		})
	}
}

// TestGroupAfterRestartAndRetry: three incidents open on a Slack channel
// that gathers for 30 s, and Vigil restarts before their group's time.
// After it, the group goes out once; the receiver's first answer is a 503,
// so the message is sent again, and every incident's delivery logs the
// same two attempts.
func TestGroupAfterRestartAndRetry(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, statuses(503))
			client := rewriteClient(t, map[string]*notifiertest.Receiver{"hooks.slack.com": recv})
			h := newHarness(t, dialect, func(c *delivery.Config) {
				c.HTTPClient = client
				delivery.SetGroupPoll(c, 20*time.Millisecond)
			})
			slack := h.channelWith("slack", "team", map[string]any{"webhook_url": "https://hooks.slack.com" + slackPath}, true, false, 30)
			var ids []string
			for i := range 3 {
				m := h.monitor(fmt.Sprintf("db-job-%d", i))
				h.clock.Set(T0.Add(time.Duration(i) * time.Second))
				ids = append(ids, h.fail(m).ID)
			}
			h.restart()
			require.Empty(t, recv.Requests())
			h.clock.Set(T0.Add(30 * time.Second))
			for _, id := range ids {
				h.settled(id, 1)
			}
			reqs := recv.Requests()
			require.Len(t, reqs, 2, "the group, and again after the 503")
			for _, q := range reqs {
				for i := range 3 {
					require.Contains(t, string(q.Body), fmt.Sprintf("db-job-%d", i))
				}
			}
			for _, d := range h.deliveries(ids...) {
				require.Equal(t, slack.ID, d.ChannelID)
				require.Equal(t, monitors.DeliverySent, d.State)
				require.Equal(t, []monitors.AttemptOutcome{monitors.AttemptRetry, monitors.AttemptSuccess}, outcomes(d.AttemptLog),
					"delivery %d", d.ID)
			}
		})
	}
}
