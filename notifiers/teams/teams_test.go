package teams_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/teams"
)

const (
	hookPath  = "/workflows/5a1b2c3d/triggers/manual/paths/invoke"
	hookQuery = "api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=TeamsSig-SECRET_value"
)

func newNotifier(t *testing.T, serverURL string) *teams.Notifier {
	t.Helper()
	n, err := teams.New(teams.Config{WebhookURL: serverURL + hookPath + "?" + hookQuery},
		notifiers.WithHTTPClient(notifiertest.HTTPClient(t)))
	require.NoError(t, err)
	return n
}

func TestOpenedAndResolved(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	tm := newNotifier(t, recv.URL)
	require.NoError(t, tm.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, tm.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, hookPath, req.Path)
		require.Equal(t, "TeamsSig-SECRET_value", req.Query.Get("sig"))
		require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	}

	var opened map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &opened))
	require.Equal(t, map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content": map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
				"type":    "AdaptiveCard",
				"version": "1.4",
				"msteams": map[string]any{"width": "Full"},
				"body": []any{
					map[string]any{"type": "Container", "style": "attention", "bleed": true, "items": []any{
						map[string]any{"type": "TextBlock", "text": "DOWN nightly-import: missed", "wrap": true,
							"weight": "Bolder", "size": "Large", "color": "Attention"},
					}},
					map[string]any{"type": "TextBlock", "text": "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)", "wrap": true},
					map[string]any{"type": "TextBlock", "text": "Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.",
						"wrap": true, "isSubtle": true},
					map[string]any{"type": "FactSet", "facts": []any{
						map[string]any{"title": "Schedule", "value": "0 2 * * * (Europe/Berlin)"},
						map[string]any{"title": "Expected", "value": "2026-03-14 01:00 UTC"},
						map[string]any{"title": "Last ping", "value": "2026-03-13 01:00 UTC"},
						map[string]any{"title": "Opened", "value": "2026-03-14 01:05 UTC"},
						map[string]any{"title": "Tags", "value": "etl, billing"},
					}},
				},
				"actions": []any{map[string]any{
					"type": "Action.OpenUrl", "title": "Open in Vigil", "url": "https://vigil.example.com/monitors/mon_7f3a",
				}},
			},
		}},
	}, opened)

	var resolved teams.Message
	require.NoError(t, json.Unmarshal(reqs[1].Body, &resolved))
	raw, err := json.Marshal(resolved.Attachments[0].Content.Body[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"Container","style":"good","bleed":true,"items":[{"type":"TextBlock",
		"text":"UP nightly-import: recovered after 12m","wrap":true,"weight":"Bolder","size":"Large","color":"Good"}]}`, string(raw))
	require.Contains(t, string(reqs[1].Body), `{"title":"Downtime","value":"12m"}`)
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier { return newNotifier(t, serverURL) },
		"TeamsSig-SECRET_value", hookQuery)
}

func TestErrorEchoingURLIsRedacted(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"code":"InvalidRequest","message":"bad request to ` + r.URL.RequestURI() + `"}}`))
	})
	err := newNotifier(t, recv.URL).Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err))
	require.Contains(t, err.Error(), "HTTP 400 Bad Request")
	notifiertest.AssertNoSecretLeak(t, err, "TeamsSig-SECRET_value")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&teams.Config{WebhookURL: "https://prod-00.westeurope.logic.azure.com/workflows/x?sig=y"}).Validate())
	require.EqualError(t, (&teams.Config{}).Validate(), "webhook_url: must be set")
	require.EqualError(t, (&teams.Config{WebhookURL: "mailto:ops@example.com"}).Validate(), "webhook_url: must be an https or http URL")
}
