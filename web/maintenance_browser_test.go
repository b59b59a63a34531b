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

// TestBrowserMaintenance drives the dashboard in headless Chromium: a
// window over a tag made on the maintenance page, the monitor page saying
// "in maintenance until", ending it now, and starting maintenance from the
// monitor page itself.
func TestBrowserMaintenance(t *testing.T) {
	chromium := findChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	srv, err := server.New(ctx, server.Config{
		DatabaseURL: testdb.SQLitePath(t), Listen: "127.0.0.1:0",
		LogLevel: "info", LogFormat: "text", KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute,
		Web: web.Config{RefreshInterval: time.Second},
	}, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	runCtx, stopServer := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Run(runCtx) }()
	defer func() {
		stopServer()
		require.NoError(t, <-served)
	}()
	store := srv.Store()
	base := "http://" + srv.Addr()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	hash, err := web.HashPassword("maint-password-1")
	require.NoError(t, err)
	_, err = store.UserCreate(ctx, &monitors.UserCreateParams{ID: keys.NewID(), Email: "ada@example.com",
		PasswordHash: hash, ProjectIDs: []string{prj.ID}, Now: time.Now()})
	require.NoError(t, err)
	db := insertMonitor(t, store, prj.ID, "db-backup", func(m *monitors.Monitor) { m.Tags = []string{"db"} })
	web1 := insertMonitor(t, store, prj.ID, "web-sync", nil)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	b := &browser{t: t, ctx: bctx, base: base}
	_, err = chromedp.Call(bctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "UTC"})
	require.NoError(t, err)

	b.open("/", "Sign in to Vigil")
	b.fill("#email", "ada@example.com")
	b.fill("#password", "maint-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="db-backup"]')`, 10*time.Second)

	// A window over the db tag, from now, for two hours.
	b.click(`a[href="/maintenance"]`)
	b.waitFor("the maintenance page", `!!document.querySelector("#mw-name")`, 10*time.Second)
	b.checkLabels("the maintenance page")
	b.fill("#mw-name", "db upgrade")
	b.fill("#mw-tags", "db")
	b.fill("#mw-for", "2h")
	b.click(`form[action="/maintenance"] button[type="submit"]`)
	b.waitFor("the window listed", `!!document.querySelector('tr[data-window="db upgrade"] form[action$="/end"]')`, 10*time.Second)
	require.Contains(t, b.eval(`document.querySelector('tr[data-window="db upgrade"]').innerText`), "in effect until")
	ws, err := store.MaintenanceWindowList(ctx, prj.ID)
	require.NoError(t, err)
	require.Len(t, ws, 1)
	require.Equal(t, []string{"db"}, ws[0].Tags)
	require.WithinDuration(t, time.Now().Add(2*time.Hour), ws[0].EndsAt, time.Minute)
	b.capture("maintenance", chromedp.CaptureScreenshot())

	// The monitor page says so; the other monitor's does not.
	b.open("/monitors/"+db.ID, "db-backup")
	b.waitFor("in maintenance", b.hasText("In maintenance until"), 5*time.Second)
	b.open("/monitors/"+web1.ID, "web-sync")
	require.Equal(t, "false", b.eval(`String(document.body.innerText.includes("In maintenance until"))`))

	// End it now.
	b.open("/maintenance", "Maintenance")
	b.click(`tr[data-window="db upgrade"] form[action$="/end"] button`)
	b.waitFor("ended", `!document.querySelector('tr[data-window="db upgrade"] form[action$="/end"]')`, 10*time.Second)
	w, err := store.MaintenanceWindowGet(context.Background(), prj.ID, ws[0].ID)
	require.NoError(t, err)
	require.NotNil(t, w.EndedAt)
	b.open("/monitors/"+db.ID, "db-backup")
	require.Equal(t, "false", b.eval(`String(document.body.innerText.includes("In maintenance until"))`))

	// Maintenance from the monitor page itself.
	b.open("/monitors/"+web1.ID, "web-sync")
	b.fill("#mq-for", "30m")
	b.click(`form.maintenance-quick button[type="submit"]`)
	b.waitFor("in maintenance", b.hasText("In maintenance until"), 10*time.Second)
	ws, err = store.MaintenanceWindowList(ctx, prj.ID)
	require.NoError(t, err)
	require.Len(t, ws, 2)
	var quick *monitors.MaintenanceWindow
	for _, w := range ws {
		if len(w.Monitors) > 0 {
			quick = w
		}
	}
	require.NotNil(t, quick)
	require.Equal(t, []string{web1.ID}, quick.Monitors)
	require.True(t, quick.Active(time.Now()))
	b.checkLabels("the monitor page in maintenance")
}
