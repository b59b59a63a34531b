package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// TestBrowserMaintenance drives the dashboard in headless Chromium: a
// window over a tag made on the maintenance page, the monitor page saying
// "in maintenance until", ending it now, and starting maintenance from the
// monitor page itself.
func TestBrowserMaintenance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	srv, base := startDashboard(t, ctx, func(c *server.Config) { c.Web = web.Config{RefreshInterval: time.Second} })
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	addPerson(t, store, prj.ID, "ada@example.com", "maint-password-1")
	db := insertMonitor(t, store, prj.ID, "db-backup", func(m *monitors.Monitor) { m.Tags = []string{"db"} })
	web1 := insertMonitor(t, store, prj.ID, "web-sync", nil)

	b := openBrowser(t, ctx, base, "UTC")

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
