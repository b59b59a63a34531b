package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// Write writes w in one pipelined round trip: the pings (one INSERT from
// unnest of arrays), the monitors' states (one UPDATE ... FROM unnest) or
// whole rows, the runs (one upsert), the incident changes in order, and the
// incidents opened by time (one statement). It returns the incident events
// the statements inserted.
func (t txn) Write(ctx context.Context, w *plan.WriteSet) ([]*monitors.IncidentEvent, error) {
	b := &pgx.Batch{}
	var events []*monitors.IncidentEvent
	returnEvents := func(ic *plan.IncidentWrite) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			evs, err := eventRows(rows)
			if err == nil && len(evs) == 0 && ic != nil && ic.Change.Op == monitors.IncidentOpen {
				// The database already has an open incident of this kind:
				// keep it, and its single opened event.
				t.s.log.WarnContext(ctx, "incident already open; kept the open one", "monitor_id", ic.MonitorID, "kind", ic.Change.Kind)
			}
			events = append(events, evs...)
			return err
		}
	}
	if len(w.Pings) > 0 {
		queuePings(b, w.Pings)
	}
	if err := queueMonitors(b, w); err != nil {
		return nil, err
	}
	if len(w.Runs) > 0 {
		queueRuns(b, w.Runs)
	}
	for i := range w.Incidents {
		ic := &w.Incidents[i]
		at, c := ic.Change.At.UTC(), ic.Change
		switch c.Op {
		case monitors.IncidentOpen:
			args := []any{ic.ID, ic.ProjectID, ic.MonitorID, string(c.Kind), at, c.Summary, c.RunSeq, ic.PingID(), c.Held, c.SuppressedBy}
			if c.Held {
				// Recorded, and not returned: a held event is delivered
				// when the hold ends (IncidentRelease).
				b.Queue(qIncidentOpen, args...)
				continue
			}
			b.Queue(qIncidentOpen+eventReturning, args...).Query(returnEvents(ic))
		case monitors.IncidentUpdate:
			if c.Held {
				b.Queue(qIncidentUpdate, ic.MonitorID, string(c.Kind), at, c.Summary)
				continue
			}
			b.Queue(qIncidentUpdate+eventReturning, ic.MonitorID, string(c.Kind), at, c.Summary).Query(returnEvents(nil))
		case monitors.IncidentRelease:
			b.Queue(qIncidentRelease, ic.MonitorID, string(c.Kind), at).Query(returnEvents(nil))
		case monitors.IncidentResolve:
			b.Queue(qIncidentResolve+eventReturning, ic.MonitorID, string(c.Kind), at, c.Summary).Query(returnEvents(nil))
		case monitors.IncidentClose:
			b.Queue(qIncidentClose, ic.MonitorID, string(c.Kind), at, c.Summary)
		case monitors.MonitorNotice:
			b.Queue(qMonitorNotice, ic.MonitorID, ic.ProjectID, string(c.Event), at, c.Summary).Query(returnEvents(nil))
		}
	}
	opens, held := splitHeld(w.Opens)
	if n := len(held); n > 0 {
		// Recorded, and not returned: a held event is delivered when the
		// hold ends (IncidentRelease).
		ids, projects, mids, kinds, summaries, ats, runSeqs := openArrays(held)
		by := make([]string, n)
		for i, ic := range held {
			by[i] = ic.Change.SuppressedBy
		}
		b.Queue(qIncidentOpenHeldMany, ids, projects, mids, kinds, ats, summaries, runSeqs, by)
	}
	if n := len(opens); n > 0 {
		// A burst of due monitors costs one statement per claim rather than
		// one per incident.
		ids, projects, mids, kinds, summaries, ats, runSeqs := openArrays(opens)
		b.Queue(qIncidentOpenMany+openedReturning, ids, projects, mids, kinds, ats, summaries, runSeqs).Query(func(rows pgx.Rows) error {
			evs, err := openedRows(rows, opens, ats)
			if err == nil && len(evs) != n {
				t.s.log.WarnContext(ctx, "incidents already open; kept the open ones", "opened", len(evs), "asked", n)
			}
			events = append(events, evs...)
			return err
		})
	}
	if b.Len() == 0 {
		return nil, nil
	}
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, interpret(err)
	}
	return events, nil
}

