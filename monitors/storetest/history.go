package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// OrphansSQL lists, one text a row, the pings and runs whose monitor does
// not exist. It is the same SQL on both databases; each store's test runs
// it for [Caps.Orphans].
const OrphansSQL = `SELECT 'ping ' || p.id || ' of ' || p.monitor_id FROM pings p
		WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = p.monitor_id)
	UNION ALL
	SELECT 'run ' || r.seq || ' of ' || r.monitor_id FROM runs r
		WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = r.monitor_id)`

// runHistory checks that a monitor's pings and runs go with it, however it
// goes: deleted alone, with its project, or while pings for it are being
// written.
func runHistory(t *testing.T, newStore func(t *testing.T) monitors.Store, caps Caps) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b *bundle, caps Caps)
	}{
		{"History/MonitorDelete", testHistoryMonitorDelete},
		{"History/ProjectDelete", testHistoryProjectDelete},
		{"History/PingsRaceMonitorDelete", testHistoryPingsRaceDelete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if caps.Orphans == nil || caps.DeleteProject == nil {
				t.Fatal("Caps.Orphans and Caps.DeleteProject are required")
			}
			tc.fn(t, setup(t, newStore), caps)
		})
	}
}

// recordRuns gives m n finished runs (a start and a success each) and a
// log ping, from at on.
func recordRuns(t *testing.T, s monitors.Store, m *monitors.Monitor, at time.Time, n int) {
	t.Helper()
	var pings []*monitors.PingRecordParams
	for i := range n {
		at := at.Add(time.Duration(i) * time.Minute)
		pings = append(pings, Ping(m, monitors.PingStart, at), Ping(m, monitors.PingSuccess, at.Add(time.Second)))
	}
	MustRecord(t, s, append(pings, Ping(m, monitors.PingLog, at.Add(time.Duration(n)*time.Minute)))...)
}

func testHistoryMonitorDelete(t *testing.T, b *bundle, caps Caps) {
	s, ctx := b.s, b.ctx
	gone := b.monitor(t, "gone", nil)
	keep := b.monitor(t, "keep", nil)
	recordRuns(t, s, gone, T0, 3)
	recordRuns(t, s, keep, T0, 2)
	require.Len(t, b.runs(t, gone), 3)

	require.NoError(t, s.MonitorDelete(ctx, b.prj.ID, gone.ID))
	require.Empty(t, caps.Orphans(t, s), "the deleted monitor's pings and runs went with it")
	require.Len(t, b.pings(t, keep), 5, "another monitor keeps its pings")
	require.Len(t, b.runs(t, keep), 2, "and its runs")

	// A new monitor under the freed slug starts with no history.
	again := b.monitor(t, "gone", nil)
	require.Empty(t, b.pings(t, again))
	require.Empty(t, b.runs(t, again))
}

func testHistoryProjectDelete(t *testing.T, b *bundle, caps Caps) {
	s, ctx := b.s, b.ctx
	gone := MustProject(t, s)
	var ms []*monitors.Monitor
	for i := range 3 {
		m := MustMonitor(t, s, gone.ID, fmt.Sprintf("job-%d", i), nil)
		recordRuns(t, s, m, T0, i+1)
		ms = append(ms, m)
	}
	keep := b.monitor(t, "keep", nil)
	recordRuns(t, s, keep, T0, 2)

	caps.DeleteProject(t, s, gone.ID)
	require.Empty(t, caps.Orphans(t, s), "the project's monitors' pings and runs went with them")
	for _, m := range ms {
		_, err := s.MonitorGet(ctx, gone.ID, m.ID)
		require.ErrorIs(t, err, monitors.ErrNotFound)
	}
	require.Len(t, b.pings(t, keep), 5, "another project's monitor keeps its pings")
	require.Len(t, b.runs(t, keep), 2, "and its runs")
}

// testHistoryPingsRaceDelete deletes monitors while batches of pings for
// them are being written, from other goroutines: every batch either
// writes its pings and runs before the monitor goes (and they go with it)
// or finds the monitor gone; none fails whole, and no ping or run is left
// without its monitor.
func testHistoryPingsRaceDelete(t *testing.T, b *bundle, caps Caps) {
	s, ctx := b.s, b.ctx
	const rounds, monitorsN = 8, 4
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make(chan error, 2*monitorsN)
		start := make(chan struct{})
		for i := range monitorsN {
			m := b.monitor(t, fmt.Sprintf("race-%d-%d", round, i), nil)
			acked := make(chan struct{})
			ack := sync.OnceFunc(func() { close(acked) })
			wg.Add(2)
			go func() { // pings, in batches of a run each, until the monitor is gone
				defer wg.Done()
				defer ack() // a pinger that failed lets the deleter go on
				<-start
				at := T0
				for n := 0; ; n++ {
					at = at.Add(time.Minute)
					res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
						Ping(m, monitors.PingStart, at), Ping(m, monitors.PingSuccess, at.Add(time.Second))}})
					if err != nil {
						errs <- fmt.Errorf("batch %d of %s failed whole: %w", n, m.Slug, err)
						return
					}
					if errors.Is(res[0].Err, monitors.ErrNotFound) && errors.Is(res[1].Err, monitors.ErrNotFound) {
						if n == 0 {
							errs <- fmt.Errorf("%s was gone before its first batch", m.Slug)
						}
						return
					}
					if res[0].Err != nil || res[1].Err != nil {
						errs <- fmt.Errorf("batch %d of %s: %w, %w", n, m.Slug, res[0].Err, res[1].Err)
						return
					}
					ack()
				}
			}()
			go func() { // deletes the monitor once a batch of its pings is in
				defer wg.Done()
				<-acked
				if err := s.MonitorDelete(ctx, b.prj.ID, m.ID); err != nil {
					errs <- fmt.Errorf("delete %s: %w", m.Slug, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Empty(t, caps.Orphans(t, s), "round %d", round)
	}
}
