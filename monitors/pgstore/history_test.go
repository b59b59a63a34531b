package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// TestMonitorDeleteWaitsForBatch deletes a monitor while a transaction
// holds it as a batch of pings does (FOR UPDATE) and, once the delete is
// waiting for it, writes a ping and a run of the monitor and commits: the
// delete trigger, run after the wait, sees them and deletes them (each of
// its statements takes a snapshot of its own), as the foreign keys'
// cascade did.
func TestMonitorDeleteWaitsForBatch(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	pool := pgstore.Pool(s)

	batch, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = batch.Rollback(ctx) }()
	var pid int
	require.NoError(t, batch.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	_, err = batch.Exec(ctx, `SELECT id FROM monitors WHERE id = $1 FOR UPDATE`, m.ID)
	require.NoError(t, err)

	deleted := make(chan error, 1)
	go func() { deleted <- s.MonitorDelete(ctx, p.ID, m.ID) }()
	require.Eventually(t, func() bool {
		var waiting bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))`,
			pid).Scan(&waiting))
		return waiting
	}, 10*time.Second, 5*time.Millisecond, "the delete waits for the batch's lock")

	_, err = batch.Exec(ctx, `INSERT INTO pings (monitor_id, kind, at) VALUES ($1, 'success', now())`, m.ID)
	require.NoError(t, err)
	_, err = batch.Exec(ctx, `INSERT INTO runs (monitor_id, seq) VALUES ($1, 1)`, m.ID)
	require.NoError(t, err)
	require.NoError(t, batch.Commit(ctx))
	require.NoError(t, <-deleted)
	require.Empty(t, orphans(t, s), "the delete took the pings and runs the batch committed while it waited")
}

// TestPingPartitionsLeaveMonitorsAlone makes and drops partitions of pings
// while a transaction has an update of monitors open, as a batch of pings
// does between its load and its commit: with no foreign key to clone, a
// new partition neither waits for monitors nor makes pings wait (with the
// foreign key it timed out and was left to the next prune).
func TestPingPartitionsLeaveMonitorsAlone(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	parts, err := pgstore.PingPartitions(ctx, s)
	require.NoError(t, err)
	var newest time.Time
	for _, upper := range parts {
		if upper.After(newest) {
			newest = upper
		}
	}
	cutover := parts["pings_legacy"]
	require.False(t, cutover.IsZero())

	batch, err := pgstore.Pool(s).Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = batch.Rollback(ctx) }()
	_, err = batch.Exec(ctx, `UPDATE monitors SET name = name WHERE id = $1`, m.ID)
	require.NoError(t, err)

	// A month past the newest partition: the store makes the next one and
	// drops pings_legacy, whose every ping is older than the history kept.
	_, err = s.PingAge(ctx, newest, cutover)
	require.NoError(t, err)
	got, err := pgstore.PingPartitions(ctx, s)
	require.NoError(t, err)
	next := newest.AddDate(0, 1, 0)
	require.Contains(t, got, "pings_p"+newest.Format("200601"), "a new partition was made")
	require.Equal(t, next, got["pings_p"+newest.Format("200601")])
	require.NotContains(t, got, "pings_legacy", "the old one was dropped")
	require.NoError(t, batch.Commit(ctx))
}
