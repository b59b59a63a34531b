package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/server"
)

// apiCall makes one API request with the key and decodes a JSON answer
// into out (when not nil).
func apiCall(t *testing.T, method, url, key string, body any, out any) int {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil && len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, out), string(raw))
	}
	return resp.StatusCode
}

// TestServeDelivers runs a whole server on each database: a channel made
// through the API is tested, a failed run opens an incident, the server's
// River client sends it, and the incident's deliveries show the attempt.
func TestServeDelivers(t *testing.T) {
	t.Parallel()
	for name, dbURL := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			ctx, cancel := context.WithCancel(context.Background())
			cfg := testConfig(dbURL(t))
			cfg.Delivery.AllowPrivate = true // the receiver is on loopback
			cfg.BaseURL = "https://vigil.example.com"
			srv, err := server.New(ctx, cfg, testdb.Logger(t))
			require.NoError(t, err)
			require.NoError(t, srv.Listen())
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx) }()
			defer func() {
				cancel()
				require.NoError(t, <-done)
			}()
			base, key := "http://"+srv.Addr(), srv.Bootstrapped.APIKey

			var ch struct{ ID string }
			require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/channels", key, map[string]any{
				"kind": "webhook", "name": "ops hook", "is_default": true,
				"config": map[string]any{"url": recv.URL + "/hook", "secret": "0123456789abcdef-secret"}}, &ch))
			var ok struct{ OK bool }
			require.Equal(t, http.StatusOK, apiCall(t, http.MethodPost, base+"/api/v1/channels/"+ch.ID+"/test", key, nil, &ok))
			require.True(t, ok.OK)
			require.Len(t, recv.Requests(), 1)

			var mail struct{ ID string }
			require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/channels", key, map[string]any{
				"kind": "email", "name": "mail", "config": map[string]any{"to": []string{"a@example.com"}}}, &mail))
			var apiErr struct{ Error string }
			require.Equal(t, http.StatusNotImplemented, apiCall(t, http.MethodPost, base+"/api/v1/channels/"+mail.ID+"/test", key, nil, &apiErr))
			require.Contains(t, apiErr.Error, "VIGIL_SMTP_HOST")

			var mon struct {
				ID      string
				PingURL string `json:"ping_url"`
				PingKey string `json:"ping_key"`
			}
			require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/monitors", key, map[string]any{
				"name": "nightly-import", "schedule": map[string]any{"kind": "interval", "every_seconds": 3600}}, &mon))
			resp, err := http.Get(base + "/ping/" + mon.PingKey + "/fail")
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)

			type incidents struct {
				Incidents []struct {
					ID         string
					Deliveries []struct {
						ChannelID string `json:"channel_id"`
						Event     string
						Attempt   int
						Outcome   string
					}
				}
			}
			var list incidents
			require.Eventually(t, func() bool {
				list = incidents{}
				apiCall(t, http.MethodGet, base+"/api/v1/monitors/"+mon.ID+"/incidents", key, nil, &list)
				return len(list.Incidents) == 1 && len(list.Incidents[0].Deliveries) == 1 &&
					list.Incidents[0].Deliveries[0].Outcome == "sent"
			}, 20*time.Second, 20*time.Millisecond, "the incident was not delivered: %+v", list)
			d := list.Incidents[0].Deliveries[0]
			require.Equal(t, ch.ID, d.ChannelID)
			require.Equal(t, "incident.opened", d.Event)
			require.Equal(t, 1, d.Attempt)

			reqs := recv.Requests()
			require.Len(t, reqs, 2)
			var payload struct {
				Event    string
				Incident struct{ ID string }
				Monitor  struct{ URL string }
			}
			require.NoError(t, json.Unmarshal(reqs[1].Body, &payload))
			require.Equal(t, "incident.opened", payload.Event)
			require.Equal(t, list.Incidents[0].ID, payload.Incident.ID)
			require.Equal(t, "https://vigil.example.com/monitors/"+mon.ID, payload.Monitor.URL)

			var all incidents
			apiCall(t, http.MethodGet, base+"/api/v1/incidents", key, nil, &all)
			require.Len(t, all.Incidents, 1)
			require.Len(t, all.Incidents[0].Deliveries, 1)
		})
	}
}

// TestServeRefusesPrivateTargets: without VIGIL_ALLOW_PRIVATE_TARGETS, a
// test notification to loopback is refused before any connection.
func TestServeRefusesPrivateTargets(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	_, base, key := startServer(t)
	var ch struct{ ID string }
	require.Equal(t, http.StatusCreated, apiCall(t, http.MethodPost, base+"/api/v1/channels", key, map[string]any{
		"kind": "webhook", "name": "local", "config": map[string]any{"url": recv.URL}}, &ch))
	var apiErr struct{ Error string }
	require.Equal(t, http.StatusBadGateway, apiCall(t, http.MethodPost, base+"/api/v1/channels/"+ch.ID+"/test", key, nil, &apiErr))
	require.Contains(t, apiErr.Error, "is private (loopback)")
	require.Empty(t, recv.Requests())
}

func TestDeliveryConfigValidate(t *testing.T) {
	t.Parallel()
	d := delivery.Config{}
	require.NoError(t, d.Validate(), "no SMTP server is fine")
	d.SMTP.Username = "vigil"
	require.ErrorContains(t, d.Validate(), "smtp host")
	d.SMTP.Host = "smtp.example.com"
	require.ErrorContains(t, d.Validate(), "smtp from")
	d.SMTP.From = "Vigil <vigil@example.com>"
	require.NoError(t, d.Validate())
	d.SMTP.TLS = "sometimes"
	require.ErrorContains(t, d.Validate(), "smtp tls")
}
