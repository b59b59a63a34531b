package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// retryUnevaluable is how long a monitor that cannot be evaluated (its
// stored schedule no longer parses) waits before it is tried again, so that
// it neither blocks the evaluator nor is forgotten.
const retryUnevaluable = time.Minute

// MonitorEvaluateDue claims up to p.Limit unpaused monitors whose next
// deadline is at or before p.Now, applies the time to each with
// monitors.ApplyTime, and writes the results in the same write transaction.
// SQLite has one writer, so no two evaluators can claim the same monitor. A
// monitor that cannot be evaluated is logged and tried again a minute
// later.
func (s *Store) MonitorEvaluateDue(ctx context.Context, p *monitors.EvaluateDueParams) (*monitors.EvaluateDueResult, error) {
	if p.Limit <= 0 {
		return nil, errors.New("evaluate due monitors: limit must be positive")
	}
	res := &monitors.EvaluateDueResult{}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res.Evaluated = res.Evaluated[:0]
		ms, err := queryAll(ctx, tx, qMonitorClaimDue, []any{micros(p.Now), p.Limit}, scanMonitor)
		if err != nil {
			return fmt.Errorf("claim due monitors: %w", err)
		}
		var (
			w         writeSet
			skipped   []*monitors.Monitor
			postponed int
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
			w.changes = append(w.changes, change{m: m, tr: tr})
			res.Evaluated = append(res.Evaluated, monitors.EvaluatedMonitor{MonitorID: m.ID, DueAt: due, Transition: tr})
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("write evaluated monitors: %w", err)
		}
		for _, m := range skipped {
			if _, err := tx.ExecContext(ctx, qMonitorPostpone, m.ID, micros(p.Now.Add(retryUnevaluable))); err != nil {
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
	var us sql.NullInt64
	if err := s.r.QueryRowContext(ctx, qMonitorNextDeadline).Scan(&us); err != nil {
		return nil, fmt.Errorf("read next deadline: %w", err)
	}
	return fromNullMicros(us), nil
}
