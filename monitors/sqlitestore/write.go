package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/vigilhq/vigil/monitors"
)

// change is one transition of a monitor, with the ping that caused it (nil
// when time or a person did).
type change struct {
	m    *monitors.Monitor
	tr   *monitors.Transition
	ping *monitors.Ping
}

// writeSet is everything one transaction writes: the final state of each
// monitor it changed, the pings it received, and the transitions that led
// there, in the order they happened.
type writeSet struct {
	monitors []*monitors.Monitor // each once
	// fullRow writes the monitors' whole rows (a person changed their
	// configuration); otherwise only their state.
	fullRow bool
	pings   []*monitors.Ping // their IDs are set as they are inserted
	changes []change
}

// write writes w in tx with the prepared statements. It is the only writer
// of monitor state, runs, incidents and incident events; every path that
// changes a monitor (PingRecordBatch, MonitorEvaluateDue, MonitorModify)
// goes through it. The incident events it inserts get their deliveries,
// and the jobs that send them, in the same transaction.
func (s *Store) write(ctx context.Context, tx *sql.Tx, w *writeSet) error {
	st := s.stmts
	if err := s.insertPings(ctx, tx, w.pings); err != nil {
		return err
	}

	if w.fullRow {
		for _, m := range w.monitors {
			args, err := monitorArgs(m)
			if err != nil {
				return err
			}
			res, err := tx.StmtContext(ctx, st.monitorUpdate).ExecContext(ctx, args...)
			if err != nil {
				return fmt.Errorf("update monitor %s: %w", m.ID, interpret(err))
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("update monitor %s: %w", m.ID, err)
			} else if n != 1 {
				return fmt.Errorf("update monitor %s: %w", m.ID, monitors.ErrNotFound)
			}
		}
	} else {
		rows := make([][]any, len(w.monitors))
		for i, m := range w.monitors {
			m.NextDeadlineAt = m.NextDeadline()
			state, err := encodeState(m.State)
			if err != nil {
				return fmt.Errorf("monitor %s: %w", m.ID, err)
			}
			rows[i] = []any{m.ID, string(m.State.Status), state, microsOrNil(m.State.LastPingAt),
				microsOrNil(m.State.Expected), ceilMicros(m.NextDeadlineAt)}
		}
		n, err := execBulk(ctx, tx, st.monitorUpdateState, rows)
		if err != nil {
			return fmt.Errorf("update monitor states: %w", interpret(err))
		}
		if n != int64(len(rows)) {
			return fmt.Errorf("update state of %d monitors: %d found: %w", len(rows), n, monitors.ErrNotFound)
		}
	}

	runs := collectRuns(w.changes)
	rows := make([][]any, len(runs))
	for i, r := range runs {
		rows[i] = []any{r.MonitorID, r.Seq, r.RID, microsPtr(r.StartedAt), microsPtr(r.FinishedAt),
			string(r.Outcome), nullInt64(r.DurationMS), r.Attempt, nullInt(r.ExitCode), r.WillRetry, r.Stuck}
	}
	if _, err := execBulk(ctx, tx, st.runUpsert, rows); err != nil {
		return fmt.Errorf("write runs: %w", interpret(err))
	}

	var events []*monitors.IncidentEvent
	for _, c := range w.changes {
		var pingID int64
		if c.ping != nil {
			pingID = c.ping.ID
		}
		for _, ic := range c.tr.Incidents {
			if err := s.writeIncident(ctx, tx, c.m, ic, pingID, &events); err != nil {
				return fmt.Errorf("monitor %s: %w", c.m.ID, err)
			}
		}
	}
	return s.deliver(ctx, tx, events)
}

