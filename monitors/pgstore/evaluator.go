package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// The evaluator's heartbeat and outages (migration 0002). sqlitestore has
// queries of the same names.
const (
	// qHeartbeatLock locks the one heartbeat row: evaluators on every
	// replica take turns, so a gap is seen, and recorded, by one of them.
	qHeartbeatLock  = `SELECT last_pass_at FROM evaluator_heartbeat WHERE id = 1 FOR UPDATE`
	qHeartbeatStamp = `UPDATE evaluator_heartbeat SET last_pass_at = $1 WHERE id = 1`

	outageCols       = `id, started_at, ended_at, monitors_postponed, settled_at`
	qOutageUnsettled = `SELECT ` + outageCols + ` FROM outages WHERE settled_at IS NULL ORDER BY id LIMIT 1`
	qOutageInsert    = `INSERT INTO outages (started_at, ended_at) VALUES ($1, $2) RETURNING ` + outageCols
	qOutageExtend    = `UPDATE outages SET ended_at = $2 WHERE id = $1 RETURNING ` + outageCols
	// qOutageSettle settles an outage once no unpaused monitor is due at or
	// before its end (monitors_due_idx answers). A monitor another
	// evaluator is still evaluating keeps its old deadline until that
	// evaluator commits, so it keeps the outage open.
	qOutageSettle = `UPDATE outages SET settled_at = $2 WHERE id = $1 AND NOT EXISTS (
			SELECT 1 FROM monitors WHERE NOT paused AND next_deadline <= outages.ended_at)
		RETURNING ` + outageCols
	// qOutagePostponed counts monitors an outage postponed, in the claim's
	// transaction. An outage is named by its start, which extending it
	// does not change.
	qOutagePostponed = `UPDATE outages SET monitors_postponed = monitors_postponed + $2 WHERE started_at = $1`
	// qIncidentOpenMany opens the incidents of a claim, with their opened
	// events, as qIncidentOpen does one by one. They are opened by time,
	// so no ping caused them (ping_id 0).
	qIncidentOpenMany = `WITH ins AS (
			INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at, summary, run_seq)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::bigint[])
			ON CONFLICT (monitor_id, kind) WHERE resolved_at IS NULL DO NOTHING
			RETURNING id, project_id, monitor_id, opened_at, summary)
		INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		SELECT id, monitor_id, project_id, 'incident.opened', opened_at, summary FROM ins
		ON CONFLICT DO NOTHING`
	// qClaimPlan leaves the claim of due monitors one plan, the ordered
	// walk of monitors_due_idx, for the rest of its transaction; see
	// claimDue.
	qClaimPlan  = `SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)`
	qOutageList = `SELECT ` + outageCols + ` FROM outages WHERE ($1::bigint = 0 OR id < $1::bigint)
		ORDER BY id DESC LIMIT $2`
)

// EvaluatorHeartbeat stamps the shared heartbeat and detects, records and
// settles outages; see [monitors.Store.EvaluatorHeartbeat].
func (s *Store) EvaluatorHeartbeat(ctx context.Context, p *monitors.EvaluatorHeartbeatParams) (*monitors.EvaluatorHeartbeat, error) {
	if p.Threshold <= 0 {
		return nil, errors.New("evaluator heartbeat: threshold must be positive")
	}
	now := p.Now.UTC()
	var res *monitors.EvaluatorHeartbeat
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		res = &monitors.EvaluatorHeartbeat{}
		var prev *time.Time
		if err := tx.QueryRow(ctx, qHeartbeatLock).Scan(&prev); err != nil {
			return fmt.Errorf("lock evaluator heartbeat: %w", interpret(err))
		}
		res.Previous = utcPtr(prev)
		// Another replica's clock may be a little ahead: the stamp never
		// goes back.
		stamp := now
		if prev != nil && prev.After(now) {
			stamp = *prev
		}
		if _, err := tx.Exec(ctx, qHeartbeatStamp, stamp); err != nil {
			return fmt.Errorf("stamp evaluator heartbeat: %w", err)
		}

		o, err := scanOutage(tx.QueryRow(ctx, qOutageUnsettled))
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("read unsettled outage: %w", err)
		}
		if prev != nil && now.Sub(*prev) > p.Threshold {
			res.Detected = true
			if o != nil {
				// Down again before the last outage settled: one gap, from
				// the first start, so that monitors still waiting from the
				// first part are postponed too.
				o, err = scanOutage(tx.QueryRow(ctx, qOutageExtend, o.ID, now))
			} else {
				o, err = scanOutage(tx.QueryRow(ctx, qOutageInsert, prev.UTC(), now))
			}
			if err != nil {
				return fmt.Errorf("record outage: %w", interpret(err))
			}
		}
		if o == nil {
			return nil
		}
		res.Outage = o
		settled, err := scanOutage(tx.QueryRow(ctx, qOutageSettle, o.ID, now))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("settle outage: %w", err)
		default:
			res.Outage, res.Settled = settled, true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// OutageList lists outages, newest first.
func (s *Store) OutageList(ctx context.Context, p *monitors.OutageListParams) ([]*monitors.Outage, error) {
	rows, err := s.pool.Query(ctx, qOutageList, p.Before, limitArg(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list outages: %w", err)
	}
	outages, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Outage, error) { return scanOutage(r) })
	if err != nil {
		return nil, fmt.Errorf("list outages: %w", err)
	}
	return outages, nil
}

// countPostponed adds to the outage of opts the monitors that it
// postponed in this transaction.
func countPostponed(ctx context.Context, tx pgx.Tx, opts monitors.TimeOptions, n int) error {
	if n == 0 || opts.OutageEnd.IsZero() {
		return nil
	}
	if _, err := tx.Exec(ctx, qOutagePostponed, opts.OutageStart.UTC(), n); err != nil {
		return fmt.Errorf("count postponed monitors: %w", err)
	}
	return nil
}

func scanOutage(r pgx.Row) (*monitors.Outage, error) {
	var (
		o       monitors.Outage
		settled *time.Time
	)
	if err := r.Scan(&o.ID, &o.StartedAt, &o.EndedAt, &o.MonitorsPostponed, &settled); err != nil {
		return nil, err
	}
	o.StartedAt, o.EndedAt, o.SettledAt = o.StartedAt.UTC(), o.EndedAt.UTC(), utcPtr(settled)
	return &o, nil
}

// ExplainEvaluateDue returns the plans of the two queries an evaluator pass
// runs on the monitors table, the claim of MonitorEvaluateDue at now and the
// look-up of MonitorNextDeadline, as EXPLAIN (ANALYZE, BUFFERS) reports
// them, with the planner settings the claim uses. They run in a
// transaction that is rolled back: no row stays locked.
// Operators and benchmarks use it to check that both read monitors_due_idx,
// so that their cost follows the due monitors, not all of them.
func (s *Store) ExplainEvaluateDue(ctx context.Context, now time.Time, limit int) (claim, next string, err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return "", "", fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read only; nothing to keep
	if _, err := tx.Exec(ctx, qClaimPlan); err != nil {
		return "", "", fmt.Errorf("explain: %w", err)
	}
	explain := func(q string, args ...any) (string, error) {
		rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q, args...)
		if err != nil {
			return "", fmt.Errorf("explain: %w", err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return "", fmt.Errorf("explain: %w", err)
		}
		return strings.Join(lines, "\n"), nil
	}
	if claim, err = explain(qMonitorClaimDue, now.UTC(), limit); err != nil {
		return "", "", err
	}
	if next, err = explain(qMonitorNextDeadline); err != nil {
		return "", "", err
	}
	return claim, next, nil
}