// splitHeld splits incidents opened by time into those not held and those
// held, each in their order.
func splitHeld(opens []plan.IncidentWrite) (notHeld, held []plan.IncidentWrite) {
	for _, ic := range opens {
		if ic.Change.Held {
			held = append(held, ic)
		} else {
			notHeld = append(notHeld, ic)
		}
	}
	return notHeld, held
}

// openArrays are the arguments of qIncidentOpenMany for opens.
func openArrays(opens []plan.IncidentWrite) (ids, projects, mids, kinds, summaries []string, ats []time.Time, runSeqs []int64) {
	n := len(opens)
	ids, projects, mids, kinds, summaries = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ats, runSeqs = make([]time.Time, n), make([]int64, n)
	for i, ic := range opens {
		ids[i], projects[i], mids[i], kinds[i], summaries[i] = ic.ID, ic.ProjectID, ic.MonitorID, string(ic.Change.Kind), ic.Change.Summary
		ats[i], runSeqs[i] = ic.Change.At.UTC(), ic.Change.RunSeq
	}
	return ids, projects, mids, kinds, summaries, ats, runSeqs
}

// queueMonitors queues the write of w's monitors, each checked to exist.
func queueMonitors(b *pgx.Batch, w *plan.WriteSet) error {
	if w.FullRow {
		for _, m := range w.Monitors {
			args, err := plan.MonitorArgs(m)
			if err != nil {
				return err
			}
			id := m.ID
			b.Queue(qMonitorUpdate, args...).Exec(func(tag pgconn.CommandTag) error {
				if tag.RowsAffected() != 1 {
					return fmt.Errorf("update monitor %s: %w", id, monitors.ErrNotFound)
				}
				return nil
			})
		}
		return nil
	}
	n := len(w.Monitors)
	if n == 0 {
		return nil
	}
	ids, statuses, states := make([]string, n), make([]string, n), make([][]byte, n)
	lastPing, expected, deadline := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
	// The states' JSON, one after the other in one buffer: each state is
	// a slice of it.
	buf := make([]byte, 0, 256*n)
	for i, m := range w.Monitors {
		start := len(buf)
		var err error
		if buf, err = monitors.AppendStateJSON(buf, &m.State); err != nil {
			return fmt.Errorf("monitor %s: encode state: %w", m.ID, err)
		}
		ids[i], statuses[i], states[i] = m.ID, string(m.State.Status), buf[start:len(buf):len(buf)]
		lastPing[i], expected[i], deadline[i] = plan.TimeOrNil(m.State.LastPingAt), plan.TimeOrNil(m.State.Expected), plan.CeilMicro(m.NextDeadlineAt)
	}
	b.Queue(qMonitorUpdateState, ids, statuses, states, lastPing, expected, deadline).Exec(func(tag pgconn.CommandTag) error {
		if got := tag.RowsAffected(); got != int64(n) {
			return fmt.Errorf("update state of %d monitors: %d found: %w", n, got, monitors.ErrNotFound)
		}
		return nil
	})
	return nil
}