// insertPings inserts pings with multi-row statements and sets their IDs.
func (s *Store) insertPings(ctx context.Context, tx *sql.Tx, pings []*monitors.Ping) error {
	for _, n := range chunks(len(pings)) {
		chunk := pings[:n]
		pings = pings[n:]
		stmt := s.stmts.pingInsert.stmt(n)
		args := make([]any, 0, n*12)
		for _, p := range chunk {
			args = append(args, p.MonitorID, string(p.Kind), micros(p.At), p.RID, p.Attempt, microsPtr(p.RetryAt),
				nullInt(p.ExitCode), nullInt64(p.DurationMS), p.Body, p.BodyTruncated, p.RemoteAddr, p.UserAgent)
		}
		rows, err := tx.StmtContext(ctx, stmt).QueryContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("insert pings: %w", interpret(err))
		}
		ids, err := collect(rows, func(r scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		})
		if err != nil {
			return fmt.Errorf("insert pings: %w", interpret(err))
		}
		if len(ids) != n {
			return fmt.Errorf("insert pings: %d of %d inserted", len(ids), n)
		}
		// RETURNING yields rows in no promised order; IDs grow in row order.
		slices.Sort(ids)
		for i, p := range chunk {
			p.ID = ids[i]
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
		stmt := b.stmt(n)
		args := make([]any, 0, n*len(chunk[0]))
		for _, r := range chunk {
			args = append(args, r...)
		}
		res, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args...)
		if err != nil {
			return total, err
		}
		k, err := res.RowsAffected()
		if err != nil {
			return total, err
		}
		total += k
	}
	return total, nil
}

// writeIncident applies one incident change with its event, which it
// appends to events.
func (s *Store) writeIncident(ctx context.Context, tx *sql.Tx, m *monitors.Monitor, ic monitors.IncidentChange, pingID int64,
	events *[]*monitors.IncidentEvent) error {
	st := s.stmts
	at := micros(ic.At)
	switch ic.Op {
	case monitors.IncidentOpen:
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("new incident id: %w", err)
		}
		res, err := tx.StmtContext(ctx, st.incidentOpen).ExecContext(ctx, id.String(), m.ProjectID, m.ID, string(ic.Kind),
			at, ic.Summary, ic.RunSeq, pingID)
		if err != nil {
			return fmt.Errorf("open %s incident: %w", ic.Kind, interpret(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("open %s incident: %w", ic.Kind, err)
		}
		if n == 0 {
			// The database already has an open incident of this kind: keep
			// it, and its single opened event.
			s.log.WarnContext(ctx, "incident already open; kept the open one", "monitor_id", m.ID, "kind", ic.Kind)
			return nil
		}
		err = insertEvents(ctx, tx.StmtContext(ctx, st.eventInsert), events, id.String(), m.ID, m.ProjectID,
			string(monitors.EventOpened), at, ic.Summary)
		if err != nil {
			return fmt.Errorf("record %s incident opened: %w", ic.Kind, err)
		}
	case monitors.IncidentUpdate:
		if err := insertEvents(ctx, tx.StmtContext(ctx, st.incidentUpdate), events, m.ID, string(ic.Kind), at, ic.Summary); err != nil {
			return fmt.Errorf("update %s incident: %w", ic.Kind, err)
		}
	case monitors.IncidentResolve:
		rows, err := tx.StmtContext(ctx, st.incidentResolve).QueryContext(ctx, m.ID, string(ic.Kind), at, ic.Summary)
		if err != nil {
			return fmt.Errorf("resolve %s incident: %w", ic.Kind, interpret(err))
		}
		type resolved struct{ id, project string }
		var done []resolved
		for rows.Next() {
			var r resolved
			if err := rows.Scan(&r.id, &r.project); err != nil {
				rows.Close()
				return fmt.Errorf("resolve %s incident: %w", ic.Kind, err)
			}
			done = append(done, r)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("resolve %s incident: %w", ic.Kind, err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("resolve %s incident: %w", ic.Kind, err)
		}
		for _, r := range done {
			err := insertEvents(ctx, tx.StmtContext(ctx, st.eventInsert), events, r.id, m.ID, r.project,
				string(monitors.EventResolved), at, ic.Summary)
			if err != nil {
				return fmt.Errorf("record %s incident resolved: %w", ic.Kind, err)
			}
		}
	default:
		return fmt.Errorf("unknown incident operation %q", ic.Op)
	}
	return nil
}

// collectRuns returns the runs to write, one per (monitor, seq): a change
// carries the whole run, so the last change of a run wins.
func collectRuns(changes []change) []monitors.Run {
	type key struct {
		monitor string
		seq     int64
	}
	var (
		runs []monitors.Run
		at   map[key]int
	)
	for _, c := range changes {
		for _, rc := range c.tr.Runs {
			r := rc.Run
			r.MonitorID = c.m.ID
			k := key{r.MonitorID, r.Seq}
			if at == nil {
				at = make(map[key]int)
			}
			if i, ok := at[k]; ok {
				runs[i] = r
				continue
			}
			at[k] = len(runs)
			runs = append(runs, r)
		}
	}
	return runs
}
