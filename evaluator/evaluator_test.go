package evaluator_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = storetest.T0

// clock is a clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type testBundle struct {
	ctx   context.Context
	store monitors.Store
	prj   *monitors.Project
	clock *clock
	reg   *prometheus.Registry
	logs  *syncBuffer
	ev    *evaluator.Evaluator
}

func setup(t *testing.T, open func(t *testing.T) monitors.Store) *testBundle {
	t.Helper()
	s := open(t)
	b := &testBundle{ctx: t.Context(), store: s, prj: storetest.MustProject(t, s), clock: &clock{now: t0},
		reg: prometheus.NewPedanticRegistry(), logs: &syncBuffer{}}
	b.ev = b.evaluator(t, b.reg, 7, 1)
	return b
}

// evaluator returns another evaluator on the bundle's store and clock, as
// another replica would run.
func (b *testBundle) evaluator(t *testing.T, reg prometheus.Registerer, batch, workers int) *evaluator.Evaluator {
	t.Helper()
	ev, err := evaluator.New(b.store, evaluator.Config{
		NowFunc:    b.clock.Now,
		BatchSize:  batch,
		Workers:    workers,
		Logger:     slog.New(slog.NewTextHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer: reg,
	})
	require.NoError(t, err)
	return ev
}

func (b *testBundle) runOnce(t *testing.T, at time.Time) *evaluator.Pass {
	t.Helper()
	b.clock.Set(at)
	pass, err := b.ev.RunOnce(b.ctx)
	require.NoError(t, err)
	return pass
}

// tick runs passes every 30 seconds from from up to and including to, as a
// running Vigil would, and returns the incidents they opened.
func (b *testBundle) tick(t *testing.T, from, to time.Time) int {
	t.Helper()
	opened := 0
	for at := from; ; at = at.Add(30 * time.Second) {
		at = minTime(at, to)
		opened += b.runOnce(t, at).Opened
		if !at.Before(to) {
			return opened
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// dueTogether makes n hourly monitors that succeeded at t0 and ticks the
// evaluator up to just before their deadline: all n fall due together at
// t0+1h5m.
func (b *testBundle) dueTogether(t *testing.T, n int) {
	t.Helper()
	var pings []*monitors.PingRecordParams
	for i := range n {
		slug := fmt.Sprintf("job-%04d", i)
		pings = append(pings, &monitors.PingRecordParams{ProjectPingKey: b.prj.PingKey, Slug: slug, Create: true,
			NewMonitor: storetest.NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: t0}})
	}
	storetest.MustRecord(t, b.store, pings...)
	b.tick(t, t0, t0.Add(time.Hour+4*time.Minute))
}

func (b *testBundle) monitor(t *testing.T, slug string, fn func(m *monitors.Monitor)) *monitors.Monitor {
	return storetest.MustMonitor(t, b.store, b.prj.ID, slug, fn)
}

func (b *testBundle) ping(t *testing.T, m *monitors.Monitor, kind monitors.PingKind, at time.Time) {
	t.Helper()
	storetest.MustRecord(t, b.store, storetest.Ping(m, kind, at))
}

func (b *testBundle) incidents(t *testing.T, m *monitors.Monitor) []*monitors.Incident {
	t.Helper()
	p := &monitors.IncidentListParams{ProjectID: b.prj.ID}
	if m != nil {
		p.MonitorID = m.ID
	}
	ins, err := b.store.IncidentList(b.ctx, p)
	require.NoError(t, err)
	return ins
}

// requireEvents checks that every incident has exactly one opened event, and
// one resolved event when resolved: each transition is delivered once.
func (b *testBundle) requireEvents(t *testing.T) {
	t.Helper()
	evs, err := b.store.IncidentEventList(b.ctx, &monitors.IncidentEventListParams{ProjectID: b.prj.ID})
	require.NoError(t, err)
	count := map[string]map[monitors.IncidentEventKind]int{}
	for _, e := range evs {
		if count[e.IncidentID] == nil {
			count[e.IncidentID] = map[monitors.IncidentEventKind]int{}
		}
		count[e.IncidentID][e.Kind]++
	}
	ins := b.incidents(t, nil)
	require.Len(t, count, len(ins), "no event without its incident")
	for _, in := range ins {
		require.Equal(t, 1, count[in.ID][monitors.EventOpened], "incident %s opened once", in.ID)
		want := 0
		if in.ResolvedAt != nil {
			want = 1
		}
		require.Equal(t, want, count[in.ID][monitors.EventResolved], "incident %s resolved once", in.ID)
	}
}

func forEachStore(t *testing.T, fn func(t *testing.T, b *testBundle)) {
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, open))
		})
	}
}

