package pgstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/plan"
	"github.com/vigilhq/vigil/monitors/storetest"
)

func TestStore(t *testing.T) {
	newStore := func(t *testing.T) monitors.Store {
		s := testdb.Postgres(t)
		t.Cleanup(func() {
			checkDeadlines(t, s)
			require.Empty(t, orphans(t, s), "pings and runs left without their monitor")
		})
		return s
	}
	storetest.Run(t, newStore, storetest.Caps{
		ConcurrentClaims: true,
		Reopen: func(t *testing.T, s monitors.Store) monitors.Store {
			url := pgstore.Pool(s.(*pgstore.Store)).Config().ConnString()
			s2, err := pgstore.Open(t.Context(), url, pgstore.Options{Logger: testdb.Logger(t)})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s2.Close()) })
			return s2
		},
		WithMonitorLimit: func(t *testing.T, max int) monitors.Store {
			s, err := pgstore.Open(t.Context(), testdb.PostgresURL(t), pgstore.Options{Logger: testdb.Logger(t), MaxMonitorsPerProject: max})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		},
		DeleteProject: func(t *testing.T, s monitors.Store, id string) {
			_, err := pgstore.Pool(s.(*pgstore.Store)).Exec(t.Context(), `DELETE FROM projects WHERE id = $1`, id)
			require.NoError(t, err)
		},
		Orphans: func(t *testing.T, s monitors.Store) []string { return orphans(t, s.(*pgstore.Store)) },
	})
}

// orphans runs storetest.OrphansSQL on a connection of its own (the test
// may have closed the store).
func orphans(t *testing.T, s *pgstore.Store) []string {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgstore.Pool(s).Config().ConnString())
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, storetest.OrphansSQL)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}

// checkDeadlines checks, when a test of the conformance suite ends, that
// monitor_deadlines, which triggers keep, holds one row for each monitor,
// with its deadline, or NULL while it is paused: every path that writes
// monitors in the suite keeps it right.
func checkDeadlines(t *testing.T, s *pgstore.Store) {
	// A connection of its own: the test may have closed the store.
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgstore.Pool(s).Config().ConnString())
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT coalesce(m.id, d.monitor_id) FROM monitors m
		FULL JOIN monitor_deadlines d ON d.monitor_id = m.id
		WHERE m.id IS NULL OR d.monitor_id IS NULL
			OR d.due_at IS DISTINCT FROM CASE WHEN m.paused THEN NULL ELSE m.next_deadline END`)
	require.NoError(t, err)
	bad, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Empty(t, bad, "monitors whose row of monitor_deadlines is missing, left over or wrong")
}

// TestOneOpenIncidentInSchema checks that the database itself, not only the
// store's code, refuses a second open incident of one kind.
func TestOneOpenIncidentInSchema(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	pool := pgstore.Pool(s)
	insert := func(id string) error {
		_, err := pool.Exec(ctx, `INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at) VALUES ($1, $2, $3, 'missed', now())`,
			id, p.ID, m.ID)
		return err
	}
	require.NoError(t, insert("i1"))
	require.ErrorContains(t, insert("i2"), "incidents_one_open_idx")
	_, err := pool.Exec(ctx, `UPDATE incidents SET resolved_at = now() WHERE id = 'i1'`)
	require.NoError(t, err)
	require.NoError(t, insert("i2"), "once resolved, the kind may open again")

	ev := func(kind string) error {
		_, err := pool.Exec(ctx, `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at) VALUES ('i2', $1, $2, $3, now())`,
			m.ID, p.ID, kind)
		return err
	}
	require.NoError(t, ev("incident.opened"))
	require.ErrorContains(t, ev("incident.opened"), "incident_events_once_idx", "opened once")
	require.NoError(t, ev("incident.updated"))
	require.NoError(t, ev("incident.updated"), "updates repeat")
}

// TestConcurrentOpen starts several stores on one new schema at once, as
// replicas do: the advisory lock makes them migrate one after the other.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	url := testdb.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	stores := make([]*pgstore.Store, 4)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = pgstore.Open(t.Context(), url, pgstore.Options{}) })
	}
	wg.Wait()
	for i, s := range stores {
		require.NoError(t, errs[i])
		require.NoError(t, s.Ping(t.Context()))
		require.NoError(t, s.Close())
	}
}

// TestNew uses a pool the caller owns: Close leaves it open.
func TestNew(t *testing.T) {
	t.Parallel()
	url := testdb.PostgresURL(t)
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, pgstore.Migrate(t.Context(), pool))
	s := pgstore.New(pool, pgstore.Options{})
	storetest.MustProject(t, s)
	require.NoError(t, s.Close())
	require.NoError(t, pool.Ping(t.Context()), "the pool is still open")
}

// TestCreateRace has another transaction insert the slug that a create=1
// ping is about to create, and commit only once the batch waits for it: the
// batch then uses that monitor instead of failing.
func TestCreateRace(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	pool := pgstore.Pool(s)

	other := storetest.NewMonitor(p.ID, "raced", nil)
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	var pid int
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	_, err = tx.Exec(ctx, `INSERT INTO monitors (id, project_id, name, slug, schedule_kind, every_seconds, grace_seconds,
		alert_on_failure, failure_threshold, recovery_threshold, overlap, ping_key, created_at, updated_at, status, state)
		VALUES ($1, $2, 'raced', 'raced', 'interval', 3600, 300, 'final', 1, 1, 'alert', $3, now(), now(), 'new', '{"status":"new"}')`,
		other.ID, p.ID, other.PingKey)
	require.NoError(t, err)

	type result struct {
		res []monitors.PingRecordResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{{
			ProjectPingKey: p.PingKey, Slug: "raced", Create: true, NewMonitor: storetest.NewMonitor("", "raced", nil),
			Ping: monitors.Ping{Kind: monitors.PingSuccess, At: storetest.T0},
		}}})
		done <- result{res, err}
	}()
	// Wait until the batch's insert waits for the open transaction.
	require.Eventually(t, func() bool {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_locks h ON h.transactionid = l.transactionid
			WHERE NOT l.granted AND h.granted AND h.pid = $1)`, pid).Scan(&waiting)
		return err == nil && waiting
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, tx.Commit(ctx))

	r := <-done
	require.NoError(t, r.err)
	require.NoError(t, r.res[0].Err)
	require.False(t, r.res[0].Created)
	require.Equal(t, other.ID, r.res[0].MonitorID)
}

