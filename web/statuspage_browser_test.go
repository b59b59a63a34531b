package web_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// publicGet fetches a public URL with no cookie, as anyone would.
func publicGet(t *testing.T, url string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// atomDoc is what the test reads of an Atom feed.
type atomDoc struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string   `xml:"id"`
	Title   string   `xml:"title"`
	Updated string   `xml:"updated"`
	Entries []struct {
		ID        string `xml:"id"`
		Title     string `xml:"title"`
		Updated   string `xml:"updated"`
		Published string `xml:"published"`
		Content   string `xml:"content"`
	} `xml:"entry"`
}

// TestBrowserStatusPage makes a status page on the dashboard, publishes
// it, adds a note to an incident, and reads the public page, its JSON and
// its feed without signing in: what was chosen is there, nothing internal
// is, and an unpublished page answers as an unknown slug does.
func TestBrowserStatusPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()

	srv, base := startDashboard(t, ctx, func(c *server.Config) { c.Web = web.Config{RefreshInterval: time.Hour} })
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	addPerson(t, store, prj.ID, "grace@example.com", "status-password-1")

	// Two months of nightly runs; the backup failed once, twelve days ago;
	// the invoices fail now.
	now := time.Now()
	daily := func(slug string, tags []string, failDay int, output string) *monitors.Monitor {
		m := insertMonitor(t, store, prj.ID, slug, func(m *monitors.Monitor) {
			m.Tags = tags
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 86400}
			m.GraceSeconds = 3600
		})
		var pings []monitors.Ping
		for d := 60; d >= 1; d-- {
			at := now.Add(-time.Duration(d)*24*time.Hour + time.Hour)
			kind, body := monitors.PingSuccess, ""
			if d == failDay {
				kind, body = monitors.PingFail, output
			}
			pings = append(pings, monitors.Ping{Kind: monitors.PingStart, At: at.Add(-40 * time.Second), RID: slug},
				monitors.Ping{Kind: kind, At: at, RID: slug, Body: body})
		}
		record(t, store, m, pings...)
		return m
	}
	backup := daily("db-backup-internal", []string{"db"}, 12, "OUTPUT-SECRET pg_dump: disk full")
	replica := daily("replica-check", []string{"db"}, 0, "")
	invoices := daily("invoice-sync-internal", []string{"billing"}, 0, "")
	record(t, store, invoices, monitors.Ping{Kind: monitors.PingFail, At: now.Add(-5 * time.Minute), Body: "OUTPUT-SECRET smtp 421"})
	hidden := insertMonitor(t, store, prj.ID, "secret-job", func(m *monitors.Monitor) { m.Tags = []string{"hidden-tag-xyz"} })

	b := openBrowser(t, ctx, base, "UTC")
	b.open("/", "Sign in to Vigil")
	b.fill("#email", "grace@example.com")
	b.fill("#password", "status-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="replica-check"]')`, 10*time.Second)

	// Make the page: unpublished, so its address answers 404.
	b.click(`a[href="/status-pages"]`)
	b.waitFor("the status pages", `!!document.querySelector("#sp-title")`, 10*time.Second)
	b.checkLabels("the status pages")
	b.fill("#sp-title", "Acme nightly jobs")
	b.fill("#sp-slug", "acme")
	b.click(`form[action="/status-pages"] button[type="submit"]`)
	b.waitFor("the editor", `[...document.querySelectorAll("h1")].some(h => h.textContent.trim() === "Edit status page")`, 10*time.Second)
	b.checkLabels("the status page editor")
	b.click("#show-" + backup.ID)
	b.fill(`input[name="name-`+backup.ID+`"]`, "Database backup")
	b.fill(`input[name="pos-`+backup.ID+`"]`, "1")
	b.click("#show-" + invoices.ID)
	b.fill(`input[name="name-`+invoices.ID+`"]`, "Invoices")
	b.fill(`input[name="pos-`+invoices.ID+`"]`, "2")
	b.fill(`input[name="tag-0"]`, "db")
	b.fill(`input[name="heading-0"]`, "Databases")
	b.fill(`input[name="tagpos-0"]`, "3")
	b.click(`form.status-page-form button[type="submit"]`)
	b.waitFor("saved", b.hasText("saved; it is not public"), 10*time.Second)
	pages, err := store.StatusPageList(ctx, prj.ID)
	require.NoError(t, err)
	require.Len(t, pages, 1)
	require.False(t, pages[0].Published)
	require.Equal(t, []monitors.StatusPageItem{{Monitor: backup.ID, Name: "Database backup"}, {Monitor: invoices.ID, Name: "Invoices"},
		{Tag: "db", Name: "Databases"}}, pages[0].Items)

	status, _, unknownBody := publicGet(t, base+"/status/no-such-page", nil)
	require.Equal(t, http.StatusNotFound, status)
	for _, path := range []string{"/status/acme", "/status/acme.json", "/status/acme/feed.atom"} {
		status, _, body := publicGet(t, base+path, nil)
		require.Equal(t, http.StatusNotFound, status, "%s unpublished", path)
		require.Equal(t, unknownBody, body, "%s: an unpublished page answers as an unknown one", path)
	}

	// Publish it.
	b.click(`tr[data-status-page="acme"] form[action$="/publish"] button`)
	b.waitFor("published", b.hasText("is public at"), 10*time.Second)

	// A note on the open incident, from the monitor page.
	ins, err := store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: prj.ID, MonitorID: invoices.ID, OpenOnly: true})
	require.NoError(t, err)
	require.Len(t, ins, 1)
	b.open("/monitors/"+invoices.ID, "invoice-sync-internal")
	b.click(`#incident-` + ins[0].ID + ` details.note-form summary`)
	b.fill(`#note-`+ins[0].ID, "Mail server overloaded; resending at 10:00 <b>UTC</b>")
	b.click(`#incident-` + ins[0].ID + ` form[action$="/notes"] button`)
	b.waitFor("note added", b.hasText("Note added."), 10*time.Second)

	// The page, without signing in.
	status, hd, html := publicGet(t, base+"/status/acme", nil)
	require.Equal(t, http.StatusOK, status, html)
	require.Empty(t, hd.Values("Set-Cookie"), "a public page sets no cookie")
	require.True(t, strings.HasPrefix(hd.Get("Cache-Control"), "public, max-age="), hd.Get("Cache-Control"))
	require.Contains(t, hd.Get("Content-Security-Policy"), "default-src 'none'")
	require.NotEmpty(t, hd.Get("ETag"))
	require.NotEmpty(t, hd.Get("Last-Modified"))
	require.NotContains(t, html, "<script", "works without JavaScript")
	for _, want := range []string{"Acme nightly jobs", "Database backup", "Invoices", "Databases", "replica-check",
		"Down: failed run", "Operational", "Failed run", "Mail server overloaded; resending at 10:00 &lt;b&gt;UTC&lt;/b&gt;"} {
		require.Contains(t, html, want)
	}
	require.Equal(t, 3*90, strings.Count(html, `class="uptime-cell`), "a 90-day strip per monitor shown")
	require.Less(t, strings.Index(html, "Database backup"), strings.Index(html, "Invoices"), "in the page's order")
	require.Less(t, strings.Index(html, "Invoices"), strings.Index(html, "Databases"))

	status, _, js := publicGet(t, base+"/status/acme.json", nil)
	require.Equal(t, http.StatusOK, status)
	var doc struct {
		Title    string `json:"title"`
		Status   string `json:"status"`
		Sections []struct {
			Heading  string `json:"heading"`
			Monitors []struct {
				Name      string           `json:"name"`
				Status    string           `json:"status"`
				Days      []map[string]any `json:"days"`
				Incidents []struct {
					Title      string     `json:"title"`
					OpenedAt   time.Time  `json:"opened_at"`
					ResolvedAt *time.Time `json:"resolved_at"`
					Notes      []struct {
						Body string `json:"body"`
					} `json:"notes"`
				} `json:"incidents"`
			} `json:"monitors"`
		} `json:"sections"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	require.Equal(t, "Acme nightly jobs", doc.Title)
	require.Equal(t, "down", doc.Status)
	require.Len(t, doc.Sections, 3)
	require.Equal(t, "Database backup", doc.Sections[0].Monitors[0].Name)
	require.Len(t, doc.Sections[0].Monitors[0].Days, 90)
	require.Len(t, doc.Sections[0].Monitors[0].Incidents, 1)
	require.NotNil(t, doc.Sections[0].Monitors[0].Incidents[0].ResolvedAt, "the backup's failure resolved the next night")
	require.Equal(t, "Invoices", doc.Sections[1].Monitors[0].Name)
	require.Equal(t, "down", doc.Sections[1].Monitors[0].Status)
	require.Equal(t, "Mail server overloaded; resending at 10:00 <b>UTC</b>", doc.Sections[1].Monitors[0].Incidents[0].Notes[0].Body)
	require.Equal(t, "Databases", doc.Sections[2].Heading)
	require.Equal(t, "replica-check", doc.Sections[2].Monitors[0].Name, "the tag's other monitor; the backup is shown once")

	status, hd, feed := publicGet(t, base+"/status/acme/feed.atom", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "application/atom+xml; charset=utf-8", hd.Get("Content-Type"))
	var atom atomDoc
	require.NoError(t, xml.Unmarshal([]byte(feed), &atom))
	require.Equal(t, base+"/status/acme", atom.ID)
	require.Contains(t, atom.Title, "Acme nightly jobs")
	_, err = time.Parse(time.RFC3339, atom.Updated)
	require.NoError(t, err)
	require.Len(t, atom.Entries, 2)
	require.Equal(t, "Invoices: failed run", atom.Entries[0].Title, "newest first")
	require.Contains(t, atom.Entries[0].Content, "Mail server overloaded; resending at 10:00 <b>UTC</b>")
	require.Equal(t, "Database backup: failed run (resolved)", atom.Entries[1].Title)
	for _, e := range atom.Entries {
		require.NotEmpty(t, e.ID)
		for _, ts := range []string{e.Updated, e.Published} {
			_, err := time.Parse(time.RFC3339, ts)
			require.NoError(t, err, ts)
		}
	}

	// Nothing internal in any of them.
	secrets := []string{"db-backup-internal", "invoice-sync-internal", "secret-job", "hidden-tag-xyz", "OUTPUT-SECRET",
		prj.PingKey, prj.ID, "/ping/"}
	for _, m := range []*monitors.Monitor{backup, replica, invoices, hidden} {
		secrets = append(secrets, m.ID, m.PingKey)
	}
	for _, in := range ins {
		secrets = append(secrets, in.ID, in.Summary)
	}
	for name, body := range map[string]string{"HTML": html, "JSON": js, "feed": feed} {
		for _, s := range secrets {
			require.NotContains(t, body, s, "the %s shows %q", name, s)
		}
	}

	// Conditional requests.
	status, _, _ = publicGet(t, base+"/status/acme", map[string]string{"If-None-Match": hd.Get("ETag")})
	require.Equal(t, http.StatusOK, status, "the feed's ETag is not the page's")
	_, phd, _ := publicGet(t, base+"/status/acme", nil)
	status, _, body := publicGet(t, base+"/status/acme", map[string]string{"If-None-Match": phd.Get("ETag")})
	require.Equal(t, http.StatusNotModified, status)
	require.Empty(t, body)

	// As anyone sees it: signed out.
	b.open("/status-pages", "Status pages")
	b.click(`form[action="/logout"] button`)
	b.waitFor("signed out", `!!document.querySelector("#email")`, 10*time.Second)
	b.open("/status/acme", "Acme nightly jobs")
	b.waitFor("the strips", `document.querySelectorAll(".uptime-strip li").length === 270`, 5*time.Second)
	b.screenshot("status-page")

	// Unpublished again: 404, as for an unknown slug, at once.
	b.open("/", "Sign in to Vigil")
	b.fill("#email", "grace@example.com")
	b.fill("#password", "status-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="replica-check"]')`, 10*time.Second)
	b.open("/status-pages", "Status pages")
	b.click(`tr[data-status-page="acme"] form[action$="/unpublish"] button`)
	b.waitFor("unpublished", b.hasText("is no longer public"), 10*time.Second)
	for _, path := range []string{"/status/acme", "/status/acme.json", "/status/acme/feed.atom"} {
		status, _, body := publicGet(t, base+path, nil)
		require.Equal(t, http.StatusNotFound, status, "%s unpublished", path)
		require.Equal(t, unknownBody, body)
	}
}
