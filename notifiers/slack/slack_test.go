package slack_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/slack"
)

const (
	webhookPath = "/services/T000AAA/B000BBB/hooksecret0123456789"
	botToken    = "xoxb-1111-2222-tokensecret"
)

// message is the part of Slack's message JSON that we check.
type message struct {
	Text        string `json:"text"`
	Attachments []struct {
		Color    string `json:"color"`
		Fallback string `json:"fallback"`
		Blocks   []struct {
			Type string `json:"type"`
			Text *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
			Fields []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"fields"`
			Elements []struct {
				Type  string `json:"type"`
				URL   string `json:"url"`
				Style string `json:"style"`
				Text  struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"elements"`
		} `json:"blocks"`
	} `json:"attachments"`
}

func newWebhook(t *testing.T, serverURL string) *slack.Notifier {
	t.Helper()
	n, err := slack.New(slack.Config{WebhookURL: serverURL + webhookPath},
		notifiers.WithHTTPClient(notifiertest.HTTPClient(t)))
	require.NoError(t, err)
	return n
}

func TestWebhookOpenedAndResolved(t *testing.T) {
	t.Parallel()
	cases := []struct {
		n          *notifiers.Notification
		color      string
		headline   string
		blockTypes []string
		fields     []string
	}{
		{
			n: notifiertest.Opened(), color: "#D92D20", headline: "DOWN nightly-import: missed",
			blockTypes: []string{"header", "section", "section", "section", "actions"},
			fields: []string{"*Schedule*\n0 2 * * * (Europe/Berlin)", "*Expected*\n2026-03-14 01:00 UTC",
				"*Last ping*\n2026-03-13 01:00 UTC", "*Opened*\n2026-03-14 01:05 UTC", "*Tags*\netl, billing"},
		},
		{
			n: notifiertest.Resolved(), color: "#12B76A", headline: "UP nightly-import: recovered after 12m",
			blockTypes: []string{"header", "section", "section", "actions"},
			fields: []string{"*Schedule*\n0 2 * * * (Europe/Berlin)", "*Last ping*\n2026-03-13 01:00 UTC",
				"*Opened*\n2026-03-14 01:05 UTC", "*Resolved*\n2026-03-14 01:17 UTC", "*Downtime*\n12m", "*Tags*\netl, billing"},
		},
	}
	for _, c := range cases {
		t.Run(string(c.n.Event), func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				_, _ = io.WriteString(w, "ok")
			})
			require.NoError(t, newWebhook(t, recv.URL).Notify(context.Background(), c.n))

			req := recv.Only(t)
			require.Equal(t, http.MethodPost, req.Method)
			require.Equal(t, webhookPath, req.Path)
			require.Equal(t, "application/json", req.Header.Get("Content-Type"))
			var msg message
			require.NoError(t, json.Unmarshal(req.Body, &msg))
			require.Equal(t, c.headline, msg.Text)
			require.Len(t, msg.Attachments, 1)
			att := msg.Attachments[0]
			require.Equal(t, c.color, att.Color)
			require.Equal(t, c.headline, att.Fallback)
			var types []string
			for _, b := range att.Blocks {
				types = append(types, b.Type)
			}
			require.Equal(t, c.blockTypes, types)
			require.Equal(t, c.headline, att.Blocks[0].Text.Text)
			require.Equal(t, "plain_text", att.Blocks[0].Text.Type)
			require.Equal(t, "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)", att.Blocks[1].Text.Text)
			require.Equal(t, "mrkdwn", att.Blocks[1].Text.Type)
			fieldBlock := att.Blocks[len(att.Blocks)-2]
			var fields []string
			for _, f := range fieldBlock.Fields {
				fields = append(fields, f.Text)
			}
			require.Equal(t, c.fields, fields)
			actions := att.Blocks[len(att.Blocks)-1]
			require.Len(t, actions.Elements, 1)
			require.Equal(t, "button", actions.Elements[0].Type)
			require.Equal(t, "https://vigil.example.com/monitors/mon_7f3a", actions.Elements[0].URL)
			require.Equal(t, "Open in Vigil", actions.Elements[0].Text.Text)
			if c.n.Event == notifiers.EventOpened {
				require.Equal(t, "Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.", att.Blocks[2].Text.Text)
				require.Equal(t, "danger", actions.Elements[0].Style)
			}
		})
	}
}

