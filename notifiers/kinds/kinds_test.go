package kinds_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/kinds"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// samples holds a valid config per kind, with its secret values.
var samples = map[string]struct {
	config  string
	secrets []string
}{
	"slack":     {`{"webhook_url":"https://hooks.slack.com/services/T0/B0/slacksecret"}`, []string{"slacksecret"}},
	"email":     {`{"to":["oncall@example.com"]}`, nil},
	"webhook":   {`{"url":"https://example.com/hook","secret":"whsec_0123456789abcdef","headers":{"Authorization":"Bearer hdrsecret"}}`, []string{"whsec_0123456789abcdef", "hdrsecret"}},
	"pagerduty": {`{"routing_key":"pdkey0123456789abcdef0123456789ab","severity":"error"}`, []string{"pdkey0123456789abcdef0123456789ab"}},
	"discord":   {`{"webhook_url":"https://discord.com/api/webhooks/1/discordsecret"}`, []string{"discordsecret"}},
	"teams":     {`{"webhook_url":"https://prod.logic.azure.com/workflows/1?sig=teamssecret"}`, []string{"teamssecret"}},
	"opsgenie":  {`{"api_key":"ogkey-123-secret","region":"eu"}`, []string{"ogkey-123-secret"}},
	"telegram":  {`{"bot_token":"7012345678:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0","chat_id":-1001234567890}`, []string{"AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0"}},
	"ntfy":      {`{"url":"https://ntfy.sh/ntfy-secret-topic","token":"tk_ntfysecret"}`, []string{"ntfy-secret-topic", "tk_ntfysecret"}},
}

func TestNamesFollowProtocol(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"slack", "email", "webhook", "pagerduty", "discord", "teams", "opsgenie", "telegram", "ntfy"}, kinds.Names())
	require.Len(t, samples, len(kinds.Names()))
}