func TestMissedOpensOnceAtTheDeadline(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		m := b.monitor(t, "nightly", nil) // every hour, 5 minutes of grace
		quiet := b.monitor(t, "quiet", nil)
		b.ping(t, m, monitors.PingSuccess, t0)
		b.ping(t, quiet, monitors.PingSuccess, t0.Add(time.Hour))
		due := t0.Add(time.Hour + 5*time.Minute)

		pass := b.runOnce(t, due.Add(-time.Millisecond))
		require.Zero(t, pass.Evaluated)
		require.Equal(t, &due, pass.NextDeadline)
		require.Empty(t, b.incidents(t, nil))

		// Detected two seconds late (the clock jumped): the latency says so.
		pass = b.runOnce(t, due.Add(2*time.Second))
		require.Equal(t, 1, pass.Evaluated)
		require.Equal(t, 1, pass.Opened)
		ins := b.incidents(t, m)
		require.Len(t, ins, 1)
		in := ins[0]
		require.Equal(t, monitors.IncidentMissed, in.Kind)
		require.Equal(t, due.Add(2*time.Second), in.OpenedAt)
		require.Nil(t, in.ResolvedAt)
		require.Contains(t, in.Summary, "nightly did not ping within 1h of its last ping")
		require.Zero(t, in.PingID, "time opened it")

		got, err := b.store.MonitorGet(b.ctx, b.prj.ID, m.ID)
		require.NoError(t, err)
		require.Equal(t, monitors.StatusDown, got.State.Status)
		require.Nil(t, got.NextDeadlineAt, "only a ping changes it now")

		// More passes change nothing.
		for _, at := range []time.Time{due.Add(3 * time.Second), due.Add(50 * time.Second)} {
			pass = b.runOnce(t, at)
			require.Zero(t, pass.Opened)
		}
		require.Len(t, b.incidents(t, m), 1)

		// The ping that comes resolves it.
		b.ping(t, m, monitors.PingSuccess, due.Add(2*time.Hour))
		in2, err := b.store.IncidentGet(b.ctx, b.prj.ID, in.ID)
		require.NoError(t, err)
		require.NotNil(t, in2.ResolvedAt)
		b.requireEvents(t)

		require.Equal(t, 1.0, metric(t, b.reg, "vigil_evaluator_incidents_opened_total", "missed"))
		require.Equal(t, 1.0, metric(t, b.reg, "vigil_evaluator_monitors_evaluated_total", ""))
		h := histogramOf(t, b.reg, "vigil_evaluator_detection_latency_seconds")
		require.Equal(t, uint64(1), h.GetSampleCount())
		require.InDelta(t, 2.0, h.GetSampleSum(), 1e-6)
	})
}

func TestStuckRunPerRun(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		m := b.monitor(t, "etl", func(m *monitors.Monitor) { m.MaxRuntimeSeconds = 60 })
		storetest.MustRecord(t, b.store,
			&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: t0, RID: "a"}},
			&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: t0.Add(10 * time.Second), RID: "b"}},
			&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: t0.Add(20 * time.Second), RID: "b"}})

		require.Zero(t, b.runOnce(t, t0.Add(59*time.Second)).Opened)
		pass := b.runOnce(t, t0.Add(60*time.Second))
		require.Equal(t, 1, pass.Opened)

		var stuck *monitors.Incident
		for _, in := range b.incidents(t, m) {
			if in.Kind == monitors.IncidentStuck {
				stuck = in
			}
		}
		require.NotNil(t, stuck, "run a hangs while run b succeeded")
		require.Equal(t, int64(1), stuck.RunSeq)
		require.Contains(t, stuck.Summary, `run "a" started at`)
		require.Equal(t, 1.0, metric(t, b.reg, "vigil_evaluator_incidents_opened_total", "stuck"))

		require.Zero(t, b.runOnce(t, t0.Add(2*time.Minute)).Opened, "reported once")
		b.requireEvents(t)
	})
}

