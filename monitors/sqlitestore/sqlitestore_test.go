package sqlitestore_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

func TestStore(t *testing.T) {
	newStore := func(t *testing.T) monitors.Store {
		s := testdb.SQLite(t)
		t.Cleanup(func() { require.Empty(t, orphans(t, s), "pings and runs left without their monitor") })
		return s
	}
	storetest.Run(t, newStore, storetest.Caps{
		Reopen: func(t *testing.T, s monitors.Store) monitors.Store {
			s2, err := sqlitestore.Open(t.Context(), sqlitestore.Path(s.(*sqlitestore.Store)), sqlitestore.Options{Logger: testdb.Logger(t)})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s2.Close()) })
			return s2
		},
		WithMonitorLimit: func(t *testing.T, max int) monitors.Store {
			s, err := sqlitestore.Open(t.Context(), testdb.SQLitePath(t), sqlitestore.Options{Logger: testdb.Logger(t), MaxMonitorsPerProject: max})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		},
		DeleteProject: func(t *testing.T, s monitors.Store, id string) {
			_, err := sqlitestore.Writer(s.(*sqlitestore.Store)).ExecContext(t.Context(), `DELETE FROM projects WHERE id = ?`, id)
			require.NoError(t, err)
		},
		Orphans: func(t *testing.T, s monitors.Store) []string { return orphans(t, s.(*sqlitestore.Store)) },
	})
}

// orphans runs storetest.OrphansSQL on a connection of its own (the test
// may have closed the store).
func orphans(t *testing.T, s *sqlitestore.Store) []string {
	db, err := sql.Open("sqlite", sqlitestore.Path(s))
	require.NoError(t, err)
	defer db.Close()
	return column(t, db, storetest.OrphansSQL)
}

// column runs query on db and returns its rows' one text column.
func column(t *testing.T, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		require.NoError(t, rows.Scan(&v))
		out = append(out, v)
	}
	require.NoError(t, rows.Err())
	return out
}

func TestPragmas(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	db := sqlitestore.Writer(s)
	var mode string
	var sync, fk int
	require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode))
	require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA synchronous").Scan(&sync))
	require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA foreign_keys").Scan(&fk))
	require.Equal(t, "wal", mode)
	require.Equal(t, 1, sync, "NORMAL")
	require.Equal(t, 1, fk)
	var auto int
	require.NoError(t, db.QueryRowContext(t.Context(), "PRAGMA wal_autocheckpoint").Scan(&auto))
	require.Zero(t, auto, "commits do not checkpoint: the store's checkpointer does, on a connection of its own")
}

// TestOneOpenIncidentInSchema checks that the database itself, not only the
// store's code, refuses a second open incident of one kind.
func TestOneOpenIncidentInSchema(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	db := sqlitestore.Writer(s)
	insert := func(id string) error {
		_, err := db.ExecContext(ctx, `INSERT INTO incidents (id, project_id, monitor_id, kind, opened_at) VALUES (?, ?, ?, 'missed', 0)`,
			id, p.ID, m.ID)
		return err
	}
	require.NoError(t, insert("i1"))
	require.ErrorContains(t, insert("i2"), "UNIQUE constraint failed")
	_, err := db.ExecContext(ctx, `UPDATE incidents SET resolved_at = 1 WHERE id = 'i1'`)
	require.NoError(t, err)
	require.NoError(t, insert("i2"), "once resolved, the kind may open again")

	ev := func(kind string) error {
		_, err := db.ExecContext(ctx, `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at) VALUES ('i2', ?, ?, ?, 0)`,
			m.ID, p.ID, kind)
		return err
	}
	require.NoError(t, ev("incident.opened"))
	require.Error(t, ev("incident.opened"), "opened once")
	require.NoError(t, ev("incident.updated"))
	require.NoError(t, ev("incident.updated"), "updates repeat")
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	_, err := sqlitestore.Open(context.Background(), "", sqlitestore.Options{})
	require.Error(t, err)
	_, err = sqlitestore.Open(context.Background(), t.TempDir()+"/missing-dir/vigil.db", sqlitestore.Options{})
	require.Error(t, err)
}