func queueRuns(b *pgx.Batch, runs []monitors.Run) {
	n := len(runs)
	var (
		mids, rids, outcomes = make([]string, n), make([]string, n), make([]string, n)
		seqs                 = make([]int64, n)
		started, finished    = make([]*time.Time, n), make([]*time.Time, n)
		durations            = make([]*int64, n)
		attempts             = make([]int32, n)
		exits                = make([]*int32, n)
		willRetry, stuck     = make([]bool, n), make([]bool, n)
	)
	for i, r := range runs {
		mids[i], seqs[i], rids[i], outcomes[i] = r.MonitorID, r.Seq, plan.CleanText(r.RID), string(r.Outcome)
		started[i], finished[i], durations[i] = utcPtr(r.StartedAt), utcPtr(r.FinishedAt), r.DurationMS
		attempts[i], exits[i], willRetry[i], stuck[i] = int32(r.Attempt), int32Ptr(r.ExitCode), r.WillRetry, r.Stuck
	}
	b.Queue(qRunUpsert, mids, seqs, rids, started, finished, outcomes, durations, attempts, exits, willRetry, stuck)
}

func queuePings(b *pgx.Batch, pings []*monitors.Ping) {
	n := len(pings)
	var (
		ids                   = make([]int64, n)
		mids, kinds, rids     = make([]string, n), make([]string, n), make([]string, n)
		ats                   = make([]time.Time, n)
		attempts              = make([]int32, n)
		retryAt, scheduledAt  = make([]*time.Time, n), make([]*time.Time, n)
		exits                 = make([]*int32, n)
		durations             = make([]*int64, n)
		bodies, addrs, agents = make([]string, n), make([]string, n), make([]string, n)
		truncated             = make([]bool, n)
	)
	for i, p := range pings {
		ids[i], mids[i], kinds[i], rids[i] = p.ID, p.MonitorID, string(p.Kind), p.RID
		ats[i], attempts[i], retryAt[i], exits[i], durations[i] = p.At.UTC(), int32(p.Attempt), utcPtr(p.RetryAt), int32Ptr(p.ExitCode), p.DurationMS
		bodies[i], truncated[i], addrs[i], agents[i] = p.Body, p.BodyTruncated, p.RemoteAddr, p.UserAgent
		scheduledAt[i] = utcPtr(p.ScheduledAt)
	}
	b.Queue(qPingInsert, ids, mids, kinds, ats, rids, attempts, retryAt, exits, durations, bodies, truncated, addrs, agents,
		scheduledAt)
}

func int32Ptr(p *int) *int32 {
	if p == nil {
		return nil
	}
	v := int32(*p)
	return &v
}

// openedRows reads the opened events of opens that openedReturning
// returns, in the order they were inserted. The rest of each event is
// what opens and ats (their instants, as sent) say: no need to read it
// back.
func openedRows(rows pgx.Rows, opens []plan.IncidentWrite, ats []time.Time) ([]*monitors.IncidentEvent, error) {
	byIncident := make(map[string]int, len(opens))
	for i := range opens {
		byIncident[opens[i].ID] = i
	}
	var (
		id       int64
		incident string
		evs      = make([]*monitors.IncidentEvent, 0, len(opens))
	)
	if _, err := pgx.ForEachRow(rows, []any{&id, &incident}, func() error {
		i, ok := byIncident[incident]
		if !ok {
			return fmt.Errorf("open incidents: event %d of incident %s, which was not opened", id, incident)
		}
		ic := &opens[i]
		// PostgreSQL keeps microseconds: the instant as it reads it back.
		evs = append(evs, &monitors.IncidentEvent{ID: id, IncidentID: ic.ID, MonitorID: ic.MonitorID, ProjectID: ic.ProjectID,
			Kind: monitors.EventOpened, At: ats[i].Truncate(time.Microsecond), Summary: ic.Change.Summary})
		return nil
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(evs, func(a, b *monitors.IncidentEvent) int { return cmp.Compare(a.ID, b.ID) })
	return evs, nil
}

// eventRows reads the incident events eventReturning returns.
func eventRows(rows pgx.Rows) ([]*monitors.IncidentEvent, error) {
	return pgx.CollectRows(rows, func(pgx.CollectableRow) (*monitors.IncidentEvent, error) { return plan.ScanEvent(pgRows{rows}) })
}