func TestPausedRaisesNothingAndResumeStartsClean(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		m := b.monitor(t, "backup", nil)
		b.ping(t, m, monitors.PingStart, t0)
		modify := func(fn func(m *monitors.Monitor, now time.Time) (*monitors.Transition, error), at time.Time) *monitors.Monitor {
			t.Helper()
			got, err := b.store.MonitorModify(b.ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID,
				Fn: func(m *monitors.Monitor) (*monitors.Transition, error) { return fn(m, at) }})
			require.NoError(t, err)
			return got
		}
		modify(monitors.Pause, t0.Add(time.Minute))

		// Its run would be stuck at +5m and its occurrence missed at +1h5m.
		for _, at := range []time.Time{t0.Add(10 * time.Minute), t0.Add(2 * time.Hour), t0.Add(48 * time.Hour)} {
			pass := b.runOnce(t, at)
			require.Zero(t, pass.Evaluated)
			require.Nil(t, pass.NextDeadline)
		}
		require.Empty(t, b.incidents(t, nil))

		got := modify(monitors.Resume, t0.Add(49*time.Hour))
		require.Equal(t, monitors.StatusNew, got.State.Status)
		require.Empty(t, got.State.Runs, "the run open when it was paused is gone")
		require.Nil(t, got.NextDeadlineAt, "nothing is expected until its next ping")
		require.Zero(t, b.runOnce(t, t0.Add(100*time.Hour)).Evaluated)
		require.Empty(t, b.incidents(t, nil))

		// After its next ping, it is judged again.
		b.ping(t, m, monitors.PingSuccess, t0.Add(100*time.Hour))
		require.Equal(t, 1, b.tick(t, t0.Add(100*time.Hour), t0.Add(101*time.Hour+5*time.Minute)))
		require.Len(t, b.incidents(t, nil), 1)
		b.requireEvents(t)
	})
}

