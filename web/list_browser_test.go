package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// TestBrowserListUnchangedIsNotRedrawn drives the monitor list in headless
// Chromium: while nothing changes, its refreshes are answered 304 and the
// rows stay the same elements; when a monitor changes, the next refresh
// draws it.
func TestBrowserListUnchangedIsNotRedrawn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	srv, base := startDashboard(t, ctx, func(c *server.Config) { c.Web = web.Config{RefreshInterval: 300 * time.Millisecond} })
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	addPerson(t, store, prj.ID, "ada@example.com", "list-password-1")
	// Never pinged, on an interval: nothing in their rows moves with time.
	steady := insertMonitor(t, store, prj.ID, "steady-job", nil)
	insertMonitor(t, store, prj.ID, "other-job", nil)

	b := openBrowser(t, ctx, base, "UTC")
	b.open("/", "Sign in to Vigil")
	b.fill("#email", "ada@example.com")
	b.fill("#password", "list-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="steady-job"]')`, 10*time.Second)
	require.NotEmpty(t, b.eval(`document.querySelector("#monitor-rows").dataset.etag`))

	// Count the list's refreshes and their answers, and mark its rows: a
	// redrawn list has new elements, without the mark.
	b.eval(`window.codes = [];
		document.body.addEventListener("htmx:beforeSwap", e => { if (e.detail.elt.id === "monitor-rows") window.codes.push(e.detail.xhr.status); });
		document.querySelector('tr[data-slug="steady-job"]').dataset.mark = "kept"; "ok"`)
	b.waitFor("four refreshes", `window.codes.length >= 4`, 10*time.Second)
	require.Equal(t, "304,304,304,304", b.eval(`window.codes.slice(0, 4).join(",")`), "an unchanged list is not sent again")
	require.Equal(t, "kept", b.eval(`document.querySelector('tr[data-slug="steady-job"]').dataset.mark || ""`), "nor drawn again")

	// A ping changes the monitor: the next refresh draws it.
	record(t, store, steady, monitors.Ping{Kind: monitors.PingSuccess, At: time.Now()})
	b.waitFor("the ping shown", `document.querySelector('tr[data-slug="steady-job"]').textContent.includes("success")`, 10*time.Second)
	require.Empty(t, b.eval(`document.querySelector('tr[data-slug="steady-job"]').dataset.mark || ""`))
	require.True(t, strings.Contains(b.eval(`window.codes.join(",")`), "200"), "the changed list came with 200")
	require.NotContains(t, b.eval(`sessionStorage.getItem("problems") || ""`), "error")
}