// TestPathWithOddCharacters opens a file whose name would break a naive DSN.
func TestPathWithOddCharacters(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/a dir?x=1&y#z/vigil db.sqlite"
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	s, err := sqlitestore.Open(t.Context(), path, sqlitestore.Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.ProjectCreate(t.Context(), &monitors.ProjectCreateParams{ID: "p", Name: "p", PingKey: "k", Now: time.Now()})
	require.NoError(t, err)
	require.FileExists(t, path)
}

func BenchmarkPingRecordBatch(b *testing.B) {
	storetest.BenchmarkPingRecordBatch(b, func(tb testing.TB) monitors.Store { return testdb.SQLite(tb) })
}

// TestPingAgeLimit checks that pings received before the age limit go,
// oldest first, whatever the count kept, and that newer ones stay.
func TestPingAgeLimit(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	ctx := t.Context()
	p := storetest.MustProject(t, s)
	m := storetest.MustMonitor(t, s, p.ID, "job", nil)
	const n = 12_000 // more than one chunk of deletes
	pings := make([]*monitors.PingRecordParams, 0, 1000)
	for i := range n {
		pings = append(pings, storetest.Ping(m, monitors.PingLog, storetest.T0.Add(time.Duration(i)*time.Minute)))
		if len(pings) == cap(pings) {
			_, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: pings})
			require.NoError(t, err)
			pings = pings[:0]
		}
	}
	before := storetest.T0.Add(11_000 * time.Minute)
	deleted, err := s.PingPrune(ctx, &monitors.PingPruneParams{KeepPings: 100_000, KeepRuns: 100_000, Before: before})
	require.NoError(t, err)
	require.EqualValues(t, 11_000, deleted)
	got, err := s.PingList(ctx, &monitors.HistoryListParams{ProjectID: p.ID, MonitorID: m.ID, Limit: n})
	require.NoError(t, err)
	require.Len(t, got, 1000)
	require.True(t, got[len(got)-1].At.Equal(before), "the oldest left is the first at the limit: %v", got[len(got)-1].At)

	deleted, err = s.PingPrune(ctx, &monitors.PingPruneParams{KeepPings: 100_000, KeepRuns: 100_000, Before: before})
	require.NoError(t, err)
	require.Zero(t, deleted, "a second prune finds nothing")
}

// TestFilesArePrivate checks that the database, its WAL and shared-memory
// files and a backup of it are created readable by their owner only, even
// under a permissive umask: they hold ping keys and hashes of passwords
// and API keys.
func TestFilesArePrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "vigil.db")
	s, err := sqlitestore.Open(t.Context(), path, sqlitestore.Options{})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.ProjectCreate(t.Context(), &monitors.ProjectCreateParams{ID: "p", Name: "p", PingKey: "k", Now: time.Now()})
	require.NoError(t, err)
	backup := filepath.Join(dir, "copy.db")
	require.NoError(t, sqlitestore.Backup(t.Context(), path, backup))
	for _, f := range []string{path, path + "-wal", path + "-shm", backup} {
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "%s is %v", filepath.Base(f), st.Mode().Perm())
	}

	// A file that exists keeps the mode its operator gave it.
	other := filepath.Join(dir, "shared.db")
	require.NoError(t, os.WriteFile(other, nil, 0o640))
	require.NoError(t, os.Chmod(other, 0o640))
	s2, err := sqlitestore.Open(t.Context(), other, sqlitestore.Options{})
	require.NoError(t, err)
	require.NoError(t, s2.Close())
	st, err := os.Stat(other)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), st.Mode().Perm())
}

func TestSealing(t *testing.T) {
	storetest.RunSealing(t, storetest.Sealing{
		NewDB: func(t *testing.T) string { return testdb.SQLitePath(t) },
		Open: func(t *testing.T, db string, sealer plan.Sealer) monitors.Store {
			s, err := sqlitestore.Open(t.Context(), db, sqlitestore.Options{Logger: testdb.Logger(t), Sealer: sealer})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, s.Close()) })
			return s
		},
		RawConfig: func(t *testing.T, s monitors.Store, channelID string) string {
			var raw string
			require.NoError(t, sqlitestore.Writer(s.(*sqlitestore.Store)).QueryRowContext(t.Context(),
				`SELECT config FROM channels WHERE id = ?`, channelID).Scan(&raw))
			return raw
		},
	})
}

func BenchmarkLoadReport(b *testing.B) {
	storetest.BenchmarkLoadReport(b, func(tb testing.TB) monitors.Store { return testdb.SQLite(tb) })
}