// TestOutageGivesAFreshGraceWindow runs the evaluator, stops it, moves the
// clock past the deadlines as if Vigil had been down, and runs it again.
func TestOutageGivesAFreshGraceWindow(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		silent := b.monitor(t, "silent", nil)                                                 // due at +1h5m
		revived := b.monitor(t, "revived", nil)                                               // due at +1h5m, pings after the restart
		hung := b.monitor(t, "hung", func(m *monitors.Monitor) { m.MaxRuntimeSeconds = 600 }) // stuck at +30m
		early := b.monitor(t, "early", nil)                                                   // due at +15m, before the outage
		b.ping(t, silent, monitors.PingSuccess, t0)
		b.ping(t, revived, monitors.PingSuccess, t0)
		b.ping(t, hung, monitors.PingStart, t0.Add(20*time.Minute))
		b.ping(t, early, monitors.PingSuccess, t0.Add(-50*time.Minute))

		b.runOnce(t, t0.Add(29*time.Minute))
		require.Len(t, b.incidents(t, early), 1, "due before the outage: alerted as usual")

		// Down from +29m to +3h.
		back := t0.Add(3 * time.Hour)
		pass := b.runOnce(t, back)
		require.Zero(t, pass.Opened, "no storm of alerts on coming back")
		require.Equal(t, 3, pass.Evaluated)
		require.NotNil(t, pass.Outage)
		require.Equal(t, t0.Add(29*time.Minute), pass.Outage.StartedAt)
		require.Equal(t, back, pass.Outage.EndedAt)
		require.Len(t, b.incidents(t, nil), 1)

		logs := b.logs.String()
		require.Contains(t, logs, "level=WARN")
		require.Contains(t, logs, "monitors due during the gap get a fresh grace window")
		require.Contains(t, logs, "outage_duration=2h31m0s")
		require.Equal(t, 1.0, metric(t, b.reg, "vigil_outages_total", ""))
		require.Equal(t, (151 * time.Minute).Seconds(), metric(t, b.reg, "vigil_outage_last_duration_seconds", ""))

		// The next pass finds nothing left inside the gap: settled, logged
		// with the count.
		pass = b.runOnce(t, back.Add(time.Second))
		require.Zero(t, pass.Opened)
		require.NotNil(t, pass.Outage.SettledAt)
		require.Equal(t, int64(3), pass.Outage.MonitorsPostponed)
		require.Contains(t, b.logs.String(), "monitors_postponed=3")
		require.Equal(t, 3.0, metric(t, b.reg, "vigil_outage_last_monitors_postponed", ""))
		outages, err := b.store.OutageList(b.ctx, &monitors.OutageListParams{})
		require.NoError(t, err)
		require.Len(t, outages, 1)
		require.Equal(t, int64(3), outages[0].MonitorsPostponed)

		// revived pings within its fresh grace window; the others do not.
		b.ping(t, revived, monitors.PingSuccess, back.Add(2*time.Minute))
		require.Zero(t, b.tick(t, back.Add(time.Second), back.Add(5*time.Minute-time.Millisecond)), "the fresh grace (5m) has not run out")
		pass = b.runOnce(t, back.Add(5*time.Minute))
		require.Equal(t, 3, pass.Opened, "silent: missed; hung: stuck and missed")
		require.Len(t, b.incidents(t, silent), 1)
		require.Empty(t, b.incidents(t, revived))
		require.Len(t, b.incidents(t, hung), 2)
		for _, in := range b.incidents(t, nil) {
			if in.MonitorID != early.ID {
				require.Equal(t, back.Add(5*time.Minute), in.OpenedAt)
			}
		}
		b.requireEvents(t)

		// A gap shorter than the threshold is no outage.
		b.runOnce(t, back.Add(5*time.Minute+59*time.Second))
		require.Equal(t, 1.0, metric(t, b.reg, "vigil_outages_total", ""))
	})
}

