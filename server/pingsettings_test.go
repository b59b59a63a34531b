package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPingSettingsJudgedAsTheAPI sends the same settings to the management
// API (POST /api/v1/monitors) and as a create=1 ping: each is refused by
// both, with the same sentence, or taken by both, with the same schedule.
func TestPingSettingsJudgedAsTheAPI(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	pingKey := srv.Bootstrapped.Project.PingKey
	cases := []struct {
		name     string
		schedule map[string]any
		grace    int64
		query    url.Values
	}{
		{"range", map[string]any{"kind": "cron", "expr": "0 25 * * *"}, 300, url.Values{"schedule": {"0 25 * * *"}}},
		{"zone", map[string]any{"kind": "cron", "expr": "0 2 * * *", "tz": "Mars/Olympus"}, 300,
			url.Values{"schedule": {"0 2 * * *"}, "tz": {"Mars/Olympus"}}},
		{"quartz syntax in cronie", map[string]any{"kind": "cron", "expr": "0 0 2 ? * MON"}, 300, url.Values{"schedule": {"0 0 2 ? * MON"}}},
		{"dialect", map[string]any{"kind": "cron", "expr": "0 2 * * *", "dialect": "vixie"}, 300,
			url.Values{"schedule": {"0 2 * * *"}, "dialect": {"vixie"}}},
		{"interval", map[string]any{"kind": "interval", "every_seconds": 0}, 300, url.Values{"every": {"0"}}},
		{"grace", map[string]any{"kind": "interval", "every_seconds": 60}, 0, url.Values{"every": {"60"}, "grace": {"0"}}},
		{"quartz", map[string]any{"kind": "cron", "expr": "0 0 2 ? * MON", "tz": "Europe/Berlin", "dialect": "quartz"}, 300,
			url.Values{"schedule": {"0 0 2 ? * MON"}, "tz": {"Europe/Berlin"}, "dialect": {"quartz"}}},
		{"robfig", map[string]any{"kind": "cron", "expr": "@every 90s", "dialect": "robfig"}, 300,
			url.Values{"schedule": {"@every 90s"}, "dialect": {"robfig"}}},
	}
	refused, taken := 0, 0
	for i, tc := range cases {
		slug := "case-" + string(rune('a'+i))
		body, err := json.Marshal(map[string]any{"slug": slug + "-api", "schedule": tc.schedule, "grace_seconds": tc.grace})
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/monitors", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var api struct {
			Error    string         `json:"error"`
			Schedule map[string]any `json:"schedule"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&api))
		resp.Body.Close()

		q := tc.query
		q.Set("create", "1")
		resp, err = http.Get(base + "/ping/" + pingKey + "/" + slug + "-ping?" + q.Encode())
		require.NoError(t, err)
		text, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()

		if api.Error != "" {
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: the API refused: %s", tc.name, api.Error)
			_, apiMsg, _ := strings.Cut(api.Error, ": ")
			_, pingMsg, _ := strings.Cut(string(text), ": ")
			require.Equal(t, apiMsg, pingMsg, tc.name)
			refused++
			continue
		}
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s: the API took it; the ping said %s", tc.name, text)
		req, err = http.NewRequest(http.MethodGet, base+"/api/v1/monitors?limit=500", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		var list struct {
			Monitors []struct {
				Slug     string         `json:"slug"`
				Schedule map[string]any `json:"schedule"`
			} `json:"monitors"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
		resp.Body.Close()
		for _, m := range list.Monitors {
			if m.Slug == slug+"-ping" {
				require.Equal(t, api.Schedule, m.Schedule, tc.name)
				taken++
			}
		}
	}
	require.Equal(t, 6, refused)
	require.Equal(t, 2, taken)
}
