package storetest

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// BenchMonitors is how many monitors BenchmarkPingRecordBatch spreads its
// pings over.
const BenchMonitors = 10000

// BenchmarkPingRecordBatch measures the ingest hot path: batches of 1, 100
// and 500 success pings, each to a different monitor, over BenchMonitors
// monitors, reported in pings/s. newStore returns an empty store.
func BenchmarkPingRecordBatch(b *testing.B, newStore func(tb testing.TB) monitors.Store) {
	s := newStore(b)
	prj := MustProject(b, s)
	keys := make([]string, BenchMonitors)
	for start := 0; start < BenchMonitors; start += 500 {
		var pings []*monitors.PingRecordParams
		for i := start; i < min(start+500, BenchMonitors); i++ {
			slug := fmt.Sprintf("job-%05d", i)
			m := NewMonitor("", slug, func(m *monitors.Monitor) { m.Schedule.EverySeconds = 60 })
			keys[i] = m.PingKey
			pings = append(pings, &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true, NewMonitor: m,
				Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}})
		}
		MustRecord(b, s, pings...)
	}

	at := T0
	next := 0
	for _, size := range []int{1, 100, 500} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			n := 0
			cpu0 := processCPU()
			for b.Loop() {
				at = at.Add(time.Second)
				pings := make([]*monitors.PingRecordParams, size)
				for i := range pings {
					pings[i] = &monitors.PingRecordParams{PingKey: keys[next], Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at,
						RemoteAddr: "127.0.0.1", UserAgent: "bench"}}
					next = (next + 1) % BenchMonitors
				}
				res, err := s.PingRecordBatch(b.Context(), &monitors.PingRecordBatchParams{Pings: pings})
				require.NoError(b, err)
				for _, r := range res {
					require.NoError(b, r.Err)
				}
				n += size
			}
			batches := float64(max(n/size, 1))
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pings/s")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/batches/1000, "ms/batch")
			// The CPU this process spent per batch: all of it for SQLite, the
			// client's share for PostgreSQL. Unlike the wall time, it hardly
			// changes when other work shares the machine.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/batches/1000, "cpu-ms/batch")
		})
	}
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchReportMonitors is how many monitors BenchmarkLoadReport reports on.
const BenchReportMonitors = 1000

// BenchmarkLoadReport measures making a week's report
// (monitors.LoadReport) of a project of BenchReportMonitors daily
// monitors, each with seven runs in the week, one in ten failing once.
// newStore returns an empty store.
func BenchmarkLoadReport(b *testing.B, newStore func(tb testing.TB) monitors.Store) {
	s := newStore(b)
	prj := MustProject(b, s)
	start, end := ReportWeekStart, ReportWeekEnd
	created := start.AddDate(0, 0, -1)
	var pings []*monitors.PingRecordParams
	flush := func() {
		if len(pings) > 0 {
			MustRecord(b, s, pings...)
			pings = nil
		}
	}
	for i := range BenchReportMonitors {
		slug := fmt.Sprintf("job-%05d", i)
		m := NewMonitor("", slug, func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 3 * * *", TZ: "UTC"}
			m.CreatedAt, m.UpdatedAt = created, created
		})
		for d := range 7 {
			at := start.AddDate(0, 0, d).Add(3 * time.Hour)
			kind := monitors.PingSuccess
			if i%10 == 0 && d == 3 {
				kind = monitors.PingFail
			}
			for _, p := range []struct {
				kind monitors.PingKind
				at   time.Time
			}{{monitors.PingStart, at}, {kind, at.Add(time.Duration(10+i%50) * time.Second)}} {
				pp := &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true, NewMonitor: m,
					Ping: monitors.Ping{Kind: p.kind, At: p.at, RID: fmt.Sprintf("%d-%d", i, d)}}
				pings = append(pings, pp)
			}
		}
		if len(pings) >= 490 {
			flush()
		}
	}
	flush()
	b.ResetTimer()
	for b.Loop() {
		r, err := monitors.LoadReport(b.Context(), s, prj.ID, monitors.ReportWeekly, start, end, end)
		require.NoError(b, err)
		require.Equal(b, BenchReportMonitors, r.Monitors)
		require.Equal(b, 7*BenchReportMonitors, r.Occurrences)
	}
}

// BenchEvaluateBatch is how many due monitors each claim of
// BenchmarkEvaluateDue evaluates: the evaluator's batch.
const BenchEvaluateBatch = 500