// TestReplicasShareTheWork starts three evaluators on one PostgreSQL
// database with thousands of monitors falling due at once: every incident
// opens exactly once, and none is missed. The same holds when they start
// after an outage.
func TestReplicasShareTheWork(t *testing.T) {
	t.Parallel()
	const n = 3000
	b := setup(t, func(t *testing.T) monitors.Store { return testdb.Postgres(t) })
	for start := 0; start < n; start += 500 {
		var pings []*monitors.PingRecordParams
		for i := start; i < start+500; i++ {
			slug := fmt.Sprintf("job-%04d", i)
			at := t0
			if i%2 == 1 {
				at = t0.Add(time.Hour) // falls due after the outage
			}
			pings = append(pings, &monitors.PingRecordParams{ProjectPingKey: b.prj.PingKey, Slug: slug, Create: true,
				NewMonitor: storetest.NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at}})
		}
		storetest.MustRecord(t, b.store, pings...)
	}
	// Each replica runs two claims at once during the burst.
	b.ev = b.evaluator(t, nil, 50, 2)
	replicas := []*evaluator.Evaluator{b.ev, b.evaluator(t, nil, 50, 2), b.evaluator(t, nil, 50, 2)}

	// runAll runs the replicas at once, each pass after pass, until none is
	// left due, and returns the passes' totals per replica.
	runAll := func(at time.Time) []evaluator.Pass {
		t.Helper()
		b.clock.Set(at)
		totals := make([]evaluator.Pass, len(replicas))
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			errs []error
		)
		for i, ev := range replicas {
			wg.Go(func() {
				for {
					pass, err := ev.RunOnce(b.ctx)
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						return
					}
					totals[i].Evaluated += pass.Evaluated
					totals[i].Opened += pass.Opened
					if pass.Outage != nil {
						totals[i].Outage = pass.Outage
					}
					if pass.Evaluated == 0 && (pass.NextDeadline == nil || pass.NextDeadline.After(at)) {
						return
					}
				}
			})
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		return totals
	}
	sum := func(ps []evaluator.Pass) (evaluated, opened int) {
		for _, p := range ps {
			evaluated += p.Evaluated
			opened += p.Opened
		}
		return evaluated, opened
	}

	// Half the monitors fall due at +1h5m, all at once.
	runAll(t0)
	b.tick(t, t0, t0.Add(time.Hour+4*time.Minute))
	totals := runAll(t0.Add(time.Hour + 5*time.Minute))
	evaluated, opened := sum(totals)
	require.Equal(t, n/2, evaluated)
	require.Equal(t, n/2, opened)
	for i, p := range totals {
		require.NotZero(t, p.Evaluated, "replica %d took part", i)
	}
	ins := b.incidents(t, nil)
	require.Len(t, ins, n/2)
	seen := map[string]bool{}
	for _, in := range ins {
		require.False(t, seen[in.MonitorID], "one incident per monitor")
		seen[in.MonitorID] = true
	}

	// The replicas stop; Vigil is down across the other half's deadline
	// (+2h5m) and comes back at +3h: all three detect one outage between
	// them, postpone every monitor once, and alert once the fresh grace
	// runs out.
	back := t0.Add(3 * time.Hour)
	totals = runAll(back)
	evaluated, opened = sum(totals)
	require.Equal(t, n/2, evaluated)
	require.Zero(t, opened)
	outages, err := b.store.OutageList(b.ctx, &monitors.OutageListParams{})
	require.NoError(t, err)
	require.Len(t, outages, 1)
	require.Equal(t, int64(n/2), outages[0].MonitorsPostponed)

	b.tick(t, back, back.Add(4*time.Minute))
	totals = runAll(back.Add(5 * time.Minute))
	evaluated, opened = sum(totals)
	require.Equal(t, n/2, evaluated)
	require.Equal(t, n/2, opened)
	ins = b.incidents(t, nil)
	require.Len(t, ins, n)
	seen = map[string]bool{}
	for _, in := range ins {
		require.False(t, seen[in.MonitorID], "one incident per monitor")
		seen[in.MonitorID] = true
	}
	b.requireEvents(t)
	require.Equal(t, 1, countDetections(b.logs.String()), "detected by one replica")
}

func TestConfig(t *testing.T) {
	t.Parallel()
	require.NoError(t, evaluator.Config{}.Validate())
	require.NoError(t, evaluator.Config{BatchSize: 1, PollInterval: time.Second, OutageThreshold: 5 * time.Second}.Validate())
	err := evaluator.Config{BatchSize: -1, Workers: 100, PollInterval: 2 * time.Second, OutageThreshold: time.Second}.Validate()
	require.ErrorContains(t, err, "batch size")
	require.ErrorContains(t, err, "workers")
	require.ErrorContains(t, err, "poll interval")
	require.ErrorContains(t, err, "outage threshold")
	_, err = evaluator.New(nil, evaluator.Config{PollInterval: time.Minute})
	require.Error(t, err)

	reg := prometheus.NewRegistry()
	_, err = evaluator.New(nil, evaluator.Config{Registerer: reg})
	require.NoError(t, err)
	_, err = evaluator.New(nil, evaluator.Config{Registerer: reg})
	require.ErrorContains(t, err, "register evaluator metrics", "two evaluators cannot share one registry")
}

// metric returns the value of the named counter or gauge, of the series
// whose first label has the value lv when lv is not empty.
func metric(t *testing.T, g prometheus.Gatherer, name, lv string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if lv != "" && (len(m.GetLabel()) == 0 || m.GetLabel()[0].GetValue() != lv) {
				continue
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

func histogramOf(t *testing.T, g prometheus.Gatherer, name string) interface {
	GetSampleCount() uint64
	GetSampleSum() float64
} {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram()
		}
	}
	t.Fatalf("no metric %s", name)
	return nil
}

