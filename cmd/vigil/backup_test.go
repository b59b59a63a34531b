package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// TestBackupAndRestore backs up a SQLite database with "vigil backup"
// while a running server stores pings, restores the copy (a server started
// on it), and checks that every ping acknowledged before the backup began
// is in it, that it has no ping that was never acknowledged, and that the
// restored Vigil takes pings.
func TestBackupAndRestore(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "vigil.db")
	cfg := server.Config{DatabaseURL: dbPath, Listen: "127.0.0.1:0", LogLevel: "warn", LogFormat: "text",
		KeepPings: 100_000, KeepRuns: 100_000, PruneInterval: time.Hour}
	srv, err := server.New(ctx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	project := srv.Bootstrapped.Project
	base := "http://" + srv.Addr() + "/ping/" + project.PingKey

	const monitorsN = 8
	var acked atomic.Int64
	for i := range monitorsN {
		resp, err := http.Get(fmt.Sprintf("%s/job-%d/log?create=1", base, i))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusCreated, resp.StatusCode)
		acked.Add(1)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range monitorsN {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := http.Get(fmt.Sprintf("%s/job-%d", base, i))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("ping: %d", resp.StatusCode)
					return
				}
				acked.Add(1)
			}
		})
	}
	require.Eventually(t, func() bool { return acked.Load() > 200 }, 20*time.Second, 5*time.Millisecond)

	copyPath := filepath.Join(dir, "copy.db")
	before := acked.Load()
	code, out, errOut := runVigil(t, map[string]string{"VIGIL_DATABASE_URL": dbPath}, "backup", copyPath)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "integrity checked")
	afterBackup := acked.Load()
	time.Sleep(50 * time.Millisecond) // pings keep flowing after the copy
	close(stop)
	wg.Wait()
	total := acked.Load()
	cancel()
	require.NoError(t, <-done)
	require.Greater(t, total, afterBackup, "the server kept storing pings during and after the backup")

	code, _, errOut = runVigil(t, map[string]string{"VIGIL_DATABASE_URL": dbPath}, "backup", copyPath)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "the file exists")

	// Restore: a server started on the copy.
	restored := filepath.Join(t.TempDir(), "vigil.db")
	b, err := os.ReadFile(copyPath)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(restored, b, 0o600))
	cfg.DatabaseURL = restored
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	srv2, err := server.New(ctx2, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.Nil(t, srv2.Bootstrapped, "the restored database has its project")
	var inCopy int64
	for i := range monitorsN {
		m, err := srv2.Store().MonitorGetBySlug(ctx2, project.ID, fmt.Sprintf("job-%d", i))
		require.NoError(t, err)
		ps, err := srv2.Store().PingList(ctx2, &monitors.HistoryListParams{ProjectID: project.ID, MonitorID: m.ID, Limit: 100_000})
		require.NoError(t, err)
		inCopy += int64(len(ps))
	}
	require.GreaterOrEqual(t, inCopy, before, "every ping acknowledged before the backup began is in the copy")
	// A ping is counted once its answer is read, after its commit: each of
	// the monitorsN clients may have one committed (and so in the copy)
	// but not yet counted when the backup ends.
	require.LessOrEqual(t, inCopy, afterBackup+monitorsN, "the copy holds no ping sent only after the backup ended")
	t.Logf("pings: %d acknowledged before the backup, %d in the copy, %d by its end, %d in all", before, inCopy, afterBackup, total)

	require.NoError(t, srv2.Listen())
	done2 := make(chan error, 1)
	go func() { done2 <- srv2.Run(ctx2) }()
	resp, err := http.Get("http://" + srv2.Addr() + "/ping/" + project.PingKey + "/job-0")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the restored Vigil takes pings")
	cancel2()
	require.NoError(t, <-done2)
}

// TestBackupRefuses checks what "vigil backup" will not do.
func TestBackupRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		env  map[string]string
		args []string
		code int
		msg  string
	}{
		{nil, []string{"backup"}, 2, "name the file"},
		{map[string]string{"VIGIL_DATABASE_URL": "postgres://x@127.0.0.1/db"}, []string{"backup", filepath.Join(dir, "a.db")}, 1, "pg_dump"},
		{map[string]string{"VIGIL_DATABASE_URL": filepath.Join(dir, "missing.db")}, []string{"backup", filepath.Join(dir, "b.db")}, 1, "no such file"},
	} {
		code, _, errOut := runVigil(t, tc.env, tc.args...)
		require.Equal(t, tc.code, code, errOut)
		require.Contains(t, errOut, tc.msg)
	}
	_, err := os.Stat(filepath.Join(dir, "missing.db"))
	require.ErrorIs(t, err, os.ErrNotExist, "a missing database is not created")
}
