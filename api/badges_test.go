package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

// badgePath returns the path of a badge URL, escaped as sent.
func badgePath(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	require.NoError(t, err)
	return p.EscapedPath()
}

func (b *bundle) badgeJSON(path string) (int, map[string]any) {
	b.t.Helper()
	r := b.do(http.MethodGet, path, "", nil)
	var out map[string]any
	if r.status == http.StatusOK {
		require.NoError(b.t, json.Unmarshal(r.body, &out))
	}
	return r.status, out
}

func TestBadges(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		up := b.createMonitor(map[string]any{"name": "Nightly import", "tags": []string{"etl", "a/b.c"},
			"schedule": map[string]any{"kind": "interval", "every_seconds": 3600}})
		b.ping(up.PingKey, monitors.PingSuccess, t0)

		// One monitor, as SVG and as shields.io endpoint JSON.
		r := b.do(http.MethodGet, badgePath(t, up.Badge.SVG), "", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, "image/svg+xml; charset=utf-8", r.header.Get("Content-Type"))
		require.Equal(t, "no-cache, max-age=0", r.header.Get("Cache-Control"))
		svg := string(r.body)
		require.True(t, strings.HasPrefix(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""))
		require.Contains(t, svg, `aria-label="Nightly import: up"`)
		require.Contains(t, svg, `fill="#4c1"`)
		status, j := b.badgeJSON(badgePath(t, up.Badge.JSON))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, map[string]any{"schemaVersion": 1.0, "label": "Nightly import", "message": "up", "color": "brightgreen"}, j)

		// Late, then down.
		b.clock.Set(t0.Add(61 * time.Minute))
		_, j = b.badgeJSON(badgePath(t, up.Badge.JSON))
		require.Equal(t, "late", j["message"])
		require.Equal(t, "orange", j["color"])
		b.ping(up.PingKey, monitors.PingFail, t0.Add(62*time.Minute))
		_, j = b.badgeJSON(badgePath(t, up.Badge.JSON))
		require.Equal(t, "down", j["message"])
		require.Equal(t, "red", j["color"])
		require.Equal(t, true, j["isError"])

		// Per tag and for the whole project: the project's badge URLs.
		fine := b.createMonitor(map[string]any{"name": "fine", "tags": []string{"etl"}})
		b.ping(fine.PingKey, monitors.PingSuccess, t0.Add(62*time.Minute))
		b.createMonitor(map[string]any{"name": "quiet", "tags": []string{"other"}, "paused": true})
		r = b.do(http.MethodGet, "/api/v1/project", b.ro, nil)
		require.Equal(t, http.StatusOK, r.status)
		var prj api.Project
		r.json(t, &prj)
		require.Equal(t, b.prj.ID, prj.ID)
		require.Empty(t, prj.PingKey, "a read-only key sees no project ping key")
		require.ElementsMatch(t, []string{"*", "etl", "a/b.c", "other"}, keysOf(prj.Badges))
		_, j = b.badgeJSON(badgePath(t, prj.Badges["etl"].JSON))
		require.Equal(t, map[string]any{"schemaVersion": 1.0, "label": "etl", "message": "down", "color": "red", "isError": true}, j,
			"a tag is down when one of its monitors is")
		_, j = b.badgeJSON(badgePath(t, prj.Badges["a/b.c"].JSON))
		require.Equal(t, "a/b.c", j["label"], "any tag, escaped in the URL")
		_, j = b.badgeJSON(badgePath(t, prj.Badges["other"].JSON))
		require.Equal(t, "paused", j["message"])
		_, j = b.badgeJSON(badgePath(t, prj.Badges["*"].JSON))
		require.Equal(t, "Main", j["label"])
		require.Equal(t, "down", j["message"])
		r = b.do(http.MethodDelete, "/api/v1/monitors/"+up.ID, b.rw, nil)
		require.Equal(t, http.StatusNoContent, r.status)
		_, j = b.badgeJSON(badgePath(t, prj.Badges["etl"].JSON))
		require.Equal(t, "up", j["message"])

		// Keys that were not made here are 404, whatever part is wrong.
		good := badgePath(t, fine.Badge.JSON)
		key := strings.TrimSuffix(strings.TrimPrefix(good, "/badge/"), ".json")
		parts := strings.Split(key, ".")
		for name, path := range map[string]string{
			"signature":           "/badge/" + parts[0] + "." + parts[1] + ".0000000000000000.json",
			"another monitor":     "/badge/" + parts[0] + ".m-" + up.ID + "." + parts[2] + ".json",
			"another project":     "/badge/" + b.other.ID + "." + parts[1] + "." + parts[2] + ".json",
			"a tag for a monitor": "/badge/" + parts[0] + ".t-etl." + parts[2] + ".json",
			"format":              "/badge/" + key + ".png",
			"no parts":            "/badge/nothing.svg",
			"deleted monitor":     badgePath(t, up.Badge.SVG),
		} {
			r := b.do(http.MethodGet, path, "", nil)
			require.Equal(t, http.StatusNotFound, r.status, name)
		}
	})
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
