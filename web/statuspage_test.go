package web_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/web"
)

// TestStatusPageCache: a public page is served from memory for the TTL,
// so a change made elsewhere (the API, another replica) shows within it
// and not before; a rebuild that changes nothing keeps the ETag and
// Last-Modified, and conditional requests get 304.
func TestStatusPageCache(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		m := b.monitor(t, b.project.ID, "nightly-internal")
		svc := manage.New(b.store, b.clock.now)
		slug, title, yes, no := "acme", "Acme", true, false
		p, err := svc.StatusPageCreate(ctx, b.project.ID, &manage.StatusPageFields{Slug: &slug, Title: &title, Published: &yes,
			Items: &[]monitors.StatusPageItem{{Monitor: m.ID, Name: "Nightly"}}})
		require.NoError(t, err)
		anon := b.client(t)

		r := anon.get("/status/acme")
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, "Nightly")
		require.NotContains(t, r.body, "nightly-internal")
		require.Equal(t, "public, max-age=10", r.header.Get("Cache-Control"))
		etag, lm := r.header.Get("ETag"), r.header.Get("Last-Modified")
		require.NotEmpty(t, etag)
		require.Equal(t, b.clock.now().UTC().Format(http.TimeFormat), lm)

		// Rebuilt after the TTL, the same content keeps its ETag and its
		// Last-Modified.
		b.clock.advance(web.StatusPageTTLDefault)
		r = anon.get("/status/acme")
		require.Equal(t, etag, r.header.Get("ETag"))
		require.Equal(t, lm, r.header.Get("Last-Modified"))

		// Unpublished through the service, as the API does: served until
		// the TTL is over, then 404.
		_, err = svc.StatusPageChange(ctx, b.project.ID, p.ID, &manage.StatusPageFields{Published: &no})
		require.NoError(t, err)
		b.clock.advance(web.StatusPageTTLDefault - time.Second)
		require.Equal(t, http.StatusOK, anon.get("/status/acme").status, "within the TTL")
		b.clock.advance(time.Second)
		r = anon.get("/status/acme")
		require.Equal(t, http.StatusNotFound, r.status, "after the TTL")
		unknown := anon.get("/status/not-a-page")
		require.Equal(t, http.StatusNotFound, unknown.status)
		require.Equal(t, unknown.body, r.body)
		bad := anon.get("/status/Not%20A%20Slug.json")
		require.Equal(t, http.StatusNotFound, bad.status)
		require.Equal(t, unknown.body, bad.body)

		// Published again: the same content, the same ETag; modified when
		// it came back.
		_, err = svc.StatusPageChange(ctx, b.project.ID, p.ID, &manage.StatusPageFields{Published: &yes})
		require.NoError(t, err)
		b.clock.advance(web.StatusPageTTLDefault)
		r = anon.get("/status/acme")
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, etag, r.header.Get("ETag"))
		lm = r.header.Get("Last-Modified")
		require.Equal(t, b.clock.now().UTC().Format(http.TimeFormat), lm)
		require.Equal(t, http.StatusNotModified, anon.do(http.MethodGet, "/status/acme", nil, map[string]string{"If-None-Match": etag}).status)
		require.Equal(t, http.StatusNotModified, anon.do(http.MethodGet, "/status/acme", nil, map[string]string{"If-Modified-Since": lm}).status)
		// Gzipped for those who ask, with an ETag of its own.
		gz := anon.do(http.MethodGet, "/status/acme", nil, map[string]string{"Accept-Encoding": "gzip"})
		require.Equal(t, "gzip", gz.header.Get("Content-Encoding"))
		zr, err := gzip.NewReader(strings.NewReader(gz.body))
		require.NoError(t, err)
		plain, err := io.ReadAll(zr)
		require.NoError(t, err)
		require.Equal(t, r.body, string(plain))
		ident := anon.do(http.MethodGet, "/status/acme", nil, map[string]string{"Accept-Encoding": "identity"})
		require.Empty(t, ident.header.Get("Content-Encoding"))
		require.Equal(t, r.body, ident.body)
		require.NotEqual(t, ident.header.Get("ETag"), gz.header.Get("ETag"))
		require.Contains(t, gz.header.Values("Vary"), "Accept-Encoding")
		head := anon.do(http.MethodHead, "/status/acme.json", nil, nil)
		require.Equal(t, http.StatusOK, head.status)
		require.Empty(t, head.body)
		require.Equal(t, "application/json", head.header.Get("Content-Type"))

		// A renamed monitor shows after the TTL with a new ETag.
		_, err = svc.StatusPageChange(ctx, b.project.ID, p.ID, &manage.StatusPageFields{Items: &[]monitors.StatusPageItem{{Monitor: m.ID, Name: "Nightly import"}}})
		require.NoError(t, err)
		b.clock.advance(web.StatusPageTTLDefault)
		r = anon.get("/status/acme")
		require.Contains(t, r.body, "Nightly import")
		require.NotEqual(t, etag, r.header.Get("ETag"))
	})
}

