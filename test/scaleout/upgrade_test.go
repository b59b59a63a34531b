package scaleout_test

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/migrations"
)

// previousRelease is the commit whose binary and schema (migrations 0001
// to 0005) the upgrade test starts from.
const previousRelease = "846bf11"

// TestUpgradeUnderLoad checks the expand-then-contract rule of
// docs/operations.md: the previous release's binary migrates a fresh
// database to its schema and takes pings; the current binary starts on the
// same database and applies its own migrations while the old one keeps
// serving; then both take pings side by side, as during a rolling
// deploy. Every ping either acknowledges must be stored, and both must
// answer only 200.
func TestUpgradeUnderLoad(t *testing.T) {
	dbURL := testdb.PostgresURL(t)
	_, err := exec.LookPath("git")
	need(t, err == nil, "git is not installed")
	top, err := exec.Command("git", "-C", "../..", "rev-parse", "--show-toplevel").Output()
	need(t, err == nil, "not in a git checkout")
	need(t, exec.Command("git", "-C", "../..", "cat-file", "-e", previousRelease+"^{commit}").Run() == nil,
		"the previous release "+previousRelease+" is not in this checkout's history")

	oldSrc := t.TempDir()
	archive := exec.Command("sh", "-c", fmt.Sprintf("git -C %q archive %s | tar -x -C %q", string(top[:len(top)-1]), previousRelease, oldSrc))
	b, err := archive.CombinedOutput()
	require.NoError(t, err, "%s", b)
	oldBin := buildVigil(t, oldSrc)
	newBin := buildVigil(t, "../..")
	ctx := context.Background()

	env := []string{"VIGIL_DATABASE_URL=" + dbURL, "VIGIL_SECRET_KEY_FILE=" + testdb.KeyFile(dbURL), "VIGIL_PING_RATE_LIMIT=0", "VIGIL_KEEP_PINGS=10000000"}
	old := newReplica(t, "old", oldBin, env)
	out := old.start()
	key := regexp.MustCompile(`vk_[A-Za-z0-9_-]{40,}`).FindString(out)
	require.NotEmpty(t, key, "the bootstrap API key:\n%s", out)
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var version int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version))
	require.EqualValues(t, 5, version, "the previous release's schema")

	base := "http://" + old.addr
	var keys []string
	for i := range 20 {
		var m monitorInfo
		require.NoError(t, api(ctx, base, key, http.MethodPost, "/api/v1/monitors", map[string]any{
			"name": fmt.Sprintf("job-%d", i), "grace_seconds": 3600,
			"schedule": map[string]any{"kind": "interval", "every_seconds": 3600},
		}, &m))
		keys = append(keys, m.PingURL[len(m.PingURL)-36:])
	}

	stats := &pingStats{statuses: map[int]int{}, start: time.Now()}
	var targets sync.Map // name → base URL of a replica taking pings
	targets.Store("old", base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			c := &http.Client{Timeout: 20 * time.Second}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				var urls []string
				targets.Range(func(_, v any) bool { urls = append(urls, v.(string)); return true })
				u := urls[n%len(urls)]
				stats.ping(c, u+"/ping/"+keys[(g+n)%len(keys)], fmt.Sprintf("u-%d-%d", g, n))
			}
		})
	}
	time.Sleep(2 * time.Second)
	current := newReplica(t, "new", newBin, env)
	current.start() // migrates while the old binary serves
	require.NoError(t, conn.QueryRow(ctx, `SELECT max(version_id) FROM goose_db_version`).Scan(&version))
	names, err := migrations.Names(migrations.Postgres)
	require.NoError(t, err)
	t.Logf("schema now at version %d (%d migrations in this binary)", version, len(names))
	targets.Store("new", "http://"+current.addr)
	time.Sleep(5 * time.Second) // old and new side by side
	close(stop)
	wg.Wait()

	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the old binary is still ready on the new schema")
	for _, r := range []*replica{old, current} {
		_, err := r.term()
		require.NoError(t, err, "%s", r.name)
	}

	rows, err := conn.Query(ctx, `SELECT body FROM pings`)
	require.NoError(t, err)
	stored := map[string]bool{}
	for rows.Next() {
		var body string
		require.NoError(t, rows.Scan(&body))
		stored[body] = true
	}
	require.NoError(t, rows.Err())
	lost := 0
	for _, b := range stats.acked {
		if !stored[b] {
			lost++
		}
	}
	require.Zero(t, lost, "acknowledged pings missing")
	require.Equal(t, map[int]int{200: len(stats.acked)}, stats.statuses, "every ping answered 200: %v\nold:\n%s\nnew:\n%s",
		stats.odd, old.logTail(), current.logTail())
	require.Empty(t, stats.given)
	t.Logf("%d pings acknowledged by the old and the new binary across the upgrade, 0 lost", len(stats.acked))
}
