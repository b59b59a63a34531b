package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

const (
	secret    = "whsec_0123456789abcdef"
	authValue = "Bearer receiver-token-42"
)

func newNotifier(t *testing.T, cfg webhook.Config) *webhook.Notifier {
	t.Helper()
	n, err := webhook.New(cfg, notifiers.WithHTTPClient(notifiertest.HTTPClient(t)))
	require.NoError(t, err)
	return n
}

func golden(t *testing.T, name string, body []byte) {
	t.Helper()
	notifiertest.GoldenJSON(t, name+".json", body)
}

func TestDefaultPayloadSigned(t *testing.T) {
	t.Parallel()
	for _, n := range []*notifiers.Notification{
		notifiertest.Opened(), notifiertest.Resolved(), notifiertest.Notification(notifiers.EventTest),
	} {
		t.Run(string(n.Event), func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusNoContent)
			})
			w := newNotifier(t, webhook.Config{
				URL:     recv.URL + "/hooks/vigil?source=alerts",
				Secret:  secret,
				Headers: map[string]string{"Authorization": authValue, "x-team": "ops"},
			})
			require.NoError(t, w.Notify(context.Background(), n))

			req := recv.Only(t)
			require.Equal(t, http.MethodPost, req.Method)
			require.Equal(t, "/hooks/vigil", req.Path)
			require.Equal(t, "alerts", req.Query.Get("source"))
			require.Equal(t, "application/json", req.Header.Get("Content-Type"))
			require.Equal(t, "Vigil", req.Header.Get("User-Agent"))
			require.Equal(t, authValue, req.Header.Get("Authorization"))
			require.Equal(t, "ops", req.Header.Get("X-Team"))

			// The signature, computed here independently of Sign.
			ts := fmt.Sprint(n.SentAt.Unix())
			h := hmac.New(sha256.New, []byte(secret))
			h.Write([]byte(ts + "." + string(req.Body)))
			require.Equal(t, "t="+ts+",v1="+hex.EncodeToString(h.Sum(nil)), req.Header.Get("Vigil-Signature"))
			require.NoError(t, webhook.Verify(secret, req.Header.Get("Vigil-Signature"), req.Body, n.SentAt.Add(time.Minute), 5*time.Minute))

			name := strings.TrimPrefix(string(n.Event), "incident.")
			golden(t, name, req.Body)
		})
	}
}

func TestPayloadShape(t *testing.T) {
	t.Parallel()
	// Independent of the golden files: the exact keys of PROTOCOL §3.
	n := notifiertest.Opened()
	n.Monitor.Tags = nil
	body, err := newNotifier(t, webhook.Config{URL: "https://example.com/"}).Body(n)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(body, &doc))
	require.ElementsMatch(t, []string{"event", "incident", "monitor", "run", "ping", "sent_at"}, keys(doc))
	require.Nil(t, doc["run"], "null when the incident names no run")
	require.Nil(t, doc["ping"], "null when time opened the incident")
	incident := doc["incident"].(map[string]any)
	require.ElementsMatch(t, []string{"id", "kind", "opened_at", "resolved_at", "summary"}, keys(incident))
	require.Nil(t, incident["resolved_at"], "null while open")
	require.Contains(t, string(body), `"resolved_at":null`)
	monitor := doc["monitor"].(map[string]any)
	require.ElementsMatch(t, []string{"id", "name", "slug", "status", "tags", "url"}, keys(monitor))
	require.Equal(t, []any{}, monitor["tags"], "tags is [] and not null")
	require.Equal(t, "2026-03-14T01:05:00Z", incident["opened_at"])
	require.Equal(t, "2026-03-14T01:05:02Z", doc["sent_at"])

	// Times are UTC whatever zone they come in.
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	n.SentAt = n.SentAt.In(berlin)
	body, err = newNotifier(t, webhook.Config{URL: "https://example.com/"}).Body(n)
	require.NoError(t, err)
	require.Contains(t, string(body), `"sent_at":"2026-03-14T01:05:02Z"`)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestUnsignedWithoutSecret(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	require.NoError(t, newNotifier(t, webhook.Config{URL: recv.URL}).Notify(context.Background(), notifiertest.Opened()))
	req := recv.Only(t)
	require.Empty(t, req.Header.Get("Vigil-Signature"))
	require.Equal(t, "/", req.Path)
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	w := newNotifier(t, webhook.Config{
		URL:     recv.URL,
		Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8"},
		Template: `{{.Headline}} | {{json .Monitor.Name}} | {{rfc3339 .Incident.OpenedAt}} | {{rfc3339 .Incident.ResolvedAt}} | ` +
			`{{.DedupKey}} | {{(payload .).Event}} | {{range .Monitor.Tags}}#{{.}} {{end}}`,
	})
	require.NoError(t, w.Notify(context.Background(), notifiertest.Resolved()))
	req := recv.Only(t)
	require.Equal(t, "text/plain; charset=utf-8", req.Header.Get("Content-Type"))
	require.Equal(t, `UP nightly-import: recovered after 12m | "nightly-import" | 2026-03-14T01:05:00Z | 2026-03-14T01:17:20Z | `+
		`inc_01HZX3M4W6 | incident.resolved | #etl #billing `, string(req.Body))
}