// TestRowVersionCoversEveryColumn checks that a monitor row's version (and
// so the monitor list's marker) hashes every column of monitors: a column
// added and left out would change the list without changing its marker.
func TestRowVersionCoversEveryColumn(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	rows, err := sqlitestore.Writer(s).QueryContext(t.Context(), "SELECT name FROM pragma_table_info('monitors') ORDER BY name")
	require.NoError(t, err)
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		require.NoError(t, rows.Scan(&c))
		cols = append(cols, c)
	}
	require.NoError(t, rows.Err())
	var hashed []string
	for c := range strings.SplitSeq(sqlitestore.RowVersionCols, ",") {
		hashed = append(hashed, strings.TrimSpace(c))
	}
	slices.Sort(hashed)
	require.Equal(t, cols, hashed)
}

func BenchmarkEvaluateDue(b *testing.B) {
	storetest.BenchmarkEvaluateDue(b, func(tb testing.TB) monitors.Store { return testdb.SQLite(tb) })
}

// TestListVersionTriggers checks the triggers that keep the monitor list's
// marker (monitor_list_versions, migration 0028): a write of any column of
// a monitor row moves its project's marker and no other, and so do an
// insert, a delete, a pruning of runs (counted first and again), and a
// monitor moved between projects (both). A migration that rebuilds
// monitors or monitor_runs_pruned without creating the triggers again
// fails here.
func TestListVersionTriggers(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	ctx := t.Context()
	w := sqlitestore.Writer(s)
	exec := func(q string, args ...any) {
		t.Helper()
		_, err := w.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	prj, other := storetest.MustProject(t, s), storetest.MustProject(t, s)
	marker := func(p *monitors.Project) string {
		t.Helper()
		m, err := s.MonitorListMarker(ctx, p.ID)
		require.NoError(t, err)
		return m
	}
	last := map[*monitors.Project]string{prj: marker(prj), other: marker(other)}
	// moved checks that what fn did moved the marker of the projects in
	// moves and of no other.
	moved := func(what string, fn func(), moves ...*monitors.Project) {
		t.Helper()
		fn()
		for p, was := range last {
			now := marker(p)
			if slices.Contains(moves, p) {
				require.NotEqual(t, was, now, "%s moves the marker", what)
			} else {
				require.Equal(t, was, now, "%s leaves another project's marker", what)
			}
			last[p] = now
		}
	}
	var m *monitors.Monitor
	moved("a monitor added", func() { m = storetest.MustMonitor(t, s, prj.ID, "job", nil) }, prj)
	storetest.MustMonitor(t, s, other.ID, "elsewhere", nil)
	last[other] = marker(other)

	cols := column(t, w, "SELECT name FROM pragma_table_info('monitors') ORDER BY name")
	require.Contains(t, cols, "state")
	for _, c := range cols {
		// The same value written again: the trigger counts writes, not
		// changes, so that no column can be left out of it.
		moved("a write of "+c, func() { exec(`UPDATE monitors SET "`+c+`" = "`+c+`" WHERE id = ?`, m.ID) }, prj)
	}
	moved("a write of no row", func() { exec(`UPDATE monitors SET name = name WHERE id = 'none'`) })
	moved("a first pruning", func() { exec(sqlitestore.QRunPruned, m.ID) }, prj)
	moved("another pruning", func() { exec(sqlitestore.QRunPruned, m.ID) }, prj)
	moved("a monitor moved to another project", func() { exec(`UPDATE monitors SET project_id = ? WHERE id = ?`, other.ID, m.ID) }, prj, other)
	moved("a monitor deleted", func() { require.NoError(t, s.MonitorDelete(ctx, other.ID, m.ID)) }, other)

	var n int
	require.NoError(t, w.QueryRowContext(ctx, `SELECT count(*) FROM monitor_list_versions WHERE project_id = ?`, other.ID).Scan(&n))
	require.Equal(t, 1, n, "a project has its count from its creation")
	exec(`DELETE FROM projects WHERE id = ?`, other.ID)
	require.NoError(t, w.QueryRowContext(ctx, `SELECT count(*) FROM monitor_list_versions WHERE project_id = ?`, other.ID).Scan(&n))
	require.Zero(t, n, "and it goes with the project")
}

func BenchmarkPingBatchLoad(b *testing.B) {
	storetest.BenchmarkPingBatchLoad(b, func(tb testing.TB) storetest.BatchLoader { return testdb.SQLite(tb) })
}

func TestBatchLoad(t *testing.T) {
	storetest.RunBatchLoad(t, func(tb testing.TB) storetest.BatchLoader { return testdb.SQLite(tb) })
}