func countDetections(logs string) int {
	return strings.Count(logs, "monitors due during the gap get a fresh grace window")
}

// TestConcurrentRetryChainsOneGoesSilent runs three Hangfire retry chains
// of an hourly job at once, through the store and the evaluator with a set
// clock: the 02:00 chain's announced retry never comes, and its missed
// incident opens within grace of that retry; the 01:00 and 03:00 chains,
// and the occurrences after them, neither end it nor are disturbed by it.
func TestConcurrentRetryChainsOneGoesSilent(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		m := b.monitor(t, "hourly-sync", func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}
			m.Overlap = monitors.OverlapIgnore
		})
		day := time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)
		h := func(n int) time.Time { return day.Add(time.Duration(n) * time.Hour) }
		silent := storetest.HangfireChain(h(2), 8, storetest.ChainGoesSilent, true)
		awaited := *silent[len(silent)-1].RetryAt
		pings := slices.Concat(storetest.HangfireChain(h(0), 1, storetest.ChainSucceeds, true),
			storetest.HangfireChain(h(1), 11, storetest.ChainSucceeds, true), silent,
			storetest.HangfireChain(h(3), 10, storetest.ChainSucceeds, true))
		for n := 4; n <= 8; n++ {
			pings = append(pings, storetest.HangfireChain(h(n), 1, storetest.ChainSucceeds, true)...)
		}
		slices.SortStableFunc(pings, func(a, b monitors.Ping) int { return a.At.Compare(b.At) })

		// A pass every 30 seconds, as vigil serve runs, with the pings
		// recorded as their time comes.
		var alive int
		now := h(0)
		for _, p := range pings {
			if p.At.After(now) {
				b.tick(t, now, p.At)
				now = p.At
			}
			storetest.MustRecord(t, b.store, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: p})
			if got := b.get(t, m); len(got.State.Retries) > alive {
				alive = len(got.State.Retries)
			}
		}
		b.tick(t, now, h(9))
		require.Equal(t, 3, alive, "three chains were alive at once")

		ins := b.incidents(t, m)
		require.Len(t, ins, 1)
		in := ins[0]
		require.Equal(t, monitors.IncidentMissed, in.Kind)
		due := awaited.Add(m.Grace())
		require.False(t, in.OpenedAt.Before(due), "not before its retry plus grace")
		require.True(t, in.OpenedAt.Before(due.Add(30*time.Second)), "opened %s, due %s: within a pass of it", in.OpenedAt, due)
		require.Contains(t, in.Summary, "retry attempt 9 of the occurrence of 2026-03-03 02:00 UTC")
		require.Nil(t, in.ResolvedAt, "the other chains' attempts do not end it")
		got := b.get(t, m)
		require.Equal(t, monitors.StatusDown, got.State.Status)
		require.Empty(t, got.State.Retries, "01:00 and 03:00 ran to their end, each retry as announced")
		b.requireEvents(t)
	})
}

func (b *testBundle) get(t *testing.T, m *monitors.Monitor) *monitors.Monitor {
	t.Helper()
	got, err := b.store.MonitorGet(b.ctx, b.prj.ID, m.ID)
	require.NoError(t, err)
	return got
}

// overlapStore is a real store that holds the first claim of a pass, once
// it has locked its monitors, until a second claim has locked its own, and
// tells whether one did within a timeout.
type overlapStore struct {
	monitors.Store
	claims     atomic.Int32
	second     chan struct{}
	overlapped atomic.Bool
}

func (s *overlapStore) MonitorEvaluateDue(ctx context.Context, p *monitors.EvaluateDueParams) (*monitors.EvaluateDueResult, error) {
	q := *p
	q.Claimed = func(n int) {
		if p.Claimed != nil {
			p.Claimed(n)
		}
		switch s.claims.Add(1) {
		case 1:
			select {
			case <-s.second:
				s.overlapped.Store(true)
			case <-time.After(10 * time.Second):
			}
		case 2:
			close(s.second)
		}
	}
	return s.Store.MonitorEvaluateDue(ctx, &q)
}

