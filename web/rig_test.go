package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// startDashboard runs a real server on a new SQLite file for a browser
// test, on port 0 without a base URL (its ping URLs name the port it got),
// with set's changes to the settings; it stops when the test ends.
func startDashboard(t *testing.T, ctx context.Context, set func(c *server.Config)) (srv *server.Server, base string) {
	t.Helper()
	cfg := server.Config{
		DatabaseURL: testdb.SQLitePath(t), Listen: "127.0.0.1:0",
		LogLevel: "info", LogFormat: "text", KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute,
	}
	if set != nil {
		set(&cfg)
	}
	srv, err := server.New(ctx, cfg, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	runCtx, stopServer := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Run(runCtx) }()
	t.Cleanup(func() {
		stopServer()
		require.NoError(t, <-served)
	})
	return srv, "http://" + srv.Addr()
}

// addPerson makes an account that belongs to the project.
func addPerson(t *testing.T, store monitors.Store, projectID, email, password string) {
	t.Helper()
	hash, err := web.HashPassword(password)
	require.NoError(t, err)
	_, err = store.UserCreate(context.Background(), &monitors.UserCreateParams{ID: keys.NewID(), Email: email,
		PasswordHash: hash, ProjectIDs: []string{projectID}, Now: time.Now()})
	require.NoError(t, err)
}

// openBrowser starts headless Chromium (1280×900, in the zone tz, without
// the background traffic this machine's closed network refuses) on the
// dashboard at base; it closes when the test ends.
func openBrowser(t *testing.T, ctx context.Context, base, tz string) *browser {
	t.Helper()
	chromium := findChromium(t)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)...)
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	// The first run starts the browser.
	_, err := chromedp.Call(bctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: tz})
	require.NoError(t, err)
	return &browser{t: t, ctx: bctx, base: base}
}
