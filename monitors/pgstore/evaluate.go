package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// retryUnevaluable is how long a monitor that cannot be evaluated (its
// stored schedule no longer parses) waits before it is tried again, so that
// it neither blocks the evaluator nor is forgotten.
const retryUnevaluable = time.Minute

// MonitorEvaluateDue claims up to p.Limit unpaused monitors whose next
// deadline is at or before p.Now, with FOR UPDATE SKIP LOCKED, applies the
// time to each with monitors.ApplyTime, and writes the results in the same
// transaction. Evaluators on several replicas share the work: none
// evaluates a monitor that another holds. A monitor that cannot be
// evaluated is logged and tried again a minute later.
func (s *Store) MonitorEvaluateDue(ctx context.Context, p *monitors.EvaluateDueParams) (*monitors.EvaluateDueResult, error) {
	if p.Limit <= 0 {
		return nil, errors.New("evaluate due monitors: limit must be positive")
	}
	now := p.Now.UTC()
	res := &monitors.EvaluateDueResult{}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res.Evaluated = res.Evaluated[:0]
		ms, err := claimDue(ctx, tx, now, p.Limit)
		if err != nil {
			return err
		}
		var (
			w         writeSet
			skipped   []*monitors.Monitor
			postponed int
			opens     []change
		)
		for _, m := range ms {
			due := *m.NextDeadlineAt
			hold := m.State.Hold
			tr, err := monitors.ApplyTime(m, p.Now, p.Options)
			if err != nil {
				s.log.ErrorContext(ctx, "cannot evaluate monitor", "monitor_id", m.ID, "error", err)
				skipped = append(skipped, m)
				continue
			}
			if p.Options.Postponed(hold, m.State.Hold) {
				postponed++
			}
			w.monitors = append(w.monitors, m)
			if onlyOpens(tr) {
				// The common case, every incident a new one: the runs go
				// through write, the incidents into one statement.
				w.changes = append(w.changes, change{m: m, tr: &monitors.Transition{Runs: tr.Runs}})
				opens = append(opens, change{m: m, tr: tr})
			} else {
				w.changes = append(w.changes, change{m: m, tr: tr})
			}
			res.Evaluated = append(res.Evaluated, monitors.EvaluatedMonitor{MonitorID: m.ID, DueAt: due, Transition: tr})
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("write evaluated monitors: %w", err)
		}
		if err := s.openIncidents(ctx, tx, opens); err != nil {
			return err
		}
		for _, m := range skipped {
			if _, err := tx.Exec(ctx, qMonitorPostpone, m.ID, now.Add(retryUnevaluable)); err != nil {
				return fmt.Errorf("postpone monitor %s: %w", m.ID, err)
			}
		}
		return countPostponed(ctx, tx, p.Options, postponed)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// MonitorNextDeadline returns the earliest next deadline of any unpaused
// monitor, or nil when there is none.
func (s *Store) MonitorNextDeadline(ctx context.Context) (*time.Time, error) {
	var t *time.Time
	if err := s.pool.QueryRow(ctx, qMonitorNextDeadline).Scan(&t); err != nil {
		return nil, fmt.Errorf("read next deadline: %w", err)
	}
	return utcPtr(t), nil
}

// onlyOpens reports whether every incident change of tr opens an incident,
// so that they can be written with the others of a claim at once: order
// matters only between changes to one incident.
func onlyOpens(tr *monitors.Transition) bool {
	for _, ic := range tr.Incidents {
		if ic.Op != monitors.IncidentOpen {
			return false
		}
	}
	return true
}

// openIncidents inserts the incidents that changes open, each with its
// opened event and that event's deliveries, in one statement and one
// delivery insert: a burst of due monitors costs one
// statement per claim rather than one per incident. An incident already
// open is kept, as write does.
func (s *Store) openIncidents(ctx context.Context, tx pgx.Tx, changes []change) error {
	var (
		ids, projects, mids, kinds, summaries []string
		ats                                   []time.Time
		runSeqs                               []int64
	)
	for _, c := range changes {
		for _, ic := range c.tr.Incidents {
			id, err := uuid.NewV7()
			if err != nil {
				return fmt.Errorf("new incident id: %w", err)
			}
			ids, projects, mids = append(ids, id.String()), append(projects, c.m.ProjectID), append(mids, c.m.ID)
			kinds, summaries = append(kinds, string(ic.Kind)), append(summaries, ic.Summary)
			ats, runSeqs = append(ats, ic.At.UTC()), append(runSeqs, ic.RunSeq)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, qIncidentOpenMany+eventReturning, ids, projects, mids, kinds, ats, summaries, runSeqs)
	if err != nil {
		return fmt.Errorf("open incidents: %w", interpret(err))
	}
	events, err := scanEvents(rows)
	if err != nil {
		return fmt.Errorf("open incidents: %w", interpret(err))
	}
	if n := len(events); n != len(ids) {
		s.log.WarnContext(ctx, "incidents already open; kept the open ones", "opened", n, "asked", len(ids))
	}
	// Their deliveries, and the jobs that send them, in this transaction
	// too, as write does for every other incident event.
	return s.deliver(ctx, tx, events)
}

// claimDue locks and reads up to limit due monitors, earliest deadline
// first, skipping those another transaction holds.
//
// The claim must walk monitors_due_idx in deadline order and stop after
// limit rows, so that it costs the same whether ten or ten thousand
// monitors are due. From statistics gathered while few monitors were due,
// the planner may instead read every due row with a bitmap scan and sort
// them, which makes each claim of a burst cost the whole burst. The claim's
// transaction turns bitmap scans and sorts off (set_config with is_local),
// in the same round trip, which leaves the ordered index scan.
func claimDue(ctx context.Context, tx pgx.Tx, now time.Time, limit int) ([]*monitors.Monitor, error) {
	b := &pgx.Batch{}
	b.Queue(qClaimPlan)
	b.Queue(qMonitorClaimDue, now, limit)
	br := tx.SendBatch(ctx, b)
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, fmt.Errorf("claim due monitors: %w", err)
	}
	rows, err := br.Query()
	if err != nil {
		return nil, fmt.Errorf("claim due monitors: %w", err)
	}
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Monitor, error) { return scanMonitor(r) })
	if err != nil {
		return nil, fmt.Errorf("claim due monitors: %w", err)
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("claim due monitors: %w", err)
	}
	return ms, nil
}
