package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// The evaluator's heartbeat and outages (migration 0002). pgstore has
// queries of the same names.
const (
	// qHeartbeatLock reads the one heartbeat row. No FOR UPDATE: it runs in
	// a write transaction, and SQLite has one writer.
	qHeartbeatLock  = `SELECT last_pass_at FROM evaluator_heartbeat WHERE id = 1`
	qHeartbeatStamp = `UPDATE evaluator_heartbeat SET last_pass_at = ? WHERE id = 1`

	outageCols       = `id, started_at, ended_at, monitors_postponed, settled_at`
	qOutageUnsettled = `SELECT ` + outageCols + ` FROM outages WHERE settled_at IS NULL ORDER BY id LIMIT 1`
	qOutageInsert    = `INSERT INTO outages (started_at, ended_at) VALUES (?, ?) RETURNING ` + outageCols
	qOutageExtend    = `UPDATE outages SET ended_at = ?2 WHERE id = ?1 RETURNING ` + outageCols
	// qOutageSettle settles an outage once no unpaused monitor is due at or
	// before its end (monitors_due_idx answers).
	qOutageSettle = `UPDATE outages SET settled_at = ?2 WHERE id = ?1 AND NOT EXISTS (
			SELECT 1 FROM monitors WHERE NOT paused AND next_deadline <= outages.ended_at)
		RETURNING ` + outageCols
	// qOutagePostponed counts monitors an outage postponed, in the claim's
	// transaction. An outage is named by its start, which extending it
	// does not change.
	qOutagePostponed = `UPDATE outages SET monitors_postponed = monitors_postponed + ?2 WHERE started_at = ?1`
	qOutageList      = `SELECT ` + outageCols + ` FROM outages WHERE (?1 = 0 OR id < ?1) ORDER BY id DESC LIMIT ?2`
)

// EvaluatorHeartbeat stamps the shared heartbeat and detects, records and
// settles outages; see [monitors.Store.EvaluatorHeartbeat].
func (s *Store) EvaluatorHeartbeat(ctx context.Context, p *monitors.EvaluatorHeartbeatParams) (*monitors.EvaluatorHeartbeat, error) {
	if p.Threshold <= 0 {
		return nil, errors.New("evaluator heartbeat: threshold must be positive")
	}
	now := micros(p.Now)
	var res *monitors.EvaluatorHeartbeat
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res = &monitors.EvaluatorHeartbeat{}
		var prev sql.NullInt64
		if err := tx.QueryRowContext(ctx, qHeartbeatLock).Scan(&prev); err != nil {
			return fmt.Errorf("read evaluator heartbeat: %w", interpret(err))
		}
		res.Previous = fromNullMicros(prev)
		// The stamp never goes back, even if the clock does.
		stamp := max(now, prev.Int64)
		if _, err := tx.ExecContext(ctx, qHeartbeatStamp, stamp); err != nil {
			return fmt.Errorf("stamp evaluator heartbeat: %w", err)
		}

		o, err := scanOutage(tx.QueryRowContext(ctx, qOutageUnsettled))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read unsettled outage: %w", err)
		}
		if prev.Valid && p.Now.Sub(fromMicros(prev.Int64)) > p.Threshold {
			res.Detected = true
			if o != nil {
				// Down again before the last outage settled: one gap, from
				// the first start.
				o, err = scanOutage(tx.QueryRowContext(ctx, qOutageExtend, o.ID, now))
			} else {
				o, err = scanOutage(tx.QueryRowContext(ctx, qOutageInsert, prev.Int64, now))
			}
			if err != nil {
				return fmt.Errorf("record outage: %w", interpret(err))
			}
		}
		if o == nil {
			return nil
		}
		res.Outage = o
		settled, err := scanOutage(tx.QueryRowContext(ctx, qOutageSettle, o.ID, now))
		switch {
		case errors.Is(err, sql.ErrNoRows):
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
	outages, err := queryAll(ctx, s.r, qOutageList, []any{p.Before, limitArg(p.Limit)}, scanOutage)
	if err != nil {
		return nil, fmt.Errorf("list outages: %w", err)
	}
	return outages, nil
}

// countPostponed adds to the outage of opts the monitors that it
// postponed in this transaction.
func countPostponed(ctx context.Context, tx *sql.Tx, opts monitors.TimeOptions, n int) error {
	if n == 0 || opts.OutageEnd.IsZero() {
		return nil
	}
	if _, err := tx.ExecContext(ctx, qOutagePostponed, micros(opts.OutageStart), n); err != nil {
		return fmt.Errorf("count postponed monitors: %w", err)
	}
	return nil
}

func scanOutage(r scanner) (*monitors.Outage, error) {
	var (
		o              monitors.Outage
		started, ended int64
		settled        sql.NullInt64
	)
	if err := r.Scan(&o.ID, &started, &ended, &o.MonitorsPostponed, &settled); err != nil {
		return nil, err
	}
	o.StartedAt, o.EndedAt, o.SettledAt = fromMicros(started), fromMicros(ended), fromNullMicros(settled)
	return &o, nil
}
