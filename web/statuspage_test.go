package web_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
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
