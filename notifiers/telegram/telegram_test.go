package telegram_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/telegram"
)

const botToken = "7012345678:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"

func ok(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"ok":true,"result":{"message_id":42}}`))
}

func newNotifier(t *testing.T, serverURL string, chatID telegram.ChatID) *telegram.Notifier {
	t.Helper()
	n, err := telegram.New(telegram.Config{BotToken: botToken, ChatID: chatID},
		notifiers.WithHTTPClient(notifiertest.HTTPClient(t)), notifiers.WithAPIURL(serverURL))
	require.NoError(t, err)
	return n
}

func TestOpenedAndResolved(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, ok)
	tg := newNotifier(t, recv.URL, "-1001234567890")
	require.NoError(t, tg.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, tg.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, "/bot"+botToken+"/sendMessage", req.Path)
		require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	}
	var opened map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &opened))
	require.Equal(t, map[string]any{
		"chat_id":              "-1001234567890",
		"parse_mode":           "HTML",
		"link_preview_options": map[string]any{"is_disabled": true},
		"text": "🔴 <b>DOWN nightly-import: missed</b>\n" +
			"nightly-import did not run at 02:00 Europe/Berlin (grace 5m)\n\n" +
			"<i>Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.</i>\n\n" +
			"<b>Schedule:</b> 0 2 * * * (Europe/Berlin)\n" +
			"<b>Expected:</b> 2026-03-14 01:00 UTC\n" +
			"<b>Last ping:</b> 2026-03-13 01:00 UTC\n" +
			"<b>Opened:</b> 2026-03-14 01:05 UTC\n" +
			"<b>Tags:</b> etl, billing\n\n" +
			`<a href="https://vigil.example.com/monitors/mon_7f3a">Open in Vigil</a>`,
	}, opened)

	var resolved telegram.SendMessage
	require.NoError(t, json.Unmarshal(reqs[1].Body, &resolved))
	require.Contains(t, resolved.Text, "✅ <b>UP nightly-import: recovered after 12m</b>\n")
	require.Contains(t, resolved.Text, "<b>Downtime:</b> 12m\n")
}

func TestEscapesHTML(t *testing.T) {
	t.Parallel()
	n := notifiertest.Opened()
	n.Monitor.Name = "<script>&job"
	n.Incident.Summary = `exit 1: "a < b" & c > d`
	text := telegram.Text(n)
	require.Contains(t, text, "<b>DOWN &lt;script&gt;&amp;job: missed</b>")
	require.Contains(t, text, "exit 1: &#34;a &lt; b&#34; &amp; c &gt; d")
}

func TestRateLimitFromBody(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"ok":false,"error_code":429,"description":"Too Many Requests: retry after 35","parameters":{"retry_after":35}}`))
	})
	err := newNotifier(t, recv.URL, "12345").Notify(context.Background(), notifiertest.Opened())
	require.False(t, notifiers.IsPermanent(err))
	wait, ok := notifiers.RetryAfter(err)
	require.True(t, ok)
	require.Equal(t, 35*time.Second, wait)
	notifiertest.AssertNoSecretLeak(t, err, botToken)
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier {
			return newNotifier(t, serverURL, "@vigil_alerts")
		},
		botToken, "AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0")
}

func TestNetworkErrorHidesToken(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, ok)
	target := recv.URL
	recv.Close()
	err := newNotifier(t, target, "12345").Notify(context.Background(), notifiertest.Opened())
	require.Error(t, err)
	require.False(t, notifiers.IsPermanent(err))
	notifiertest.AssertNoSecretLeak(t, err, botToken, "AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0")
}

func TestChatIDFromJSON(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]telegram.ChatID{
		`{"chat_id": -1001234567890}`:  "-1001234567890",
		`{"chat_id": "12345"}`:         "12345",
		`{"chat_id": "@vigil_alerts"}`: "@vigil_alerts",
	} {
		var cfg telegram.Config
		require.NoError(t, json.Unmarshal([]byte(raw), &cfg), raw)
		require.Equal(t, want, cfg.ChatID)
	}
	var cfg telegram.Config
	require.Error(t, json.Unmarshal([]byte(`{"chat_id": true}`), &cfg))
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&telegram.Config{BotToken: botToken, ChatID: "-100123"}).Validate())
	require.NoError(t, (&telegram.Config{BotToken: botToken, ChatID: "@vigil_alerts"}).Validate())
	require.EqualError(t, (&telegram.Config{}).Validate(), "bot_token: must be set\nchat_id: must be set")
	err := (&telegram.Config{BotToken: "not-a-token", ChatID: "team chat"}).Validate()
	require.EqualError(t, err, "bot_token: must look like 123456:ABC-DEF… (the token from @BotFather)\n"+
		`chat_id: "team chat" is neither a numeric chat id nor a @channelusername`)
	notifiertest.AssertNoSecretLeak(t, err, "not-a-token")
}