func TestTemplateErrorAtSendIsPermanent(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	// Renders for the sample used at save time, fails for this monitor.
	w := newNotifier(t, webhook.Config{
		URL:      recv.URL,
		Secret:   secret,
		Template: `{{if eq .Monitor.Name "sample"}}ok{{else}}{{index .Monitor.Tags 9}}{{end}}`,
	})
	err := w.Notify(context.Background(), notifiertest.Opened())
	require.Error(t, err)
	require.True(t, notifiers.IsPermanent(err), "%v", err)
	require.Contains(t, err.Error(), "render template")
	require.Empty(t, recv.Requests())
	notifiertest.AssertNoSecretLeak(t, err, secret)
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier {
			return newNotifier(t, webhook.Config{
				URL:     serverURL + "/hook?token=url-token-secret",
				Secret:  secret,
				Headers: map[string]string{"Authorization": authValue},
			})
		}, secret, authValue, "url-token-secret")
}

func TestReceiverEchoingSecretsIsRedacted(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "bad credentials %q for %s", r.Header.Get("Authorization"), r.URL.String())
	})
	w := newNotifier(t, webhook.Config{URL: recv.URL + "/hook?token=url-token-secret", Secret: secret,
		Headers: map[string]string{"Authorization": authValue}})
	err := w.Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err))
	require.Contains(t, err.Error(), "HTTP 401 Unauthorized: bad credentials")
	notifiertest.AssertNoSecretLeak(t, err, secret, authValue, "receiver-token-42", "url-token-secret")
}

func TestPrivateTargetRefusedByDefault(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	w, err := webhook.New(webhook.Config{URL: recv.URL + "/hook?token=url-token-secret"})
	require.NoError(t, err)
	err = w.Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err))
	require.ErrorIs(t, err, notifiers.ErrPrivateTarget)
	require.Contains(t, err.Error(), "VIGIL_ALLOW_PRIVATE_TARGETS=true")
	notifiertest.AssertNoSecretLeak(t, err, "url-token-secret")
	require.Empty(t, recv.Requests())
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		cfg  webhook.Config
		want string
	}{
		{webhook.Config{URL: "https://example.com/hook", Secret: secret, Headers: map[string]string{"X-Key": "v"},
			Template: `{"text": {{json .Headline}}}`}, ""},
		{webhook.Config{}, "url: must be set"},
		{webhook.Config{URL: "example.com/hook"}, "url: must be an https or http URL"},
		{webhook.Config{URL: "https://example.com", Secret: "short"}, "secret: must be at least 16 characters"},
		{webhook.Config{URL: "https://example.com", Headers: map[string]string{"Bad Name": "v"}}, `headers: "Bad Name" is not a valid header name`},
		{webhook.Config{URL: "https://example.com", Headers: map[string]string{"vigil-signature": "v"}}, "headers: Vigil-Signature is set by Vigil and cannot be configured"},
		{webhook.Config{URL: "https://example.com", Headers: map[string]string{"host": "v"}}, "headers: Host is set by Vigil"},
		{webhook.Config{URL: "https://example.com", Headers: map[string]string{"X-Key": "a\r\nInjected: yes"}}, "headers: the value of X-Key must not contain line breaks"},
		{webhook.Config{URL: "https://example.com", Template: "{{.Headline"}, "template: template: webhook:1: unclosed action"},
		{webhook.Config{URL: "https://example.com", Template: "{{.Nope}}"}, `template: line 1: "Nope" is not a field or method a template may use`},
		{webhook.Config{URL: "https://example.com", Template: "{{nofunc .}}"}, `template: template: webhook:1: function "nofunc" not defined`},
	}
	for _, c := range cases {
		err := c.cfg.Validate()
		if c.want == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, c.want)
		notifiertest.AssertNoSecretLeak(t, err, "a\r\nInjected: yes")
	}
	_, err := webhook.New(webhook.Config{URL: "https://example.com", Template: "{{"})
	require.ErrorContains(t, err, "webhook config: template:")
}

