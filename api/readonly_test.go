package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/keys"
)

// TestReadOnlySeesNoPingKey: a read-only key gets every monitor, the
// project and its channels without a ping key, a project ping key or a
// URL with a credential in its path or query, and gets the monitor's
// stable unique_key in their place. A read-write key sees them all.
func TestReadOnlySeesNoPingKey(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "nightly"})
		require.NotEmpty(t, m.PingKey)
		require.Equal(t, keys.UniqueKey(m.ID), m.UniqueKey)
		require.Len(t, m.UniqueKey, 40)
		r := b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "webhook", "name": "hook",
			"config": map[string]any{"url": "https://hooks.example.com/in/s3cr3t-path?token=s3cr3t-query"}})
		require.Equal(t, http.StatusCreated, r.status, r.body)
		var ch api.Channel
		r.json(t, &ch)

		secrets := []string{m.PingKey, b.prj.PingKey, "s3cr3t-path", "s3cr3t-query"}
		for _, path := range []string{"/api/v1/monitors", "/api/v1/monitors/" + m.ID, "/api/v1/project",
			"/api/v1/channels", "/api/v1/channels/" + ch.ID} {
			r := b.do(http.MethodGet, path, b.ro, nil)
			require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
			for _, s := range secrets {
				require.NotContains(t, string(r.body), s, path)
			}
			rw := b.do(http.MethodGet, path, b.rw, nil)
			require.Equal(t, http.StatusOK, rw.status)
			if strings.Contains(path, "monitors") {
				require.Contains(t, string(rw.body), m.PingKey, "a read-write key sees the ping key")
				require.Contains(t, string(r.body), m.UniqueKey, path)
			}
		}
		var got api.Monitor
		b.do(http.MethodGet, "/api/v1/monitors/"+m.ID, b.ro, nil).json(t, &got)
		require.Empty(t, got.PingKey)
		require.Empty(t, got.PingURL)
		require.Equal(t, api.PingURLs{}, got.PingURLs)
		require.Equal(t, m.UniqueKey, got.UniqueKey)
		require.Equal(t, m.Name, got.Name)

		var seen api.Channel
		b.do(http.MethodGet, "/api/v1/channels/"+ch.ID, b.ro, nil).json(t, &seen)
		var cfg map[string]any
		require.NoError(t, json.Unmarshal(seen.Config, &cfg))
		require.Equal(t, "https://hooks.example.com/[redacted]", cfg["url"])
		rwCh := b.do(http.MethodGet, "/api/v1/channels/"+ch.ID, b.rw, nil)
		require.Contains(t, string(rwCh.body), "s3cr3t-path", "a read-write key sees the URL it set")
	})
}
