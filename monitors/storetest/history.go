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

// OrphansSQL lists, one text a row, the pings, runs, incidents and
// incident events whose monitor does not exist. It is the same SQL on both
// databases; each store's test runs it for [Caps.Orphans].
const OrphansSQL = `SELECT 'ping ' || p.id || ' of ' || p.monitor_id FROM pings p
		WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = p.monitor_id)
	UNION ALL
	SELECT 'run ' || r.seq || ' of ' || r.monitor_id FROM runs r
		WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = r.monitor_id)
	UNION ALL
	SELECT 'incident ' || i.id || ' of ' || i.monitor_id FROM incidents i
		WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = i.monitor_id)
	UNION ALL
	SELECT 'event ' || e.id || ' of ' || e.monitor_id FROM incident_events e
		WHERE NOT EXISTS (SELECT 1 FROM monitors m WHERE m.id = e.monitor_id)`

// runHistory checks that a monitor's pings, runs, incidents and events go
// with it, however it goes: deleted alone, with its project, while pings
// for it are being written, or while its incidents are being reminded.
func runHistory(t *testing.T, newStore func(t *testing.T) monitors.Store, caps Caps) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b *bundle, caps Caps)
	}{
		{"History/MonitorDelete", testHistoryMonitorDelete},
		{"History/ProjectDelete", testHistoryProjectDelete},
		{"History/PingsRaceMonitorDelete", testHistoryPingsRaceDelete},
		{"History/RemindRaceMonitorDelete", testHistoryRemindRaceDelete},
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
// log ping, from at on, then a failure (an open incident and its event).
func recordRuns(t *testing.T, s monitors.Store, m *monitors.Monitor, at time.Time, n int) {
	t.Helper()
	var pings []*monitors.PingRecordParams
	for i := range n {
		at := at.Add(time.Duration(i) * time.Minute)
		pings = append(pings, Ping(m, monitors.PingStart, at), Ping(m, monitors.PingSuccess, at.Add(time.Second)))
	}
	MustRecord(t, s, append(pings, Ping(m, monitors.PingLog, at.Add(time.Duration(n)*time.Minute)))...)
	MustRecord(t, s, Ping(m, monitors.PingFail, at.Add(time.Duration(n)*time.Minute+time.Second)))
}

func testHistoryMonitorDelete(t *testing.T, b *bundle, caps Caps) {
	s, ctx := b.s, b.ctx
	gone := b.monitor(t, "gone", nil)
	keep := b.monitor(t, "keep", nil)
	recordRuns(t, s, gone, T0, 3)
	recordRuns(t, s, keep, T0, 2)
	require.Len(t, b.runs(t, gone), 4, "three runs and the failure")

	require.Len(t, b.incidents(t, monitors.IncidentListParams{MonitorID: gone.ID}), 1)

	require.NoError(t, s.MonitorDelete(ctx, b.prj.ID, gone.ID))
	require.Empty(t, caps.Orphans(t, s), "the deleted monitor's pings, runs, incidents and events went with it")
	require.Len(t, b.pings(t, keep), 6, "another monitor keeps its pings")
	require.Len(t, b.runs(t, keep), 3, "and its runs")
	require.Len(t, b.incidents(t, monitors.IncidentListParams{MonitorID: keep.ID}), 1, "and its incident")

	// A new monitor under the freed slug starts with no history.
	again := b.monitor(t, "gone", nil)
	require.Empty(t, b.pings(t, again))
	require.Empty(t, b.runs(t, again))
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{MonitorID: again.ID}))
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
	require.Empty(t, caps.Orphans(t, s), "the project's monitors' pings, runs, incidents and events went with them")
	for _, m := range ms {
		_, err := s.MonitorGet(ctx, gone.ID, m.ID)
		require.ErrorIs(t, err, monitors.ErrNotFound)
	}
	require.Len(t, b.pings(t, keep), 6, "another project's monitor keeps its pings")
	require.Len(t, b.runs(t, keep), 3, "and its runs")
	require.Len(t, b.incidents(t, monitors.IncidentListParams{MonitorID: keep.ID}), 1, "and its incident")
}

