package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

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
// goes through it.
func (s *Store) write(ctx context.Context, tx *sql.Tx, w *writeSet) error {
	st := s.stmts
	if len(w.pings) > 0 {
		ins := tx.StmtContext(ctx, st.pingInsert)
		for _, p := range w.pings {
			res, err := ins.ExecContext(ctx, p.MonitorID, string(p.Kind), micros(p.At), p.RID, p.Attempt,
				microsPtr(p.RetryAt), nullInt(p.ExitCode), nullInt64(p.DurationMS), p.Body, p.BodyTruncated,
				p.RemoteAddr, p.UserAgent)
			if err != nil {
				return fmt.Errorf("insert ping: %w", interpret(err))
			}
			if p.ID, err = res.LastInsertId(); err != nil {
				return fmt.Errorf("insert ping: %w", err)
			}
		}
	}

	for _, m := range w.monitors {
		var (
			res sql.Result
			err error
		)
		if w.fullRow {
			args, aerr := monitorArgs(m)
			if aerr != nil {
				return aerr
			}
			res, err = tx.StmtContext(ctx, st.monitorUpdate).ExecContext(ctx, args...)
		} else {
			m.NextDeadlineAt = m.NextDeadline()
			state, serr := encodeState(m.State)
			if serr != nil {
				return fmt.Errorf("monitor %s: %w", m.ID, serr)
			}
			res, err = tx.StmtContext(ctx, st.monitorUpdateState).ExecContext(ctx, m.ID, string(m.State.Status), state,
				microsOrNil(m.State.LastPingAt), microsOrNil(m.State.Expected), ceilMicros(m.NextDeadlineAt))
		}
		if err != nil {
			return fmt.Errorf("update monitor %s: %w", m.ID, interpret(err))
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("update monitor %s: %w", m.ID, err)
		} else if n != 1 {
			return fmt.Errorf("update monitor %s: %w", m.ID, monitors.ErrNotFound)
		}
	}

	if runs := collectRuns(w.changes); len(runs) > 0 {
		up := tx.StmtContext(ctx, st.runUpsert)
		for _, r := range runs {
			_, err := up.ExecContext(ctx, r.MonitorID, r.Seq, r.RID, microsPtr(r.StartedAt), microsPtr(r.FinishedAt),
				string(r.Outcome), nullInt64(r.DurationMS), r.Attempt, nullInt(r.ExitCode), r.WillRetry, r.Stuck)
			if err != nil {
				return fmt.Errorf("write run %d of monitor %s: %w", r.Seq, r.MonitorID, interpret(err))
			}
		}
	}

	for _, c := range w.changes {
		var pingID int64
		if c.ping != nil {
			pingID = c.ping.ID
		}
		for _, ic := range c.tr.Incidents {
			if err := s.writeIncident(ctx, tx, c.m, ic, pingID); err != nil {
				return fmt.Errorf("monitor %s: %w", c.m.ID, err)
			}
		}
	}
	return nil
}

// writeIncident applies one incident change with its event.
func (s *Store) writeIncident(ctx context.Context, tx *sql.Tx, m *monitors.Monitor, ic monitors.IncidentChange, pingID int64) error {
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
		_, err = tx.StmtContext(ctx, st.eventInsert).ExecContext(ctx, id.String(), m.ID, m.ProjectID,
			string(monitors.EventOpened), at, ic.Summary)
		if err != nil {
			return fmt.Errorf("record %s incident opened: %w", ic.Kind, interpret(err))
		}
	case monitors.IncidentUpdate:
		if _, err := tx.StmtContext(ctx, st.incidentUpdate).ExecContext(ctx, m.ID, string(ic.Kind), at, ic.Summary); err != nil {
			return fmt.Errorf("update %s incident: %w", ic.Kind, interpret(err))
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
			_, err := tx.StmtContext(ctx, st.eventInsert).ExecContext(ctx, r.id, m.ID, r.project,
				string(monitors.EventResolved), at, ic.Summary)
			if err != nil {
				return fmt.Errorf("record %s incident resolved: %w", ic.Kind, interpret(err))
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