// TestBurstClaimsOverlap: once the first claim of a pass has locked a full
// batch, the second worker claims while the first is still being
// evaluated and written, not after its commit; the two never take the
// same monitor, so every incident opens exactly once.
func TestBurstClaimsOverlap(t *testing.T) {
	t.Parallel()
	const n = 300
	b := setup(t, func(t *testing.T) monitors.Store { return testdb.Postgres(t) })
	b.dueTogether(t, n)

	s := &overlapStore{Store: b.store, second: make(chan struct{})}
	ev, err := evaluator.New(s, evaluator.Config{NowFunc: b.clock.Now, BatchSize: 50, Workers: 2,
		Logger: slog.New(slog.NewTextHandler(b.logs, nil))})
	require.NoError(t, err)
	b.clock.Set(t0.Add(time.Hour + 5*time.Minute))
	evaluated, opened := 0, 0
	for {
		pass, err := ev.RunOnce(b.ctx)
		require.NoError(t, err)
		evaluated += pass.Evaluated
		opened += pass.Opened
		if pass.Evaluated == 0 {
			break
		}
	}
	require.True(t, s.overlapped.Load(), "the second claim locked its monitors before the first committed")
	require.Equal(t, n, evaluated)
	require.Equal(t, n, opened)
	ins := b.incidents(t, nil)
	require.Len(t, ins, n)
	seen := map[string]bool{}
	for _, in := range ins {
		require.False(t, seen[in.MonitorID], "one incident per monitor")
		seen[in.MonitorID] = true
	}
}

// slowClaimStore is a real store whose every claim takes claimTime on the
// evaluator's clock, and which counts the heartbeat's stamps.
type slowClaimStore struct {
	monitors.Store
	clock     *clock
	claimTime time.Duration
	stamps    atomic.Int32
}

func (s *slowClaimStore) MonitorEvaluateDue(ctx context.Context, p *monitors.EvaluateDueParams) (*monitors.EvaluateDueResult, error) {
	res, err := s.Store.MonitorEvaluateDue(ctx, p)
	s.clock.mu.Lock()
	s.clock.now = s.clock.now.Add(s.claimTime)
	s.clock.mu.Unlock()
	return res, err
}

func (s *slowClaimStore) EvaluatorHeartbeat(ctx context.Context, p *monitors.EvaluatorHeartbeatParams) (*monitors.EvaluatorHeartbeat, error) {
	s.stamps.Add(1)
	return s.Store.EvaluatorHeartbeat(ctx, p)
}

// TestBacklogLongerThanAPollIntervalIsOnePass: a backlog that takes longer
// than PollInterval to drain is drained in one pass, its workers never
// waiting for each other at a pass's end, and the heartbeat is stamped
// again while it lasts (a long backlog is not an outage of Vigil).
func TestBacklogLongerThanAPollIntervalIsOnePass(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, b *testBundle) {
		const n = 300
		b.dueTogether(t, n)

		// Six claims of 50, each taking 400ms: 2.4s of claims in all.
		s := &slowClaimStore{Store: b.store, clock: b.clock, claimTime: 400 * time.Millisecond}
		ev, err := evaluator.New(s, evaluator.Config{NowFunc: b.clock.Now, BatchSize: 50, Workers: 2,
			PollInterval: time.Second, Logger: slog.New(slog.NewTextHandler(b.logs, nil))})
		require.NoError(t, err)
		b.clock.Set(t0.Add(time.Hour + 5*time.Minute))
		pass, err := ev.RunOnce(b.ctx)
		require.NoError(t, err)
		require.Equal(t, n, pass.Evaluated, "the whole backlog in one pass")
		require.Equal(t, n, pass.Opened)
		require.Nil(t, pass.Outage, "a long backlog is not an outage")
		require.GreaterOrEqual(t, s.stamps.Load(), int32(2), "the heartbeat is stamped again while the backlog lasts")
		require.Len(t, b.incidents(t, nil), n, "one incident per monitor")
	})
}