// BenchmarkEvaluateDue measures the evaluator's claim at a burst: each
// iteration makes BenchEvaluateBatch monitors fall due (outside the
// timer) and evaluates them in one MonitorEvaluateDue, each opening a
// missed incident with its event and a delivery to each of the project's
// two default channels. It reports the time and this process's CPU per due
// monitor (all of it for SQLite, the client's share for PostgreSQL).
// newStore returns an empty store.
func BenchmarkEvaluateDue(b *testing.B, newStore func(tb testing.TB) monitors.Store) {
	s := newStore(b)
	prj := MustProject(b, s)
	for _, name := range []string{"one", "two"} {
		_, err := s.ChannelCreate(b.Context(), &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: prj.ID,
			Kind: "webhook", Name: name, Config: []byte(`{"url":"https://example.com/hook"}`), IsDefault: true, Now: T0})
		require.NoError(b, err)
	}
	now := T0.Add(2 * time.Hour)
	made := 0
	var cpu, wall time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		pings := make([]*monitors.PingRecordParams, BenchEvaluateBatch)
		for i := range pings {
			slug := fmt.Sprintf("due-%07d", made)
			made++
			pings[i] = &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true,
				NewMonitor: NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}}
		}
		MustRecord(b, s, pings...)
		b.StartTimer()
		cpu0, t0 := processCPU(), time.Now()
		res, err := s.MonitorEvaluateDue(b.Context(), &monitors.EvaluateDueParams{Now: now, Limit: BenchEvaluateBatch})
		wall += time.Since(t0)
		cpu += processCPU() - cpu0
		require.NoError(b, err)
		require.Len(b, res.Evaluated, BenchEvaluateBatch)
	}
	due := float64(b.N * BenchEvaluateBatch)
	b.ReportMetric(float64(wall.Microseconds())/due, "µs/due")
	b.ReportMetric(float64(cpu.Microseconds())/due, "cpu-µs/due")
}

// BatchLoader is a store whose transactions the planning layer drives.
type BatchLoader interface {
	monitors.Store
	InTx(ctx context.Context, fn func(tx plan.Tx) error) error
}

// errRollBack ends BenchmarkPingBatchLoad's transactions.
var errRollBack = errors.New("roll back")

// BenchmarkPingBatchLoad measures reading a ping batch's monitors into Go
// values: each iteration loads (and locks) BenchLoadBatch monitors by
// their ping keys, as a batch of pings does, in a transaction it rolls
// back. It reports this process's CPU per monitor (all of it for SQLite,
// the client's share for PostgreSQL). newStore returns an empty store.
func BenchmarkPingBatchLoad(b *testing.B, newStore func(tb testing.TB) BatchLoader) {
	s := newStore(b)
	prj := MustProject(b, s)
	keys := make([]string, BenchMonitors/10)
	var pings []*monitors.PingRecordParams
	for i := range keys {
		slug := fmt.Sprintf("job-%05d", i)
		m := NewMonitor("", slug, func(m *monitors.Monitor) { m.Schedule.EverySeconds = 60; m.Tags = []string{"bench", "load"} })
		keys[i] = m.PingKey
		for j := range 3 {
			pings = append(pings, &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true, NewMonitor: m,
				Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0.Add(time.Duration(j) * time.Minute)}})
		}
		if len(pings) >= 300 {
			MustRecord(b, s, pings...)
			pings = nil
		}
	}
	if len(pings) > 0 {
		MustRecord(b, s, pings...)
	}
	next := 0
	cpu0 := processCPU()
	for b.Loop() {
		q := &plan.PingBatchQuery{PingKeys: make([]string, BenchLoadBatch), ProjectKeys: []string{}, Slugs: []plan.SlugRef{}, IDs: BenchLoadBatch}
		for i := range q.PingKeys {
			q.PingKeys[i] = keys[next]
			next = (next + 1) % len(keys)
		}
		err := s.InTx(b.Context(), func(tx plan.Tx) error {
			rows, err := tx.PingBatchLoad(b.Context(), q)
			if err != nil {
				return err
			}
			if len(rows.Monitors) != BenchLoadBatch {
				return fmt.Errorf("loaded %d monitors, want %d", len(rows.Monitors), BenchLoadBatch)
			}
			return errRollBack
		})
		if !errors.Is(err, errRollBack) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N*BenchLoadBatch)/1000, "cpu-µs/monitor")
}

// BenchLoadBatch is how many monitors each load of BenchmarkPingBatchLoad
// reads: about a batch of vigil bench ingest's flat-out run.
const BenchLoadBatch = 50