func TestVerify(t *testing.T) {
	t.Parallel()
	body := []byte(`{"event":"test"}`)
	at := time.Date(2026, 3, 14, 1, 5, 2, 0, time.UTC)
	header := webhook.Sign(secret, at, body)

	require.NoError(t, webhook.Verify(secret, header, body, at, time.Minute))
	require.NoError(t, webhook.Verify(secret, header, body, at.Add(time.Minute), time.Minute))
	require.NoError(t, webhook.Verify(secret, header, body, at.Add(-time.Minute), time.Minute), "a slightly fast sender clock")
	require.ErrorIs(t, webhook.Verify(secret, header, body, at.Add(time.Minute+time.Second), time.Minute), webhook.ErrSignatureExpired)
	require.NoError(t, webhook.Verify(secret, header, body, at.Add(4*time.Minute), 0), "zero tolerance means 5 minutes")
	require.ErrorIs(t, webhook.Verify(secret, header, []byte(`{"event":"tset"}`), at, time.Minute), webhook.ErrSignatureMismatch)
	require.ErrorIs(t, webhook.Verify("another-secret-entirely", header, body, at, time.Minute), webhook.ErrSignatureMismatch)
	require.ErrorIs(t, webhook.Verify(secret, "", body, at, time.Minute), webhook.ErrSignatureMissing)
	for _, bad := range []string{"garbage", "t=abc,v1=00", "t=1", "t=1,v1=zz", "t=1,t=2,v1=00"} {
		require.ErrorIs(t, webhook.Verify(secret, bad, body, at, time.Minute), webhook.ErrSignatureMalformed, bad)
	}
	// A forged timestamp breaks the HMAC even if it is fresh.
	forged := strings.Replace(header, fmt.Sprint(at.Unix()), fmt.Sprint(at.Unix()+100), 1)
	require.ErrorIs(t, webhook.Verify(secret, forged, body, at, time.Hour), webhook.ErrSignatureMismatch)
	// Rotation: an old and a new signature side by side.
	rotated := header + ",v1=" + strings.TrimPrefix(webhook.Sign("the-old-secret-value", at, body), fmt.Sprintf("t=%d,v1=", at.Unix()))
	require.NoError(t, webhook.Verify(secret, rotated, body, at, time.Minute))
	require.NoError(t, webhook.Verify("the-old-secret-value", rotated, body, at, time.Minute))
}

// TestTemplateReport: a channel's template renders a report too, and its
// payload function gives the report's own payload.
func TestTemplateReport(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	n := newNotifier(t, webhook.Config{URL: recv.URL,
		Template: `{"text": {{json .Headline}}, "uptime": {{json (payload .).Report.Uptime}}, "first": {{json (index .Report.WithIncidents 0).Label}}}`})
	require.NoError(t, n.Notify(context.Background(), notifiertest.WeeklyReport()))
	require.JSONEq(t, `{"text": "Weekly report for Billing & Ops: week of 23–29 Nov 2026 (UTC)", "uptime": 0.9830508474576272,
		"first": "nightly-import"}`, string(recv.Only(t).Body))
}