// testHistoryPingsRaceDelete deletes monitors while batches of pings for
// them are being written, from other goroutines: every batch either
// writes its pings, runs, incidents and events before the monitor goes
// (and they go with it) or finds the monitor gone; none fails whole, and
// no row is left without its monitor.
func testHistoryPingsRaceDelete(t *testing.T, b *bundle, caps Caps) {
	s, ctx := b.s, b.ctx
	const rounds, monitorsN = 8, 4
	for round := range rounds {
		var fns []func() error
		for i := range monitorsN {
			m := b.monitor(t, fmt.Sprintf("race-%d-%d", round, i), nil)
			acked := make(chan struct{})
			ack := sync.OnceFunc(func() { close(acked) })
			fns = append(fns, func() error { // pings, in batches of a run each, until the monitor is gone
				defer ack() // a pinger that failed lets the deleter go on
				at := T0
				for n := 0; ; n++ {
					at = at.Add(time.Minute)
					// Every other run fails: its batch opens an incident
					// (and the next resolves it), with their events.
					end := monitors.PingSuccess
					if n%2 == 1 {
						end = monitors.PingFail
					}
					res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
						Ping(m, monitors.PingStart, at), Ping(m, end, at.Add(time.Second))}})
					if err != nil {
						return fmt.Errorf("batch %d of %s failed whole: %w", n, m.Slug, err)
					}
					if errors.Is(res[0].Err, monitors.ErrNotFound) && errors.Is(res[1].Err, monitors.ErrNotFound) {
						if n == 0 {
							return fmt.Errorf("%s was gone before its first batch", m.Slug)
						}
						return nil
					}
					if res[0].Err != nil || res[1].Err != nil {
						return fmt.Errorf("batch %d of %s: %w, %w", n, m.Slug, res[0].Err, res[1].Err)
					}
					ack()
				}
			}, func() error { // deletes the monitor once a batch of its pings is in
				<-acked
				return deleteMonitor(b, m)
			})
		}
		race(t, s, caps, round, fns...)
	}
}

// deleteMonitor deletes m, for a race.
func deleteMonitor(b *bundle, m *monitors.Monitor) error {
	if err := b.s.MonitorDelete(b.ctx, b.prj.ID, m.ID); err != nil {
		return fmt.Errorf("delete %s: %w", m.Slug, err)
	}
	return nil
}

// race runs fns at once, each in a goroutine of its own, then checks that
// none failed and that no row is left without its monitor.
func race(t *testing.T, s monitors.Store, caps Caps, round int, fns ...func() error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(fns))
	start := make(chan struct{})
	for _, fn := range fns {
		wg.Go(func() {
			<-start
			if err := fn(); err != nil {
				errs <- err
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Empty(t, caps.Orphans(t, s), "round %d", round)
}

// testHistoryRemindRaceDelete deletes monitors while their open incidents
// are being reminded, from another goroutine. A reminder writes an event
// of an incident it locks, not of a monitor it locks: whichever commits
// first, no incident or event is left without its monitor.
func testHistoryRemindRaceDelete(t *testing.T, b *bundle, caps Caps) {
	s, ctx := b.s, b.ctx
	const rounds, monitorsN = 8, 4
	for round := range rounds {
		fns := []func() error{func() error { // reminds every open incident, an hour later each time
			for k := 1; k <= 2*monitorsN; k++ {
				now := T0.Add(time.Duration(k) * time.Hour)
				if _, err := s.IncidentRemind(ctx, &monitors.IncidentRemindParams{Now: now, Interval: time.Hour}); err != nil {
					return fmt.Errorf("remind at %s: %w", now, err)
				}
			}
			return nil
		}}
		for i := range monitorsN {
			m := b.monitor(t, fmt.Sprintf("remind-%d-%d", round, i), nil)
			failing(t, b, m, T0)
			fns = append(fns, func() error { return deleteMonitor(b, m) })
		}
		race(t, s, caps, round, fns...)
	}
}
