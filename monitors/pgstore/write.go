package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// change is one transition of a monitor, with the ping that caused it (0
// when time or a person did).
type change struct {
	m      *monitors.Monitor
	tr     *monitors.Transition
	pingID int64
}

// writeSet is everything one transaction writes: the final state of each
// monitor it changed, the pings it received, and the transitions that led
// there, in the order they happened.
type writeSet struct {
	monitors []*monitors.Monitor // each once
	// fullRow writes the monitors' whole rows (a person changed their
	// configuration); otherwise only their state.
	fullRow bool
	pings   []*monitors.Ping // IDs already reserved
	changes []change
}

// write writes w in tx, all statements in one pipelined round trip. It is the
// only writer of monitor state, runs, incidents and incident events; every
// path that changes a monitor (PingRecordBatch, MonitorEvaluateDue,
// MonitorModify) goes through it. The incident events it inserts get their
// deliveries, and the jobs that send them, in the same transaction (one more
// round trip, only when there are events).
func (s *Store) write(ctx context.Context, tx pgx.Tx, w *writeSet) error {
	b := &pgx.Batch{}
	var checks []func(n int64) error

	if len(w.pings) > 0 {
		queuePings(b, w.pings)
		checks = append(checks, nil)
	}

	if w.fullRow {
		for _, m := range w.monitors {
			args, err := monitorArgs(m)
			if err != nil {
				return err
			}
			b.Queue(qMonitorUpdate, args...)
			id := m.ID
			checks = append(checks, func(n int64) error {
				if n != 1 {
					return fmt.Errorf("update monitor %s: %w", id, monitors.ErrNotFound)
				}
				return nil
			})
		}
	} else if len(w.monitors) > 0 {
		n := len(w.monitors)
		ids, statuses := make([]string, n), make([]string, n)
		states := make([]string, n)
		lastPing, expected, deadline := make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		for i, m := range w.monitors {
			m.NextDeadlineAt = m.NextDeadline()
			st, err := encodeState(m.State)
			if err != nil {
				return fmt.Errorf("monitor %s: %w", m.ID, err)
			}
			ids[i], statuses[i], states[i] = m.ID, string(m.State.Status), string(st)
			lastPing[i], expected[i], deadline[i] = timeOrNil(m.State.LastPingAt), timeOrNil(m.State.Expected), ceilMicro(m.NextDeadlineAt)
		}
		b.Queue(qMonitorUpdateState, ids, statuses, states, lastPing, expected, deadline)
		checks = append(checks, func(got int64) error {
			if got != int64(n) {
				return fmt.Errorf("update state of %d monitors: %d found: %w", n, got, monitors.ErrNotFound)
			}
			return nil
		})
	}

	// returnsEvents marks the statements that return the incident events
	// they insert, whose deliveries are created in this transaction too.
	returnsEvents := map[int]bool{}

	if runs := collectRuns(w.changes); len(runs) > 0 {
		queueRuns(b, runs)
		checks = append(checks, nil)
	}

	for _, c := range w.changes {
		for _, ic := range c.tr.Incidents {
			at := ic.At.UTC()
			switch ic.Op {
			case monitors.IncidentOpen:
				id, err := uuid.NewV7()
				if err != nil {
					return fmt.Errorf("new incident id: %w", err)
				}
				b.Queue(qIncidentOpen+eventReturning, id.String(), c.m.ProjectID, c.m.ID, string(ic.Kind), at, ic.Summary, ic.RunSeq, c.pingID)
				mid, kind := c.m.ID, ic.Kind
				returnsEvents[len(checks)] = true
				checks = append(checks, func(n int64) error {
					if n == 0 {
						// The database already has an open incident of this
						// kind: keep it, and its single opened event.
						s.log.WarnContext(ctx, "incident already open; kept the open one", "monitor_id", mid, "kind", kind)
					}
					return nil
				})
			case monitors.IncidentUpdate:
				b.Queue(qIncidentUpdate+eventReturning, c.m.ID, string(ic.Kind), at, ic.Summary)
				returnsEvents[len(checks)] = true
				checks = append(checks, nil)
			case monitors.IncidentResolve:
				b.Queue(qIncidentResolve+eventReturning, c.m.ID, string(ic.Kind), at, ic.Summary)
				returnsEvents[len(checks)] = true
				checks = append(checks, nil)
			default:
				return fmt.Errorf("monitor %s: unknown incident operation %q", c.m.ID, ic.Op)
			}
		}
	}

	if b.Len() == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, b)
	var events []*monitors.IncidentEvent
	for i, check := range checks {
		var n int64
		if returnsEvents[i] {
			rows, err := br.Query()
			if err != nil {
				br.Close()
				return interpret(err)
			}
			evs, err := scanEvents(rows)
			if err != nil {
				br.Close()
				return interpret(err)
			}
			events = append(events, evs...)
			n = int64(len(evs))
		} else {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return interpret(err)
			}
			n = tag.RowsAffected()
		}
		if check != nil {
			if err := check(n); err != nil {
				br.Close()
				return err
			}
		}
	}
	if err := br.Close(); err != nil {
		return interpret(err)
	}
	return s.deliver(ctx, tx, events)
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
		mids[i], seqs[i], rids[i], outcomes[i] = r.MonitorID, r.Seq, cleanText(r.RID), string(r.Outcome)
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
		retryAt               = make([]*time.Time, n)
		exits                 = make([]*int32, n)
		durations             = make([]*int64, n)
		bodies, addrs, agents = make([]string, n), make([]string, n), make([]string, n)
		truncated             = make([]bool, n)
	)
	for i, p := range pings {
		ids[i], mids[i], kinds[i], rids[i] = p.ID, p.MonitorID, string(p.Kind), p.RID
		ats[i], attempts[i], retryAt[i], exits[i], durations[i] = p.At.UTC(), int32(p.Attempt), utcPtr(p.RetryAt), int32Ptr(p.ExitCode), p.DurationMS
		bodies[i], truncated[i], addrs[i], agents[i] = p.Body, p.BodyTruncated, p.RemoteAddr, p.UserAgent
	}
	b.Queue(qPingInsert, ids, mids, kinds, ats, rids, attempts, retryAt, exits, durations, bodies, truncated, addrs, agents)
}

func int32Ptr(p *int) *int32 {
	if p == nil {
		return nil
	}
	v := int32(*p)
	return &v
}
