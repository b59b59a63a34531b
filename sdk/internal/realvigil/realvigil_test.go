package realvigil_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/sdk/internal/realvigil"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func ping(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := c.Post(url, "text/plain", nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestStartServesEveryPart(t *testing.T) {
	t.Parallel()
	for name, db := range realvigil.Databases() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v := realvigil.Start(t, realvigil.WithDatabase(db))
			require.NotEmpty(t, v.APIKey)
			require.NotEmpty(t, v.ProjectPingKey)

			m := v.CreateMonitor(t, map[string]any{"name": "nightly", "schedule": map[string]any{"kind": "interval", "every_seconds": 3600}})
			require.Equal(t, v.URL+"/ping/"+m.PingKey, m.PingURL, "ping URLs carry the real port")

			code, body := ping(t, http.DefaultClient, m.PingURL+"/start")
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, "OK", body)
			pings, err := v.Store().PingList(context.Background(), &monitors.HistoryListParams{ProjectID: v.ProjectID, MonitorID: m.ID, Limit: 10})
			require.NoError(t, err)
			require.Len(t, pings, 1, "a ping is stored once answered")
			require.Equal(t, []string{"open 0"}, realvigil.RunOutcomes(v.Runs(t, m.ID)))
			require.Equal(t, "running", v.Monitor(t, "nightly").Status)
		})
	}
}

func TestHTTPClientWorksInsideABubble(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	m := v.CreateMonitor(t, map[string]any{"slug": "bubbled"})
	client := v.HTTPClient()
	synctest.Test(t, func(t *testing.T) {
		code, _ := ping(t, client, m.PingURL+"/start")
		require.Equal(t, http.StatusOK, code)
		time.Sleep(time.Hour) // fake: the server's clock does not move
		code, _ = ping(t, client, m.PingURL)
		require.Equal(t, http.StatusOK, code)
		runs := v.Runs(t, m.ID)
		require.Equal(t, []string{"success 0"}, realvigil.RunOutcomes(runs))
		require.Less(t, *runs[0].DurationMS, int64(time.Minute/time.Millisecond), "the server measured real time")
	})
}

func TestStopRefusesConnections(t *testing.T) {
	t.Parallel()
	v := realvigil.Start(t)
	v.Stop(t)
	_, err := http.Post(v.URL+"/ping/x", "text/plain", nil)
	require.Error(t, err)
}
