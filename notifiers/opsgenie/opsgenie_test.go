package opsgenie_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/opsgenie"
)

const apiKey = "eb243592-faa2-4ba2-a551q-1afdf565c889"

func accepted(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"result":"Request will be processed","took":0.302,"requestId":"43a29c5c-3dbf-4fa4-9c26-f4f71023e120"}`))
}

func newNotifier(t *testing.T, serverURL string, cfg opsgenie.Config) *opsgenie.Notifier {
	t.Helper()
	n, err := opsgenie.New(cfg, notifiers.WithHTTPClient(notifiertest.HTTPClient(t)), notifiers.WithAPIURL(serverURL))
	require.NoError(t, err)
	return n
}

func TestCreateAndClose(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, accepted)
	o := newNotifier(t, recv.URL, opsgenie.Config{APIKey: apiKey, Region: "eu"})
	require.NoError(t, o.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, o.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, "GenieKey "+apiKey, req.Header.Get("Authorization"))
		require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	}

	create := reqs[0]
	require.Equal(t, "/v2/alerts", create.Path)
	require.Empty(t, create.Query)
	var alert map[string]any
	require.NoError(t, json.Unmarshal(create.Body, &alert))
	require.Equal(t, map[string]any{
		"message": "DOWN nightly-import: missed",
		"alias":   "inc_01HZX3M4W6",
		"description": "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)\n\n" +
			"Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.\n\n" +
			"Schedule: 0 2 * * * (Europe/Berlin)\nExpected: 2026-03-14 01:00 UTC\nLast ping: 2026-03-13 01:00 UTC\n" +
			"Opened: 2026-03-14 01:05 UTC\nTags: etl, billing\n\nhttps://vigil.example.com/monitors/mon_7f3a",
		"tags": []any{"vigil", "etl", "billing"},
		"details": map[string]any{
			"event": "incident.opened", "monitor": "nightly-import", "incident_kind": "missed",
			"url": "https://vigil.example.com/monitors/mon_7f3a", "schedule": "0 2 * * * (Europe/Berlin)",
			"expected": "2026-03-14 01:00 UTC", "last_ping": "2026-03-13 01:00 UTC",
		},
		"entity": "nightly-import",
		"source": "Vigil",
	}, alert)

	closeReq := reqs[1]
	require.Equal(t, "/v2/alerts/inc_01HZX3M4W6/close", closeReq.Path)
	require.Equal(t, "alias", closeReq.Query.Get("identifierType"))
	var closeBody map[string]any
	require.NoError(t, json.Unmarshal(closeReq.Body, &closeBody))
	require.Equal(t, map[string]any{"source": "Vigil", "note": "UP nightly-import: recovered after 12m"}, closeBody)
}

func TestAliasIsPathEscaped(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, accepted)
	n := notifiertest.Resolved()
	n.Incident.ID = "inc/with space"
	require.NoError(t, newNotifier(t, recv.URL, opsgenie.Config{APIKey: apiKey}).Notify(context.Background(), n))
	req := recv.Only(t)
	require.Equal(t, "/v2/alerts/inc%2Fwith%20space/close", req.RawPath)
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier {
			return newNotifier(t, serverURL, opsgenie.Config{APIKey: apiKey})
		}, apiKey)
}

func TestUnauthorizedEchoIsRedacted(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"Key format is not valid: ` + r.Header.Get("Authorization") + `","took":0.0}`))
	})
	err := newNotifier(t, recv.URL, opsgenie.Config{APIKey: apiKey}).Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err))
	require.Contains(t, err.Error(), "create opsgenie alert: HTTP 401 Unauthorized")
	notifiertest.AssertNoSecretLeak(t, err, apiKey)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&opsgenie.Config{APIKey: apiKey}).Validate())
	require.NoError(t, (&opsgenie.Config{APIKey: apiKey, Region: "us"}).Validate())
	require.EqualError(t, (&opsgenie.Config{Region: "apac"}).Validate(),
		"api_key: must be set\nregion: \"apac\" is not one of us, eu")
}
