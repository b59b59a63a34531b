package sqlitestore_test

import (
	"context"
	"database/sql"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors/plan"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
)

// TestStatementCache: reads are prepared once and kept; a statement too
// long to be worth keeping runs unprepared; and a transaction, which
// holds the one writer connection, reads and writes without preparing on
// the writer pool (that would wait for the transaction itself): what it
// ran unprepared is prepared once it has ended, for the next one.
func TestStatementCache(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := sqlitestore.Open(ctx, testdb.SQLitePath(t), sqlitestore.Options{Logger: testdb.Logger(t), CheckpointInterval: -1})
	require.NoError(t, err)
	defer s.Close()

	r0, w0 := sqlitestore.CachedStatements(s)
	count := func(db plan.DB, q string) int {
		rows, err := db.Query(ctx, q)
		require.NoError(t, err)
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err())
		return n
	}
	for range 3 {
		require.Equal(t, 1, count(s.Reader(), "SELECT 1 AS one"))
	}
	r1, _ := sqlitestore.CachedStatements(s)
	require.Equal(t, r0+1, r1, "one statement, prepared once")
	long := "SELECT 1 AS one" + strings.Repeat(" ", 5000)
	require.Equal(t, 1, count(s.Reader(), long))
	r2, _ := sqlitestore.CachedStatements(s)
	require.Equal(t, r1, r2, "a long statement is not kept")

	var inside int
	_, err = sqlitestore.Writer(s).ExecContext(ctx, "CREATE TEMP TABLE t (x INTEGER)")
	require.NoError(t, err)
	require.NoError(t, s.InTx(ctx, func(tx plan.Tx) error {
		require.Equal(t, 1, count(tx, "SELECT 2 AS two"))
		_, inside = sqlitestore.CachedStatements(s)
		_, err := tx.Exec(ctx, "INSERT INTO t (x) VALUES (1)")
		return err
	}), "a transaction does not wait for itself")
	require.Equal(t, w0, inside, "nothing prepared on the writer pool inside a transaction")
	_, w1 := sqlitestore.CachedStatements(s)
	require.Equal(t, w0+2, w1, "what a transaction ran is prepared once it has ended")

	// The next transaction runs them prepared, and prepares nothing more.
	require.NoError(t, s.InTx(ctx, func(tx plan.Tx) error {
		require.Equal(t, 1, count(tx, "SELECT 2 AS two"))
		_, err := tx.Exec(ctx, "DELETE FROM t")
		return err
	}))
	_, w2 := sqlitestore.CachedStatements(s)
	require.Equal(t, w1+1, w2, "only the new statement")
	require.NoError(t, s.InTx(ctx, func(tx plan.Tx) error {
		require.Equal(t, 1, count(tx, "SELECT 2 AS two"))
		return nil
	}))
	_, w3 := sqlitestore.CachedStatements(s)
	require.Equal(t, w2, w3)
}

// TestStatementCachePendingDoesNotWait: the end of a transaction prepares
// what it ran unprepared only if it gets the writer connection soon; when
// another user holds it, the transaction returns, and a later one
// prepares the statement.
func TestStatementCachePendingDoesNotWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := sqlitestore.Open(ctx, testdb.SQLitePath(t), sqlitestore.Options{Logger: testdb.Logger(t), CheckpointInterval: -1})
	require.NoError(t, err)
	defer s.Close()
	w := sqlitestore.Writer(s)
	_, w0 := sqlitestore.CachedStatements(s)

	held := make(chan *sql.Conn, 1)
	require.NoError(t, s.InTx(ctx, func(tx plan.Tx) error {
		rows, err := tx.Query(ctx, "SELECT 3 AS three")
		if err != nil {
			return err
		}
		rows.Close()
		// Someone else waits for the writer connection: it gets it as
		// soon as this transaction ends.
		waits := w.Stats().WaitCount
		go func() {
			c, err := w.Conn(ctx)
			if err != nil {
				t.Error(err)
			}
			held <- c
		}()
		for w.Stats().WaitCount == waits {
			runtime.Gosched()
		}
		return nil
	}))
	c := <-held
	require.NotNil(t, c)
	_, w1 := sqlitestore.CachedStatements(s)
	require.Equal(t, w0, w1, "not prepared: the connection was taken")
	require.NoError(t, c.Close())

	require.NoError(t, s.InTx(ctx, func(plan.Tx) error { return nil }))
	_, w2 := sqlitestore.CachedStatements(s)
	require.Equal(t, w0+1, w2, "prepared at the end of the next transaction")
}
