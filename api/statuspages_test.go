package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
)

func TestStatusPagesAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		db := b.createMonitor(map[string]any{"name": "db-backup-internal", "tags": []string{"db"}})
		b.createMonitor(map[string]any{"name": "replica", "tags": []string{"db"}})
		r := b.do(http.MethodPost, "/api/v1/monitors", b.otherRW, map[string]any{"name": "theirs"})
		require.Equal(t, http.StatusCreated, r.status)
		var otherMon api.Monitor
		r.json(t, &otherMon)

		// Bad input: 400 naming the field, nothing stored.
		for _, tc := range []struct {
			field string
			body  map[string]any
		}{
			{"slug", map[string]any{"title": "x"}},
			{"title", map[string]any{"slug": "ok"}},
			{"slug", map[string]any{"slug": "Not A Slug", "title": "x"}},
			{"slug", map[string]any{"slug": "-dash", "title": "x"}},
			{"slug", map[string]any{"slug": strings.Repeat("a", 65), "title": "x"}},
			{"title", map[string]any{"slug": "ok", "title": "  "}},
			{"title", map[string]any{"slug": "ok", "title": strings.Repeat("t", 201)}},
			{"title", map[string]any{"slug": "ok", "title": "bell\a"}},
			{"published", map[string]any{"slug": "ok", "title": "x", "published": "yes"}},
			{"items[0]", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{}}}},
			{"items[0]", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{"monitor": db.ID, "tag": "db"}}}},
			{"items[0].monitor", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{"monitor": "nope"}}}},
			{"items[0].monitor", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{"monitor": otherMon.ID}}}},
			{"items[1]", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{"tag": "db"}, {"tag": "db"}}}},
			{"items[0].name", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{"tag": "db", "name": strings.Repeat("n", 101)}}}},
			{"items[0].ping_url", map[string]any{"slug": "ok", "title": "x", "items": []map[string]any{{"tag": "db", "ping_url": "x"}}}},
			{"url", map[string]any{"slug": "ok", "title": "x", "url": "https://elsewhere"}},
		} {
			r = b.do(http.MethodPost, "/api/v1/status-pages", b.rw, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.field, r.body)
			require.Equal(t, tc.field, r.errorBody(t).Field, "%s", r.body)
		}
		var list api.StatusPageList
		r = b.do(http.MethodGet, "/api/v1/status-pages", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &list)
		require.Empty(t, list.StatusPages, "nothing stored")

		// Create: unpublished by default.
		p := b.statusPage(map[string]any{"slug": "acme", "title": "Acme nightly jobs",
			"items": []map[string]any{{"monitor": db.ID, "name": "Database backup"}, {"tag": "db", "name": "Databases"}}})
		require.False(t, p.Published)
		require.Equal(t, "https://vigil.example.com/status/acme", p.URL)
		require.Equal(t, []api.StatusPageItem{{Monitor: db.ID, Name: "Database backup"}, {Tag: "db", Name: "Databases"}}, p.Items)

		// The slug is unique, across projects too.
		r = b.do(http.MethodPost, "/api/v1/status-pages", b.otherRW, map[string]any{"slug": "acme", "title": "Theirs"})
		require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
		require.Equal(t, "slug", r.errorBody(t).Field)
		require.Contains(t, r.errorBody(t).Error, "another status page")

		// A read-only key reads, and cannot change.
		r = b.do(http.MethodGet, "/api/v1/status-pages/"+p.ID, b.ro, nil)
		require.Equal(t, http.StatusOK, r.status)
		var got api.StatusPage
		r.json(t, &got)
		require.Equal(t, p, got)
		r = b.do(http.MethodGet, "/api/v1/status-pages", b.ro, nil)
		r.json(t, &list)
		require.Equal(t, []api.StatusPage{p}, list.StatusPages)
		for _, rq := range []struct{ method, path string }{
			{http.MethodPost, "/api/v1/status-pages"}, {http.MethodPatch, "/api/v1/status-pages/" + p.ID},
			{http.MethodDelete, "/api/v1/status-pages/" + p.ID},
		} {
			r = b.do(rq.method, rq.path, b.ro, map[string]any{"slug": "ro", "title": "ro", "published": true})
			require.Equal(t, http.StatusForbidden, r.status, "%s %s", rq.method, rq.path)
		}
		require.Equal(t, http.StatusNotFound, b.do(http.MethodGet, "/api/v1/status-pages/"+p.ID, b.otherRW, nil).status)

		// PATCH: bad input changes nothing; then publish and rename.
		second := b.statusPage(map[string]any{"slug": "second", "title": "Second"})
		for _, tc := range []struct {
			field string
			body  map[string]any
		}{
			{"slug", map[string]any{"slug": "second", "published": true}},
			{"title", map[string]any{"title": nil}},
			{"items[0].monitor", map[string]any{"items": []map[string]any{{"monitor": "gone"}}, "published": true}},
		} {
			r = b.do(http.MethodPatch, "/api/v1/status-pages/"+p.ID, b.rw, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
			require.Equal(t, tc.field, r.errorBody(t).Field, "%s", r.body)
		}
		r = b.do(http.MethodGet, "/api/v1/status-pages/"+p.ID, b.rw, nil)
		r.json(t, &got)
		require.Equal(t, p, got, "unchanged")

		b.clock.Set(t0.Add(time.Hour))
		r = b.do(http.MethodPatch, "/api/v1/status-pages/"+p.ID, b.rw, map[string]any{"published": true, "slug": "acme-jobs"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &got)
		require.True(t, got.Published)
		require.Equal(t, "acme-jobs", got.Slug)
		require.Equal(t, p.Items, got.Items, "left out: kept")
		require.Equal(t, p.CreatedAt, got.CreatedAt)
		require.Equal(t, t0.Add(time.Hour), got.UpdatedAt)

		require.Equal(t, http.StatusNoContent, b.do(http.MethodDelete, "/api/v1/status-pages/"+second.ID, b.rw, nil).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodDelete, "/api/v1/status-pages/"+second.ID, b.rw, nil).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodPatch, "/api/v1/status-pages/"+second.ID, b.rw, map[string]any{"title": "x"}).status)
		r = b.do(http.MethodGet, "/api/v1/status-pages", b.rw, nil)
		r.json(t, &list)
		require.Equal(t, []api.StatusPage{got}, list.StatusPages)
	})
}

