package pgstore_test

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// TestDumpAndRestore follows the backup procedure of docs/operations.md
// (pg_dump -Fc, pg_restore into an empty database) on a database whose
// pings are spread over the legacy table, a monthly partition and the
// default partition: the restored database has every ping, its partitions
// keep working, and new pings get new IDs.
func TestDumpAndRestore(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	dbURL := testdb.PostgresURL(t)
	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	schema := u.Query().Get("search_path")
	plain := *u
	plain.RawQuery = ""
	ctx := t.Context()

	s, err := pgstore.Open(ctx, dbURL, pgstore.Options{Logger: testdb.Logger(t)})
	require.NoError(t, err)
	defer s.Close()
	parts, err := pgstore.PingPartitions(ctx, s)
	require.NoError(t, err)
	cutover := parts["pings_legacy"]
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	var last int64
	for _, at := range []time.Time{cutover.AddDate(0, -1, 0), cutover.AddDate(0, 0, 3), time.Date(2199, 1, 1, 0, 0, 0, 0, time.UTC)} {
		res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
			storetest.Ping(m, monitors.PingLog, at)}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		last = res[0].PingID
	}
	before, err := s.PingList(ctx, &monitors.HistoryListParams{ProjectID: p.ID, MonitorID: m.ID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, before, 3)

	dump := filepath.Join(t.TempDir(), "vigil.dump")
	out, err := exec.CommandContext(ctx, "pg_dump", "-Fc", "-n", schema, "-f", dump, plain.String()).CombinedOutput()
	require.NoError(t, err, "pg_dump: %s", out)

	// An empty database to restore into, dropped at the end.
	admin, err := pgx.Connect(ctx, plain.String())
	require.NoError(t, err)
	defer admin.Close(ctx)
	restored := "vigil_restore_" + schema
	_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{restored}.Sanitize())
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, plain.String())
		require.NoError(t, err)
		defer c.Close(ctx)
		_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{restored}.Sanitize()+" WITH (FORCE)")
		require.NoError(t, err)
	})
	target := plain
	target.Path = "/" + restored
	out, err = exec.CommandContext(ctx, "pg_restore", "--exit-on-error", "-d", target.String(), dump).CombinedOutput()
	require.NoError(t, err, "pg_restore: %s", out)

	q := target.Query()
	q.Set("search_path", schema)
	target.RawQuery = q.Encode()
	r, err := pgstore.Open(ctx, target.String(), pgstore.Options{Logger: testdb.Logger(t)})
	require.NoError(t, err, "a restored database opens (and migrates nothing)")
	defer r.Close()
	after, err := r.PingList(ctx, &monitors.HistoryListParams{ProjectID: p.ID, MonitorID: m.ID, Limit: 10})
	require.NoError(t, err)
	require.Equal(t, before, after, "every ping restored")
	rparts, err := pgstore.PingPartitions(ctx, r)
	require.NoError(t, err)
	require.Equal(t, parts, rparts, "the partitions restored")

	res, err := r.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		storetest.Ping(m, monitors.PingLog, cutover.AddDate(0, 0, 4))}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.Greater(t, res[0].PingID, last, "the ID sequence restored")
	n, err := r.PingPrune(ctx, &monitors.PingPruneParams{Before: cutover.AddDate(0, 1, 0), Now: cutover.AddDate(0, 0, 5)})
	require.NoError(t, err)
	require.Zero(t, n)
	after, err = r.PingList(ctx, &monitors.HistoryListParams{ProjectID: p.ID, MonitorID: m.ID, Limit: 10})
	require.NoError(t, err)
	require.Len(t, after, 1, "the restored partitions age out as before: only the default partition's ping is left")
}
