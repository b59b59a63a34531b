package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// Write writes w with the prepared statements: multi-row statements for
// the pings, the monitors' states and the runs, then each incident change
// with its event (SQLite has no data-modifying CTEs, so an incident and its
// event are two statements). It returns the events it inserted.
func (t txn) Write(ctx context.Context, w *plan.WriteSet) ([]*monitors.IncidentEvent, error) {
	st, tx := t.s.stmts, t.tx
	if err := t.insertPings(ctx, w.Pings); err != nil {
		return nil, err
	}
	if w.FullRow {
		for _, m := range w.Monitors {
			args, err := plan.MonitorArgs(m)
			if err != nil {
				return nil, err
			}
			if n, err := rowsAffected(tx.StmtContext(ctx, st.monitorUpdate).ExecContext(ctx, sqlArgs(args)...)); err != nil {
				return nil, fmt.Errorf("update monitor %s: %w", m.ID, interpret(err))
			} else if n != 1 {
				return nil, fmt.Errorf("update monitor %s: %w", m.ID, monitors.ErrNotFound)
			}
		}
	} else {
		rows := make([][]any, len(w.Monitors))
		for i, m := range w.Monitors {
			state, err := plan.EncodeState(m.State)
			if err != nil {
				return nil, fmt.Errorf("monitor %s: %w", m.ID, err)
			}
			rows[i] = []any{m.ID, string(m.State.Status), string(state), microsOrNil(m.State.LastPingAt),
				microsOrNil(m.State.Expected), ceilMicros(m.NextDeadlineAt)}
		}
		n, err := execBulk(ctx, tx, st.monitorUpdateState, rows)
		if err != nil {
			return nil, fmt.Errorf("update monitor states: %w", interpret(err))
		}
		if n != int64(len(rows)) {
			return nil, fmt.Errorf("update state of %d monitors: %d found: %w", len(rows), n, monitors.ErrNotFound)
		}
	}

	rows := make([][]any, len(w.Runs))
	for i, r := range w.Runs {
		rows[i] = []any{r.MonitorID, r.Seq, plan.CleanText(r.RID), microsPtr(r.StartedAt), microsPtr(r.FinishedAt),
			string(r.Outcome), nullInt64(r.DurationMS), r.Attempt, nullInt(r.ExitCode), r.WillRetry, r.Stuck}
	}
	if _, err := execBulk(ctx, tx, st.runUpsert, rows); err != nil {
		return nil, fmt.Errorf("write runs: %w", interpret(err))
	}

	var events []*monitors.IncidentEvent
	for _, ic := range slices.Concat(w.Incidents, w.Opens) {
		evs, err := t.writeIncident(ctx, &ic)
		if err != nil {
			return nil, fmt.Errorf("monitor %s: %w", ic.MonitorID, err)
		}
		events = append(events, evs...)
	}
	return events, nil
}

// insertPings inserts pings with multi-row statements and sets their IDs.
func (t txn) insertPings(ctx context.Context, pings []*monitors.Ping) error {
	for _, n := range chunks(len(pings)) {
		chunk := pings[:n]
		pings = pings[n:]
		args := make([]any, 0, n*13)
		for _, p := range chunk {
			args = append(args, p.MonitorID, string(p.Kind), micros(p.At), p.RID, p.Attempt, microsPtr(p.RetryAt),
				nullInt(p.ExitCode), nullInt64(p.DurationMS), p.Body, p.BodyTruncated, p.RemoteAddr, p.UserAgent,
				microsPtr(p.ScheduledAt))
		}
		res, err := t.tx.StmtContext(ctx, t.s.stmts.pingInsert.stmt(n)).ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("insert pings: %w", interpret(err))
		}
		inserted, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("insert pings: %w", interpret(err))
		}
		last, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("insert pings: %w", interpret(err))
		}
		if inserted != int64(n) {
			return fmt.Errorf("insert pings: %d of %d inserted", inserted, n)
		}
		// The statement's rows took the n IDs that end with last, in
		// row order (see qPingInsert).
		for i, p := range chunk {
			p.ID = last - int64(n-1-i)
		}
	}
	return nil
}

// execBulk runs b over rows, in chunks, and returns the rows affected.
func execBulk(ctx context.Context, tx *sql.Tx, b *bulk, rows [][]any) (int64, error) {
	var total int64
	for _, n := range chunks(len(rows)) {
		chunk := rows[:n]
		rows = rows[n:]
		args := make([]any, 0, n*len(chunk[0]))
		for _, r := range chunk {
			args = append(args, r...)
		}
		k, err := rowsAffected(tx.StmtContext(ctx, b.stmt(n)).ExecContext(ctx, args...))
		if err != nil {
			return total, err
		}
		total += k
	}
	return total, nil
}

func rowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// writeIncident applies one incident change and records its event.
func (t txn) writeIncident(ctx context.Context, ic *plan.IncidentWrite) ([]*monitors.IncidentEvent, error) {
	st, tx, c := t.s.stmts, t.tx, ic.Change
	at := micros(c.At)
	event := func(id, project string, kind monitors.IncidentEventKind) ([]*monitors.IncidentEvent, error) {
		rows, err := tx.StmtContext(ctx, st.eventInsert).QueryContext(ctx, id, ic.MonitorID, project, string(kind), at, c.Summary)
		if err != nil {
			return nil, interpret(err)
		}
		return collect(rows, plan.ScanEvent)
	}
	switch c.Op {
	case monitors.IncidentOpen:
		n, err := rowsAffected(tx.StmtContext(ctx, st.incidentOpen).ExecContext(ctx, ic.ID, ic.ProjectID, ic.MonitorID,
			string(c.Kind), at, c.Summary, c.RunSeq, ic.PingID(), c.Held, c.SuppressedBy))
		if err != nil {
			return nil, fmt.Errorf("open %s incident: %w", c.Kind, interpret(err))
		}
		if n == 0 {
			// The database already has an open incident of this kind: keep
			// it, and its single opened event.
			t.s.log.WarnContext(ctx, "incident already open; kept the open one", "monitor_id", ic.MonitorID, "kind", c.Kind)
			return nil, nil
		}
		evs, err := event(ic.ID, ic.ProjectID, monitors.EventOpened)
		if c.Held {
			// Recorded, and not returned: a held event is delivered when
			// the hold ends (IncidentRelease).
			return nil, err
		}
		return evs, err
	case monitors.IncidentRelease:
		rows, err := tx.QueryContext(ctx, qIncidentRelease, ic.MonitorID, string(c.Kind), at)
		if err != nil {
			return nil, fmt.Errorf("release %s incident: %w", c.Kind, interpret(err))
		}
		ids, err := collect(rows, func(r plan.Row) (id string, err error) { return id, r.Scan(&id) })
		if err != nil {
			return nil, fmt.Errorf("release %s incident: %w", c.Kind, err)
		}
		var out []*monitors.IncidentEvent
		for _, id := range ids {
			rows, err := tx.QueryContext(ctx, qReleasedEvent, id, at)
			if err != nil {
				return nil, fmt.Errorf("release %s incident: %w", c.Kind, interpret(err))
			}
			evs, err := collect(rows, plan.ScanEvent)
			if err != nil {
				return nil, fmt.Errorf("release %s incident: %w", c.Kind, err)
			}
			out = append(out, evs...)
		}
		return out, nil
	case monitors.IncidentClose:
		if _, err := tx.ExecContext(ctx, qIncidentClose, ic.MonitorID, string(c.Kind), at, c.Summary); err != nil {
			return nil, fmt.Errorf("close %s incident: %w", c.Kind, interpret(err))
		}
		return nil, nil
	case monitors.MonitorNotice:
		rows, err := tx.QueryContext(ctx, qMonitorNotice, ic.MonitorID, ic.ProjectID, string(c.Event), at, c.Summary)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", c.Event, interpret(err))
		}
		return collect(rows, plan.ScanEvent)
	case monitors.IncidentUpdate:
		rows, err := tx.StmtContext(ctx, st.incidentUpdate).QueryContext(ctx, ic.MonitorID, string(c.Kind), at, c.Summary)
		if err != nil {
			return nil, fmt.Errorf("update %s incident: %w", c.Kind, interpret(err))
		}
		evs, err := collect(rows, plan.ScanEvent)
		if c.Held {
			return nil, err
		}
		return evs, err
	default: // resolve
		rows, err := tx.StmtContext(ctx, st.incidentResolve).QueryContext(ctx, ic.MonitorID, string(c.Kind), at, c.Summary)
		if err != nil {
			return nil, fmt.Errorf("resolve %s incident: %w", c.Kind, interpret(err))
		}
		type resolved struct{ id, project string }
		done, err := collect(rows, func(r plan.Row) (v resolved, err error) { return v, r.Scan(&v.id, &v.project) })
		if err != nil {
			return nil, fmt.Errorf("resolve %s incident: %w", c.Kind, err)
		}
		var out []*monitors.IncidentEvent
		for _, r := range done {
			evs, err := event(r.id, r.project, monitors.EventResolved)
			if err != nil {
				return nil, fmt.Errorf("record %s incident resolved: %w", c.Kind, err)
			}
			out = append(out, evs...)
		}
		return out, nil
	}
}