func TestEscapesMrkdwn(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	n := notifiertest.Opened()
	n.Incident.Summary = "job <b> & <!channel> failed"
	require.NoError(t, newWebhook(t, recv.URL).Notify(context.Background(), n))
	var msg message
	require.NoError(t, json.Unmarshal(recv.Only(t).Body, &msg))
	require.Equal(t, "job &lt;b&gt; &amp; &lt;!channel&gt; failed", msg.Attachments[0].Blocks[1].Text.Text)
}

func TestBotTokenPostMessage(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true,"channel":"C0123","ts":"1773450302.000100"}`)
	})
	n, err := slack.New(slack.Config{Token: botToken, Channel: "#ops"},
		notifiers.WithHTTPClient(notifiertest.HTTPClient(t)), notifiers.WithAPIURL(recv.URL))
	require.NoError(t, err)
	for _, event := range []*notifiers.Notification{notifiertest.Opened(), notifiertest.Resolved()} {
		require.NoError(t, n.Notify(context.Background(), event))
	}
	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for i, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, "/api/chat.postMessage", req.Path)
		require.Equal(t, "application/x-www-form-urlencoded", req.Header.Get("Content-Type"))
		form := parseForm(t, req.Body)
		require.Equal(t, botToken, form.Get("token"))
		require.Equal(t, "#ops", form.Get("channel"))
		require.Equal(t, "false", form.Get("unfurl_links"))
		var atts []struct {
			Color string `json:"color"`
		}
		require.NoError(t, json.Unmarshal([]byte(form.Get("attachments")), &atts))
		require.Len(t, atts, 1)
		if i == 0 {
			require.Equal(t, "DOWN nightly-import: missed", form.Get("text"))
			require.Equal(t, "#D92D20", atts[0].Color)
		} else {
			require.Equal(t, "UP nightly-import: recovered after 12m", form.Get("text"))
			require.Equal(t, "#12B76A", atts[0].Color)
		}
	}
}

func TestErrorClasses(t *testing.T) {
	t.Parallel()
	type answer struct {
		status int
		header http.Header
		body   string
	}
	cases := []struct {
		name      string
		bot       bool
		answer    answer
		want      notifiertest.Outcome
		wantAfter time.Duration
	}{
		{"webhook ok", false, answer{200, nil, "ok"}, notifiertest.OK, 0},
		{"webhook 400 invalid_payload", false, answer{400, nil, "invalid_payload"}, notifiertest.Fail, 0},
		{"webhook 403 action_prohibited", false, answer{403, nil, "action_prohibited"}, notifiertest.Fail, 0},
		{"webhook 404 no_service", false, answer{404, nil, "no_service"}, notifiertest.Fail, 0},
		{"webhook 410 channel_is_archived", false, answer{410, nil, "channel_is_archived"}, notifiertest.Fail, 0},
		{"webhook 429 Retry-After", false, answer{429, http.Header{"Retry-After": {"30"}}, ""}, notifiertest.Retry, 30 * time.Second},
		{"webhook 429 bare", false, answer{429, nil, ""}, notifiertest.Retry, 0},
		{"webhook 408", false, answer{408, nil, ""}, notifiertest.Retry, 0},
		{"webhook 500", false, answer{500, nil, "oops"}, notifiertest.Retry, 0},
		{"webhook 503", false, answer{503, nil, ""}, notifiertest.Retry, 0},
		{"bot channel_not_found", true, answer{200, nil, `{"ok":false,"error":"channel_not_found"}`}, notifiertest.Fail, 0},
		{"bot invalid_auth", true, answer{200, nil, `{"ok":false,"error":"invalid_auth"}`}, notifiertest.Fail, 0},
		{"bot internal_error", true, answer{200, nil, `{"ok":false,"error":"internal_error"}`}, notifiertest.Retry, 0},
		{"bot 429 Retry-After", true, answer{429, http.Header{"Retry-After": {"7"}}, ""}, notifiertest.Retry, 7 * time.Second},
		{"bot 502", true, answer{502, nil, "<html>bad gateway</html>"}, notifiertest.Retry, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range c.answer.header {
					w.Header()[k] = v
				}
				w.WriteHeader(c.answer.status)
				_, _ = io.WriteString(w, c.answer.body)
			})
			var n *slack.Notifier
			if c.bot {
				var err error
				n, err = slack.New(slack.Config{Token: botToken, Channel: "C0123"},
					notifiers.WithHTTPClient(notifiertest.HTTPClient(t)), notifiers.WithAPIURL(recv.URL))
				require.NoError(t, err)
			} else {
				n = newWebhook(t, recv.URL)
			}
			err := n.Notify(context.Background(), notifiertest.Opened())
			require.Equal(t, c.want.String(), notifiertest.OutcomeOf(err).String(), "%v", err)
			if c.wantAfter > 0 {
				after, ok := notifiers.RetryAfter(err)
				require.True(t, ok)
				require.Equal(t, c.wantAfter, after)
			}
			notifiertest.AssertNoSecretLeak(t, err, botToken, webhookPath, "hooksecret0123456789")
			require.Len(t, recv.Requests(), 1, "exactly one attempt, no retries inside slack-go")
		})
	}
}

func TestNetworkErrorHidesWebhookURL(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	target := recv.URL
	recv.Close() // nothing listens there any more
	err := newWebhook(t, target).Notify(context.Background(), notifiertest.Opened())
	require.Error(t, err)
	require.False(t, notifiers.IsPermanent(err), "connection refused is retryable: %v", err)
	notifiertest.AssertNoSecretLeak(t, err, webhookPath, "hooksecret0123456789")
	require.Contains(t, err.Error(), "post slack message")
}

func TestPrivateWebhookRefused(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	n, err := slack.New(slack.Config{WebhookURL: recv.URL + webhookPath}) // default client
	require.NoError(t, err)
	err = n.Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err), "%v", err)
	require.ErrorIs(t, err, notifiers.ErrPrivateTarget)
	notifiertest.AssertNoSecretLeak(t, err, "hooksecret0123456789")
	require.Empty(t, recv.Requests())
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg  slack.Config
		want string // "" when valid
	}{
		{slack.Config{WebhookURL: "https://hooks.slack.com/services/T/B/X"}, ""},
		{slack.Config{Token: "xoxb-1-2-3", Channel: "C0123"}, ""},
		{slack.Config{}, "webhook_url: must be set, or token and channel"},
		{slack.Config{WebhookURL: "hooks.slack.com/services/T/B/X"}, "webhook_url: must be an https or http URL"},
		{slack.Config{WebhookURL: "ftp://hooks.slack.com/x"}, "webhook_url: must be an https or http URL"},
		{slack.Config{WebhookURL: "https://hooks.slack.com/x", Token: "xoxb-1"}, "token: must not be set together with webhook_url"},
		{slack.Config{WebhookURL: "https://hooks.slack.com/x", Channel: "#a"}, "channel: only used with token"},
		{slack.Config{Token: "xoxb-1-2-3"}, "channel: must be set with token"},
		{slack.Config{Channel: "#ops"}, "token: must be set"},
		{slack.Config{Token: "abc", Channel: "#ops"}, "token: must be a Slack token starting with xox"},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if c.want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, c.want)
		notifiertest.AssertNoSecretLeak(t, err, c.cfg.Token, c.cfg.WebhookURL)
	}
	_, err := slack.New(slack.Config{})
	require.ErrorContains(t, err, "slack config: webhook_url: must be set")
}

func TestInvalidNotificationIsPermanent(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	n := notifiertest.Opened()
	n.Incident.ID = ""
	err := newWebhook(t, recv.URL).Notify(context.Background(), n)
	require.True(t, notifiers.IsPermanent(err))
	require.Empty(t, recv.Requests())
}

func parseForm(t *testing.T, body []byte) url.Values {
	t.Helper()
	form, err := url.ParseQuery(string(body))
	require.NoError(t, err)
	return form
}
