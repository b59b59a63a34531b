package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vigilhq/vigil/monitors/plan"
)

// Pings are partitioned by month (UTC) of their arrival (migration 0014):
// pings_pYYYYMM holds [first of the month, first of the next). The store
// makes the partitions of the present month and the next
// pingMonthsAhead ones, at Open and at every prune, and drops a partition
// once its whole month is older than the history kept. pings_legacy, the
// table from before partitioning, holds everything before its cutover and
// goes the same way once the cutover is older than the history kept;
// pings_default, for pings outside every partition, is never dropped.
const pingMonthsAhead = 2

// pingPartitionLockTimeout bounds how long making or dropping a partition
// waits for its lock on pings. Both need a lock that ingest's inserts queue
// behind, so a busy moment is better skipped than waited out: the next
// prune tries again.
const pingPartitionLockTimeout = "1s"

var _ plan.PingAger = (*Store)(nil)

const (
	// qPingPartitions lists the partitions of pings with the exclusive
	// upper bound of each range (NULL for the default partition).
	qPingPartitions = `SELECT c.relname,
			(regexp_match(pg_get_expr(c.relpartbound, c.oid), $re$TO \('([^']+)'\)$re$))[1]::timestamptz
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'pings'::regclass
		ORDER BY 2 NULLS LAST`
	qPingPartitionLock = `SELECT pg_advisory_xact_lock(hashtextextended('vigil.pings.partitions', 0))`
)

// pingPartition is one partition of pings.
type pingPartition struct {
	name  string
	upper *time.Time // nil for the default partition
}

// PingAge makes the coming months' partitions and drops those wholly
// older than before. Dropping a partition removes its pings without a row
// deleted, so it reports 0 and logs each partition it dropped.
func (s *Store) PingAge(ctx context.Context, now, before time.Time) (int64, error) {
	parts, err := s.pingPartitions(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.pingPartitionsAhead(ctx, now, parts); err != nil {
		return 0, err
	}
	for _, p := range parts {
		if p.upper == nil || p.upper.After(before) {
			continue
		}
		err := s.partitionTx(ctx, `DROP TABLE IF EXISTS `+pgx.Identifier{p.name}.Sanitize())
		if err != nil {
			if lockTimedOut(err) {
				s.log.Warn("ping partition busy; dropping it on the next prune", "partition", p.name)
				continue
			}
			return 0, fmt.Errorf("drop ping partition %s: %w", p.name, err)
		}
		s.log.Info("dropped old pings", "partition", p.name, "before", p.upper.UTC().Format(time.RFC3339))
	}
	return 0, nil
}

// pingPartitions lists the partitions of pings, oldest first.
func (s *Store) pingPartitions(ctx context.Context) ([]pingPartition, error) {
	rows, err := s.pool.Query(ctx, qPingPartitions)
	if err != nil {
		return nil, fmt.Errorf("list ping partitions: %w", err)
	}
	parts, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (p pingPartition, err error) {
		return p, r.Scan(&p.name, &p.upper)
	})
	if err != nil {
		return nil, fmt.Errorf("list ping partitions: %w", err)
	}
	return parts, nil
}

// pingPartitionsAhead makes the monthly partitions from the end of the
// newest one through pingMonthsAhead months past now, so that the ranges
// stay contiguous even after a long stop.
func (s *Store) pingPartitionsAhead(ctx context.Context, now time.Time, parts []pingPartition) error {
	month := monthOf(now)
	var from time.Time
	for _, p := range parts {
		if p.upper != nil && p.upper.After(from) {
			from = p.upper.UTC()
		}
	}
	if from.IsZero() {
		from = month
	}
	end := month.AddDate(0, pingMonthsAhead+1, 0)
	for m := monthOf(from); m.Before(end); m = m.AddDate(0, 1, 0) {
		lo, hi := m, m.AddDate(0, 1, 0)
		if lo.Before(from) {
			lo = from // the rest of a month a longer partition began
		}
		if !lo.Before(hi) {
			continue
		}
		name := fmt.Sprintf("pings_p%04d%02d", m.Year(), int(m.Month()))
		sql := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s PARTITION OF pings FOR VALUES FROM ('%s') TO ('%s')`,
			pgx.Identifier{name}.Sanitize(), lo.Format(time.RFC3339), hi.Format(time.RFC3339))
		err := s.partitionTx(ctx, sql, `CREATE UNIQUE INDEX IF NOT EXISTS `+pgx.Identifier{name + "_id_idx"}.Sanitize()+
			` ON `+pgx.Identifier{name}.Sanitize()+` (id)`)
		var pgErr *pgconn.PgError
		switch {
		case err == nil:
		case lockTimedOut(err):
			s.log.Warn("pings busy; making the partition on the next prune", "partition", name)
		case errors.As(err, &pgErr) && pgErr.Code == "23514":
			// The default partition already holds pings of that month
			// (the clock was far off): they stay there, pruned by count.
			s.log.Warn("pings of a month are in the default partition; not partitioning that month",
				"partition", name, "err", err)
		default:
			return fmt.Errorf("make ping partition %s: %w", name, err)
		}
	}
	return nil
}

// partitionTx runs stmts in one transaction that holds the partitions'
// advisory lock (so replicas take turns) and waits at most
// pingPartitionLockTimeout for any other lock.
func (s *Store) partitionTx(ctx context.Context, stmts ...string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, qPingPartitionLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+pingPartitionLockTimeout+`'`); err != nil {
			return err
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

func lockTimedOut(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// monthOf is the first instant of t's month, in UTC.
func monthOf(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}
