package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// TestBrowserSnooze drives the dashboard in headless Chromium: snoozing a
// monitor for an hour from its page, the page and the list saying
// "snoozed until", ending the snooze, a custom duration, and a
// notification's signed link opened without a sign-in (its page snoozes
// nothing until its button is pressed).
func TestBrowserSnooze(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	var dbURL string
	srv, base := startDashboard(t, ctx, func(c *server.Config) {
		dbURL = c.DatabaseURL
		c.Web = web.Config{RefreshInterval: time.Second}
	})
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	addPerson(t, store, prj.ID, "ada@example.com", "snooze-password-1")
	backup := insertMonitor(t, store, prj.ID, "nightly-backup", nil)
	report := insertMonitor(t, store, prj.ID, "weekly-report", nil)
	snoozed := func(m *monitors.Monitor) *time.Time {
		t.Helper()
		got, err := store.MonitorGet(ctx, prj.ID, m.ID)
		require.NoError(t, err)
		return got.SnoozedUntil
	}

	// The link a notification carries, signed with the server's key file.
	keyFile, err := server.SecretKeyFile(dbURL, "")
	require.NoError(t, err)
	kr, err := secrets.Load(keyFile)
	require.NoError(t, err)
	link := manage.NewSnoozeLink(kr, prj.ID, report.ID, manage.SnoozeLinkSeconds, time.Now().Add(manage.SnoozeLinkTTL)).Path()

	b := openBrowser(t, ctx, base, "UTC")

	// Without a sign-in, the link's page says what it would do.
	b.open(link, "Snooze weekly-report?")
	require.Nil(t, snoozed(report), "opening the link snoozes nothing")
	b.click(`.snooze-link form button[type="submit"]`)
	b.waitFor("snoozed by the link", `[...document.querySelectorAll("h1")].some(h => h.textContent.trim() === "Snoozed")`, 10*time.Second)
	require.WithinDuration(t, time.Now().Add(time.Hour), *snoozed(report), time.Minute)

	b.open("/", "Sign in to Vigil")
	b.fill("#email", "ada@example.com")
	b.fill("#password", "snooze-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="nightly-backup"]')`, 10*time.Second)
	require.Contains(t, b.eval(`document.querySelector('tr[data-slug="weekly-report"]').innerText`), "snoozed until")
	require.NotContains(t, b.eval(`document.querySelector('tr[data-slug="nightly-backup"]').innerText`), "snoozed until")

	// Snooze 1 h from the monitor page.
	b.open("/monitors/"+backup.ID, "nightly-backup")
	b.checkLabels("the monitor page")
	b.click(`form[action$="/snooze"] input[value="1h"] ~ button`)
	b.waitFor("snoozed", b.hasText("Snoozed until"), 10*time.Second)
	require.WithinDuration(t, time.Now().Add(time.Hour), *snoozed(backup), time.Minute)

	// End it, then snooze for a custom duration.
	b.click(`form[action$="/unsnooze"] button`)
	b.waitFor("not snoozed", `!!document.querySelector("#sz-for")`, 10*time.Second)
	require.Nil(t, snoozed(backup))
	b.fill("#sz-for", "30m")
	b.click(`form:has(#sz-for) button[type="submit"]`)
	b.waitFor("snoozed again", b.hasText("Snoozed until"), 10*time.Second)
	require.WithinDuration(t, time.Now().Add(30*time.Minute), *snoozed(backup), time.Minute)
	b.open("/", "Monitors")
	require.Contains(t, b.eval(`document.querySelector('tr[data-slug="nightly-backup"]').innerText`), "snoozed until")
}