// TestStatusPagesDashboard: the dashboard's status pages and notes refuse
// bad input with the field in words and store nothing, keep to the
// person's project, and delete.
func TestStatusPagesDashboard(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		m := b.monitor(t, b.project.ID, "backup")
		other := b.monitor(t, b.project.ID, "other")
		res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
			{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail, At: b.clock.now()}}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
		ins, err := b.store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: b.project.ID, MonitorID: m.ID})
		require.NoError(t, err)
		require.Len(t, ins, 1)
		c := b.signIn(t, "ada@example.com", b.project.ID)

		r := c.postForm("/status-pages", url.Values{"title": {"Jobs"}, "slug": {"Not OK"}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.body, "Slug: must be 1 to 64 characters")
		ps, err := b.store.StatusPageList(ctx, b.project.ID)
		require.NoError(t, err)
		require.Empty(t, ps)

		r = c.postForm("/status-pages", url.Values{"title": {"Jobs"}, "slug": {"jobs"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		ps, err = b.store.StatusPageList(ctx, b.project.ID)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.Equal(t, "/status-pages/"+ps[0].ID+"/edit", r.location)
		require.False(t, ps[0].Published)

		// A bad edit names the monitor and changes nothing.
		r = c.postForm("/status-pages/"+ps[0].ID, url.Values{"title": {"Jobs"}, "slug": {"jobs"}, "published": {"on"},
			"show-" + m.ID: {"on"}, "name-" + m.ID: {strings.Repeat("n", 101)}, "tag-0": {""}})
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.body, "Monitor backup: must be at most 100 characters")
		p, err := b.store.StatusPageGet(ctx, b.project.ID, ps[0].ID)
		require.NoError(t, err)
		require.Equal(t, ps[0], p)

		// Positions order monitors and tags together.
		r = c.postForm("/status-pages/"+ps[0].ID, url.Values{"title": {"Jobs"}, "slug": {"jobs"},
			"show-" + m.ID: {"on"}, "pos-" + m.ID: {"2"}, "show-" + other.ID: {"on"}, "pos-" + other.ID: {"3"},
			"tag-0": {"db"}, "heading-0": {"Databases"}, "tagpos-0": {"1"}, "tag-1": {""}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		p, err = b.store.StatusPageGet(ctx, b.project.ID, ps[0].ID)
		require.NoError(t, err)
		require.Equal(t, []monitors.StatusPageItem{{Tag: "db", Name: "Databases"}, {Monitor: m.ID}, {Monitor: other.ID}}, p.Items)

		// Notes: refused empty, added, deleted; only under the incident's
		// own monitor.
		notes := "/monitors/" + m.ID + "/incidents/" + ins[0].ID + "/notes"
		require.Equal(t, http.StatusSeeOther, c.postForm(notes, url.Values{"body": {"  "}}).status)
		require.Contains(t, c.get("/monitors/"+m.ID).body, "Note: must not be empty.")
		require.Equal(t, http.StatusNotFound, c.postForm("/monitors/"+other.ID+"/incidents/"+ins[0].ID+"/notes", url.Values{"body": {"x"}}).status)
		ns, err := b.store.IncidentNoteList(ctx, b.project.ID, []string{ins[0].ID})
		require.NoError(t, err)
		require.Empty(t, ns)
		require.Equal(t, http.StatusSeeOther, c.postForm(notes, url.Values{"body": {"Re-running <now>."}}).status)
		page := c.get("/monitors/" + m.ID).body
		require.Contains(t, page, "Re-running &lt;now&gt;.")
		ns, err = b.store.IncidentNoteList(ctx, b.project.ID, []string{ins[0].ID})
		require.NoError(t, err)
		require.Len(t, ns[ins[0].ID], 1)
		require.Equal(t, http.StatusNotFound, c.postForm(notes+"/not-a-note/delete", nil).status)
		require.Equal(t, http.StatusSeeOther, c.postForm(notes+"/"+ns[ins[0].ID][0].ID+"/delete", nil).status)
		ns, err = b.store.IncidentNoteList(ctx, b.project.ID, []string{ins[0].ID})
		require.NoError(t, err)
		require.Empty(t, ns)

		// Another project's person sees none of it.
		prj2, err := b.store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: "p2-" + m.ID[:8], Name: "Other", PingKey: "pk2-" + m.ID, Now: b.clock.now()})
		require.NoError(t, err)
		c2 := b.signIn(t, "bo@example.com", prj2.ID)
		require.Equal(t, http.StatusNotFound, c2.get("/status-pages/"+ps[0].ID+"/edit").status)
		require.Equal(t, http.StatusNotFound, c2.postForm("/status-pages/"+ps[0].ID+"/publish", nil).status)
		require.NotContains(t, c2.get("/status-pages").body, `data-status-page="jobs"`)

		require.Equal(t, http.StatusSeeOther, c.postForm("/status-pages/"+ps[0].ID+"/delete", nil).status)
		ps, err = b.store.StatusPageList(ctx, b.project.ID)
		require.NoError(t, err)
		require.Empty(t, ps)
	})
}