func TestEveryKindValidatesBuildsAndRedacts(t *testing.T) {
	t.Parallel()
	smtp := &email.SMTPConfig{Host: "smtp.example.com", From: "vigil@example.com"}
	for _, k := range kinds.All() {
		t.Run(k.Name(), func(t *testing.T) {
			t.Parallel()
			sample, ok := samples[k.Name()]
			require.True(t, ok)
			raw := json.RawMessage(sample.config)
			require.NoError(t, k.Validate(raw))
			n, err := k.New(raw, kinds.Deps{SMTP: smtp})
			require.NoError(t, err)
			require.NotNil(t, n)

			for _, key := range k.SecretKeys() {
				require.Contains(t, k.Keys(), key, "a secret key is a config key")
			}
			redacted := k.Redact(raw)
			for _, secret := range sample.secrets {
				require.NotContains(t, string(redacted), secret)
			}
			var m map[string]any
			require.NoError(t, json.Unmarshal(redacted, &m))
			for _, key := range k.SecretKeys() {
				require.NotContains(t, m, key)
			}
			var full map[string]any
			require.NoError(t, json.Unmarshal(raw, &full))
			for key, value := range full {
				if !contains(k.SecretKeys(), key) {
					require.Equal(t, value, m[key], "non-secret %s is kept", key)
				}
			}

			// An update that leaves secrets out keeps them.
			kept, forgotten, err := k.KeepSecrets(raw, redacted)
			require.NoError(t, err)
			require.JSONEq(t, sample.config, string(kept))
			require.Empty(t, forgotten)

			unknown := strings.Replace(sample.config, "{", `{"bogus":1,`, 1)
			err = k.Validate(json.RawMessage(unknown))
			require.ErrorContains(t, err, "bogus: is not a config key of "+k.Name()+" (keys: ")
			notifiertest.AssertNoSecretLeak(t, err, sample.secrets...)
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestDecodeErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, raw, want string
	}{
		{"email", `{"to":"oncall@example.com"}`, "to: must be a list of strings"},
		{"email", `{}`, "to: must list at least one address"},
		{"email", `null`, "to: must list at least one address"},
		{"webhook", `{"url":"https://example.com","headers":{"X":1}}`, "headers: must be an object whose values are strings"},
		{"webhook", `{"url":"https://example.com","headers":["X"]}`, "headers: must be an object whose values are strings"},
		{"pagerduty", `{"routing_key":42}`, "routing_key: must be a string"},
		{"telegram", `{"bot_token":"7012345678:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0","chat_id":true}`, "chat_id: must be a number or a string"},
		{"slack", `[]`, "config: must be a JSON object"},
		{"slack", `{"webhook_url":`, "config: is not valid JSON"},
		{"slack", `{} {}`, "config: must be one JSON object"},
		{"slack", `{"webhook_url":"https://hooks.slack.com/x"}`, ""},
	}
	for _, c := range cases {
		err := kinds.Validate(c.kind, json.RawMessage(c.raw))
		if c.want == "" {
			require.NoError(t, err, c.raw)
			continue
		}
		require.ErrorContains(t, err, c.want, c.raw)
	}
}

func TestUnknownKind(t *testing.T) {
	t.Parallel()
	want := `kind: "sms" is not one of slack, email, webhook, pagerduty, discord, teams, opsgenie, telegram, ntfy`
	require.EqualError(t, kinds.Validate("sms", nil), want)
	_, err := kinds.New("sms", nil, kinds.Deps{})
	require.EqualError(t, err, want)
	_, err = kinds.Lookup("Slack")
	require.Error(t, err)
	require.Equal(t, `{}`, string(kinds.Redact("sms", json.RawMessage(`{"token":"x"}`))))
}

func TestRedactInvalidJSON(t *testing.T) {
	t.Parallel()
	require.Equal(t, `{}`, string(kinds.Redact("slack", json.RawMessage(`{"token":"xoxb-secret"`))))
	require.Equal(t, `{}`, string(kinds.Redact("slack", json.RawMessage(`null`))))
	require.Equal(t, `{"channel":"#ops"}`, string(kinds.Redact("slack", json.RawMessage(`{"token":"xoxb-secret","channel":"#ops"}`))))
}

func TestKeepSecretsNullRemoves(t *testing.T) {
	t.Parallel()
	k, err := kinds.Lookup("slack")
	require.NoError(t, err)
	// Switching from a webhook to a bot token: the client clears the URL.
	out, _, err := k.KeepSecrets(json.RawMessage(`{"webhook_url":"https://hooks.slack.com/x"}`),
		json.RawMessage(`{"webhook_url":null,"token":"xoxb-1-2","channel":"#ops"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"token":"xoxb-1-2","channel":"#ops"}`, string(out))
	require.NoError(t, k.Validate(out))

	// A new secret replaces the stored one.
	out, forgotten, err := k.KeepSecrets(json.RawMessage(`{"token":"xoxb-old","channel":"#a"}`), json.RawMessage(`{"token":"xoxb-new","channel":"#b"}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"token":"xoxb-new","channel":"#b"}`, string(out))
	require.Empty(t, forgotten)

	_, _, err = k.KeepSecrets(nil, json.RawMessage(`"x"`))
	require.EqualError(t, err, "config: must be a JSON object")
}

func TestEmailNeedsSMTP(t *testing.T) {
	t.Parallel()
	_, err := kinds.New("email", json.RawMessage(samples["email"].config), kinds.Deps{})
	require.EqualError(t, err, "email: no SMTP server is configured on this Vigil")
}

func TestNewSendsThroughDeps(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	raw := json.RawMessage(`{"url":"` + recv.URL + `/hook","secret":"whsec_0123456789abcdef"}`)

	// Without a client or AllowPrivate, loopback is refused.
	n, err := kinds.New("webhook", raw, kinds.Deps{})
	require.NoError(t, err)
	err = n.Notify(context.Background(), notifiertest.Opened())
	require.ErrorIs(t, err, notifiers.ErrPrivateTarget)
	require.Empty(t, recv.Requests())

	n, err = kinds.New("webhook", raw, kinds.Deps{AllowPrivate: true})
	require.NoError(t, err)
	require.NoError(t, n.Notify(context.Background(), notifiertest.Opened()))

	n, err = kinds.New("webhook", raw, kinds.Deps{HTTPClient: notifiertest.HTTPClient(t)})
	require.NoError(t, err)
	require.NoError(t, n.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	require.Equal(t, http.MethodPost, reqs[0].Method)
	require.NotEmpty(t, reqs[0].Header.Get("Vigil-Signature"))
}

func TestNewRejectsInvalidConfig(t *testing.T) {
	t.Parallel()
	_, err := kinds.New("pagerduty", json.RawMessage(`{"routing_key":"k","severity":"sev1"}`), kinds.Deps{})
	require.EqualError(t, err, `pagerduty config: severity: "sev1" is not one of critical, error, warning, info`)
	_, err = kinds.New("pagerduty", json.RawMessage(`{"routing_key":"k","extra":1}`), kinds.Deps{})
	require.ErrorContains(t, err, "pagerduty config: extra: is not a config key of pagerduty (keys: routing_key, severity)")
}

// TestKeepSecretsForgetsOnNewDestination: an update that changes where a
// channel sends keeps no secret it does not give again, for every kind.
func TestKeepSecretsForgetsOnNewDestination(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind, stored, incoming string
		want                   string
		forgotten              []string
	}{
		// Same destination: secrets kept.
		{"webhook", `{"url":"https://a.example/h","secret":"s1","headers":{"Authorization":"Bearer t"}}`,
			`{"url":"https://a.example/h","template":"x"}`,
			`{"url":"https://a.example/h","secret":"s1","headers":{"Authorization":"Bearer t"},"template":"x"}`, nil},
		// New URL: secret and headers forgotten.
		{"webhook", `{"url":"https://a.example/h","secret":"s1","headers":{"Authorization":"Bearer t"}}`,
			`{"url":"https://evil.example/h"}`, `{"url":"https://evil.example/h"}`, []string{"secret", "headers"}},
		// New URL with the secret given again: the headers only are forgotten.
		{"webhook", `{"url":"https://a.example/h","secret":"s1","headers":{"Authorization":"Bearer t"}}`,
			`{"url":"https://b.example/h","secret":"s2"}`, `{"url":"https://b.example/h","secret":"s2"}`, []string{"headers"}},
		{"ntfy", `{"url":"https://ntfy.sh/a","token":"tk_1"}`, `{}`, `{"url":"https://ntfy.sh/a","token":"tk_1"}`, nil},
		{"ntfy", `{"url":"https://ntfy.sh/a","token":"tk_1"}`, `{"url":"https://evil.example/a"}`, `{"url":"https://evil.example/a"}`, []string{"token"}},
		{"slack", `{"token":"xoxb-1","channel":"#ops"}`, `{"channel":"#ops"}`, `{"token":"xoxb-1","channel":"#ops"}`, nil},
		{"slack", `{"token":"xoxb-1","channel":"#ops"}`, `{"channel":"#mine"}`, `{"channel":"#mine"}`, []string{"token"}},
		{"slack", `{"webhook_url":"https://hooks.slack.com/a"}`, `{"webhook_url":"https://hooks.slack.com/b"}`, `{"webhook_url":"https://hooks.slack.com/b"}`, nil},
		{"telegram", `{"bot_token":"1:A","chat_id":123}`, `{"chat_id":"123"}`, `{"bot_token":"1:A","chat_id":"123"}`, nil},
		{"telegram", `{"bot_token":"1:A","chat_id":123}`, `{"chat_id":456}`, `{"chat_id":456}`, []string{"bot_token"}},
		{"opsgenie", `{"api_key":"k","region":"us"}`, `{"region":"us"}`, `{"api_key":"k","region":"us"}`, nil},
		{"opsgenie", `{"api_key":"k","region":"us"}`, `{"region":"eu"}`, `{"region":"eu"}`, []string{"api_key"}},
		{"pagerduty", `{"routing_key":"r","severity":"info"}`, `{"severity":"error"}`, `{"routing_key":"r","severity":"error"}`, nil},
		{"discord", `{"webhook_url":"https://discord.com/api/webhooks/1/a"}`, `{}`, `{"webhook_url":"https://discord.com/api/webhooks/1/a"}`, nil},
	} {
		k, err := kinds.Lookup(tc.kind)
		require.NoError(t, err)
		out, forgotten, err := k.KeepSecrets(json.RawMessage(tc.stored), json.RawMessage(tc.incoming))
		require.NoError(t, err)
		require.JSONEq(t, tc.want, string(out), "%s %s", tc.kind, tc.incoming)
		require.Equal(t, tc.forgotten, forgotten, "%s %s", tc.kind, tc.incoming)
	}
}

// TestDestinationKeysAreConfigKeys keeps the destination lists in step
// with the configs.
func TestDestinationKeysAreConfigKeys(t *testing.T) {
	t.Parallel()
	for _, k := range kinds.All() {
		require.NotEmpty(t, k.DestinationKeys(), k.Name())
		for _, key := range k.DestinationKeys() {
			require.Contains(t, k.Keys(), key, k.Name())
		}
	}
}

func TestForgottenNote(t *testing.T) {
	t.Parallel()
	k, err := kinds.Lookup("webhook")
	require.NoError(t, err)
	require.Empty(t, kinds.ForgottenNote(k, nil))
	require.Equal(t, "the stored secret and headers were forgotten because url changed: give them again to keep them",
		kinds.ForgottenNote(k, []string{"secret", "headers"}))
	k, err = kinds.Lookup("slack")
	require.NoError(t, err)
	require.Equal(t, "the stored token was forgotten because webhook_url or channel changed: give it again to keep it",
		kinds.ForgottenNote(k, []string{"token"}))
}