func BenchmarkPingRecordBatch(b *testing.B) {
	storetest.BenchmarkPingRecordBatch(b, func(tb testing.TB) monitors.Store { return testdb.Postgres(tb) })
}

func TestSealing(t *testing.T) {
	storetest.RunSealing(t, storetest.Sealing{
		NewDB: func(t *testing.T) string { return testdb.PostgresURL(t) },
		Open: func(t *testing.T, db string, sealer plan.Sealer) monitors.Store {
			s, err := pgstore.Open(t.Context(), db, pgstore.Options{Logger: testdb.Logger(t), Sealer: sealer})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		},
		RawConfig: func(t *testing.T, s monitors.Store, channelID string) string {
			var raw string
			require.NoError(t, pgstore.Pool(s.(*pgstore.Store)).QueryRow(t.Context(),
				`SELECT config::text FROM channels WHERE id = $1`, channelID).Scan(&raw))
			return raw
		},
	})
}

func BenchmarkLoadReport(b *testing.B) {
	storetest.BenchmarkLoadReport(b, func(tb testing.TB) monitors.Store { return testdb.Postgres(tb) })
}

func BenchmarkEvaluateDue(b *testing.B) {
	storetest.BenchmarkEvaluateDue(b, func(tb testing.TB) monitors.Store { return testdb.Postgres(tb) })
}

// TestBatchLoadBeginsTransaction: a transaction's BEGIN is sent in the
// pipeline of its first batch (a ping batch's load), so the rows that
// batch locks stay locked to the end of the transaction, not to the end of
// the pipeline, and what the transaction sends after it is in the same
// transaction.
func TestBatchLoadBeginsTransaction(t *testing.T) {
	s := testdb.Postgres(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "locked", nil)
	locked := func() bool {
		tx, err := pgstore.Pool(s).Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // read only
		rows, err := tx.Query(ctx, `SELECT id FROM monitors WHERE id = $1 FOR UPDATE SKIP LOCKED`, m.ID)
		require.NoError(t, err)
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return len(ids) == 0
	}
	var txids []int64
	err := s.InTx(ctx, func(tx plan.Tx) error {
		rows, err := tx.PingBatchLoad(ctx, &plan.PingBatchQuery{PingKeys: []string{m.PingKey}, ProjectKeys: []string{},
			Slugs: []plan.SlugRef{}, IDs: 1})
		require.NoError(t, err)
		require.Len(t, rows.Monitors, 1)
		require.True(t, locked(), "the load's lock holds after its round trip")
		for range 2 {
			id, err := plan.One(ctx, tx, func(r plan.Row) (id int64, err error) { return id, r.Scan(&id) }, `SELECT txid_current()`)
			require.NoError(t, err)
			txids = append(txids, id)
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, txids[0], txids[1], "one transaction")
	require.False(t, locked(), "the commit let go of the lock")
}

func BenchmarkPingBatchLoad(b *testing.B) {
	storetest.BenchmarkPingBatchLoad(b, func(tb testing.TB) storetest.BatchLoader { return testdb.Postgres(tb) })
}

func TestBatchLoad(t *testing.T) {
	storetest.RunBatchLoad(t, func(tb testing.TB) storetest.BatchLoader { return testdb.Postgres(tb) })
}