func TestIncidentNotesAPI(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		_, id := b.failedMonitor()
		path := "/api/v1/incidents/" + id + "/notes"
		for _, tc := range []struct {
			field string
			body  any
		}{
			{"body", map[string]any{}},
			{"body", map[string]any{"body": "   "}},
			{"body", map[string]any{"body": strings.Repeat("é", 2001)}},
			{"body", map[string]any{"body": "esc \x1b[31m"}},
			{"body", map[string]any{"body": 12}},
			{"author", map[string]any{"body": "x", "author": "me"}},
		} {
			r := b.do(http.MethodPost, path, b.rw, tc.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", tc.body, r.body)
			require.Equal(t, tc.field, r.errorBody(t).Field, "%s", r.body)
		}
		require.Equal(t, http.StatusForbidden, b.do(http.MethodPost, path, b.ro, map[string]any{"body": "ro"}).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodPost, "/api/v1/incidents/nope/notes", b.rw, map[string]any{"body": "x"}).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodPost, path, b.otherRW, map[string]any{"body": "x"}).status)

		r := b.do(http.MethodPost, path, b.rw, map[string]any{"body": " Disk was full.\nCleaned up; the 09:10 re-run passed. <b>ok</b> "})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var n api.IncidentNote
		r.json(t, &n)
		require.Equal(t, "Disk was full.\nCleaned up; the 09:10 re-run passed. <b>ok</b>", n.Body, "stored as text: escaped where shown")
		require.Equal(t, id, n.IncidentID)
		require.Equal(t, t0, n.CreatedAt)

		var list api.IncidentNoteList
		r = b.do(http.MethodGet, path, b.ro, nil)
		require.Equal(t, http.StatusOK, r.status)
		r.json(t, &list)
		require.Equal(t, []api.IncidentNote{n}, list.Notes)
		var in api.Incident
		b.do(http.MethodGet, "/api/v1/incidents/"+id, b.ro, nil).json(t, &in)
		require.Equal(t, []api.IncidentNote{n}, in.Notes, "the incident carries its notes")

		require.Equal(t, http.StatusNotFound, b.do(http.MethodDelete, path+"/"+n.ID, b.otherRW, nil).status)
		require.Equal(t, http.StatusForbidden, b.do(http.MethodDelete, path+"/"+n.ID, b.ro, nil).status)
		require.Equal(t, http.StatusNoContent, b.do(http.MethodDelete, path+"/"+n.ID, b.rw, nil).status)
		require.Equal(t, http.StatusNotFound, b.do(http.MethodDelete, path+"/"+n.ID, b.rw, nil).status)
		b.do(http.MethodGet, path, b.rw, nil).json(t, &list)
		require.Empty(t, list.Notes)
	})
}
