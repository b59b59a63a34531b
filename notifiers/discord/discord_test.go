package discord_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/discord"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

const hookPath = "/api/webhooks/1234567890/discord-hook-token_secret"

func newNotifier(t *testing.T, serverURL string) *discord.Notifier {
	t.Helper()
	n, err := discord.New(discord.Config{WebhookURL: serverURL + hookPath},
		notifiers.WithHTTPClient(notifiertest.HTTPClient(t)))
	require.NoError(t, err)
	return n
}

func TestOpenedAndResolved(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	d := newNotifier(t, recv.URL)
	require.NoError(t, d.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, d.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, hookPath, req.Path)
		require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	}

	var opened map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &opened))
	require.Equal(t, map[string]any{
		"username":         "Vigil",
		"allowed_mentions": map[string]any{"parse": []any{}},
		"embeds": []any{map[string]any{
			"title":       "DOWN nightly-import: missed",
			"url":         "https://vigil.example.com/monitors/mon_7f3a",
			"description": "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)\n\nExpected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.",
			"color":       float64(0xD92D20),
			"timestamp":   "2026-03-14T01:05:02Z",
			"footer":      map[string]any{"text": "Vigil"},
			"fields": []any{
				map[string]any{"name": "Schedule", "value": "0 2 \\* \\* \\* (Europe/Berlin)", "inline": true},
				map[string]any{"name": "Expected", "value": "2026-03-14 01:00 UTC", "inline": true},
				map[string]any{"name": "Last ping", "value": "2026-03-13 01:00 UTC", "inline": true},
				map[string]any{"name": "Opened", "value": "2026-03-14 01:05 UTC", "inline": true},
				map[string]any{"name": "Tags", "value": "etl, billing", "inline": true},
			},
		}},
	}, opened)

	var resolved discord.Message
	require.NoError(t, json.Unmarshal(reqs[1].Body, &resolved))
	require.Len(t, resolved.Embeds, 1)
	require.Equal(t, "UP nightly-import: recovered after 12m", resolved.Embeds[0].Title)
	require.Equal(t, discord.ColorUp, resolved.Embeds[0].Color)
	require.Contains(t, resolved.Embeds[0].Fields, discord.EmbedField{Name: "Downtime", Value: "12m", Inline: true})
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier { return newNotifier(t, serverURL) },
		hookPath, "discord-hook-token_secret")
}

func TestRateLimitWithFractionalRetryAfter(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2.5")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"message": "You are being rate limited.", "retry_after": 2.5, "global": false}`))
	})
	err := newNotifier(t, recv.URL).Notify(context.Background(), notifiertest.Opened())
	require.False(t, notifiers.IsPermanent(err))
	wait, ok := notifiers.RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, "3s", wait.String())
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&discord.Config{WebhookURL: "https://discord.com/api/webhooks/1/abc"}).Validate())
	require.EqualError(t, (&discord.Config{}).Validate(), "webhook_url: must be set")
	require.EqualError(t, (&discord.Config{WebhookURL: "discord.com/api/webhooks/1/abc"}).Validate(), "webhook_url: must be an https or http URL")
}

func TestEscapesMarkdownAndMentions(t *testing.T) {
	t.Parallel()
	n := notifiertest.Opened()
	n.Incident.Summary = "nightly_import_v2 failed for @everyone *now*"
	msg := discord.NewMessage(n)
	require.Equal(t, `nightly\_import\_v2 failed for @everyone \*now\*`, msg.Embeds[0].Description[:len(`nightly\_import\_v2 failed for @everyone \*now\*`)])
	require.NotNil(t, msg.AllowedMentions.Parse, "an empty list, so that @everyone pings no one")
	require.Empty(t, msg.AllowedMentions.Parse)
}
