package api_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

func TestChannels(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		secret := "s3cret-value-0123456789"
		r := b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "webhook", "name": " ops hook ",
			"config": map[string]any{"url": "https://hooks.example.com/vigil", "secret": secret,
				"headers": map[string]string{"Authorization": "Bearer hook-token"}}, "is_default": true})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.NotContains(t, string(r.body), secret, "secrets are write-only")
		require.NotContains(t, string(r.body), "hook-token")
		var ch api.Channel
		r.json(t, &ch)
		require.Equal(t, "ops hook", ch.Name)
		require.Equal(t, "webhook", ch.Kind)
		require.True(t, ch.IsDefault)
		require.JSONEq(t, `{"url":"https://hooks.example.com/vigil"}`, string(ch.Config))
		require.Equal(t, t0, ch.CreatedAt)

		r = b.do(http.MethodGet, "/api/v1/channels/"+ch.ID, b.ro, nil)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, string(r.body), secret)
		r = b.do(http.MethodGet, "/api/v1/channels", b.ro, nil)
		require.NotContains(t, string(r.body), secret)

		// A PATCH that leaves the secret out keeps it; the stored config
		// has it.
		b.clock.Set(t0.Add(time.Minute))
		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{
			"config": map[string]any{"url": "https://hooks.example.com/vigil", "template": "{{.Headline}}"}, "is_default": false})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &ch)
		require.JSONEq(t, `{"url":"https://hooks.example.com/vigil","template":"{{.Headline}}"}`, string(ch.Config))
		require.Empty(t, ch.SecretsForgotten)
		require.NotContains(t, string(r.body), "secrets_forgotten")
		require.False(t, ch.IsDefault)
		require.Equal(t, t0.Add(time.Minute), ch.UpdatedAt)
		stored, err := b.store.ChannelGet(ctx, b.prj.ID, ch.ID)
		require.NoError(t, err)
		require.JSONEq(t, fmt.Sprintf(`{"url":"https://hooks.example.com/vigil","template":"{{.Headline}}","secret":%q,"headers":{"Authorization":"Bearer hook-token"}}`, secret),
			string(stored.Config))
		// null removes a secret.
		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{
			"config": map[string]any{"url": "https://hooks.example.com/vigil", "headers": nil}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		stored, err = b.store.ChannelGet(ctx, b.prj.ID, ch.ID)
		require.NoError(t, err)
		require.JSONEq(t, fmt.Sprintf(`{"url":"https://hooks.example.com/vigil","secret":%q}`, secret), string(stored.Config))
		// A new URL forgets the secrets the PATCH does not give again, and
		// the answer says so.
		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{
			"config": map[string]any{"url": "https://hooks.example.com/other"}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &ch)
		require.Equal(t, []string{"secret"}, ch.SecretsForgotten)
		stored, err = b.store.ChannelGet(ctx, b.prj.ID, ch.ID)
		require.NoError(t, err)
		require.JSONEq(t, `{"url":"https://hooks.example.com/other"}`, string(stored.Config))
		// A PATCH that changes nothing keeps updated_at.
		b.clock.Set(t0.Add(time.Hour))
		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"name": "ops hook"})
		r.json(t, &ch)
		require.Equal(t, t0.Add(time.Minute), ch.UpdatedAt)

		// A channel monitors use is not deleted.
		m := b.createMonitor(map[string]any{"name": "paged", "channels": []string{ch.ID}})
		r = b.do(http.MethodDelete, "/api/v1/channels/"+ch.ID, b.rw, nil)
		require.Equal(t, http.StatusConflict, r.status)
		require.Contains(t, r.errorBody(t).Error, "channel is used by monitors paged")
		r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"channels": []string{}})
		require.Equal(t, http.StatusOK, r.status)
		r = b.do(http.MethodDelete, "/api/v1/channels/"+ch.ID, b.rw, nil)
		require.Equal(t, http.StatusNoContent, r.status)
		r = b.do(http.MethodGet, "/api/v1/channels/"+ch.ID, b.rw, nil)
		require.Equal(t, http.StatusNotFound, r.status)

		// Every kind validates its own config.
		for _, c := range []map[string]any{
			{"kind": "slack", "config": map[string]any{"webhook_url": "https://hooks.slack.com/services/T0/B0/x"}},
			{"kind": "email", "config": map[string]any{"to": []string{"ops@example.com"}}},
			{"kind": "pagerduty", "config": map[string]any{"routing_key": "0123456789abcdef0123456789abcdef"}},
			{"kind": "ntfy", "config": map[string]any{"url": "https://ntfy.sh/vigil-test-topic"}},
		} {
			c["name"] = c["kind"]
			r = b.do(http.MethodPost, "/api/v1/channels", b.rw, c)
			require.Equal(t, http.StatusCreated, r.status, "%v: %s", c, r.body)
		}
		r = b.do(http.MethodGet, "/api/v1/channels?limit=2", b.rw, nil)
		var l api.ChannelList
		r.json(t, &l)
		require.Equal(t, []string{"email", "ntfy"}, []string{l.Channels[0].Name, l.Channels[1].Name}, "by name")
		require.NotNil(t, l.Next)
		r = b.do(http.MethodGet, *l.Next, b.rw, nil)
		r.json(t, &l)
		require.Equal(t, []string{"pagerduty", "slack"}, []string{l.Channels[0].Name, l.Channels[1].Name})
		require.Nil(t, l.Next)
		require.NotContains(t, string(r.body), "hooks.slack.com", "a Slack webhook URL is its own secret")
	})
}

// tester is a ChannelTester that answers with err.
type tester struct{ err error }

func (x tester) TestChannel(_ context.Context, ch *monitors.Channel) error { return x.err }

func TestChannelTest(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		tester api.ChannelTester
		status int
		msg    string
	}{
		"sent":        {tester{}, http.StatusOK, ""},
		"refused":     {tester{errors.New("webhook answered 410 Gone")}, http.StatusBadGateway, "the test notification failed: webhook answered 410 Gone"},
		"unavailable": {tester{fmt.Errorf("email: %w", api.ErrTestUnavailable)}, http.StatusNotImplemented, "not available"},
		"no sender":   {nil, http.StatusNotImplemented, "cannot test a channel"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			eachStoreWith(t, options{tester: tc.tester}, func(t *testing.T, b *bundle) {
				ch := b.channel("hook")
				r := b.do(http.MethodPost, "/api/v1/channels/"+ch.ID+"/test", b.rw, nil)
				require.Equal(t, tc.status, r.status, "%s", r.body)
				if tc.status == http.StatusOK {
					require.JSONEq(t, `{"ok":true}`, string(r.body))
					return
				}
				require.Contains(t, r.errorBody(t).Error, tc.msg)
			})
		})
	}
}

// senderTester is delivery's real Sender as the API's ChannelTester.
type senderTester struct{ s *delivery.Sender }

func (x senderTester) TestChannel(ctx context.Context, ch *monitors.Channel) error {
	return x.s.TestChannel(ctx, ch)
}

// TestChannelMovedSendsNoOldSecret: after a PATCH that points a webhook
// somewhere else, "send test" reaches the new address without the old
// signing secret or headers.
func TestChannelMovedSendsNoOldSecret(t *testing.T) {
	t.Parallel()
	sender, err := delivery.NewSender(delivery.Config{HTTPClient: notifiertest.HTTPClient(t), BaseURL: "https://vigil.example.com"})
	require.NoError(t, err)
	eachStoreWith(t, options{tester: senderTester{sender}}, func(t *testing.T, b *bundle) {
		owner, stranger := notifiertest.NewReceiver(t, nil), notifiertest.NewReceiver(t, nil)
		const secret, token = "whsec_owner_0123456789", "Bearer owner-token-0123456789"
		r := b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "webhook", "name": "hook",
			"config": map[string]any{"url": owner.URL + "/in", "secret": secret, "headers": map[string]string{"Authorization": token}}})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var ch api.Channel
		r.json(t, &ch)
		r = b.do(http.MethodPost, "/api/v1/channels/"+ch.ID+"/test", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		got := owner.Only(t)
		require.Equal(t, token, got.Header.Get("Authorization"))
		require.NotEmpty(t, got.Header.Get("Vigil-Signature"))

		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"config": map[string]any{"url": stranger.URL + "/steal"}})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &ch)
		require.Equal(t, []string{"secret", "headers"}, ch.SecretsForgotten)
		r = b.do(http.MethodPost, "/api/v1/channels/"+ch.ID+"/test", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		got = stranger.Only(t)
		require.Empty(t, got.Header.Get("Authorization"))
		require.Empty(t, got.Header.Get("Vigil-Signature"))
		require.NotContains(t, string(got.Body), secret)
	})
}

// TestChannelAlertingFields: notify_late and group_seconds are set on
// create and by PATCH, default by kind, and are refused, naming the field,
// when out of range or on a kind that pages.
func TestChannelAlertingFields(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		slack := map[string]any{"webhook_url": "https://hooks.slack.com/services/T000/B000/XXXX"}
		r := b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "slack", "name": "team", "config": slack})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var ch api.Channel
		r.json(t, &ch)
		require.False(t, ch.NotifyLate)
		require.Equal(t, 30, ch.GroupSeconds, "chat kinds gather for 30 s by default")

		r = b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "webhook", "name": "hook",
			"config": map[string]any{"url": "https://hooks.example.com/vigil"}, "notify_late": true})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var hook api.Channel
		r.json(t, &hook)
		require.True(t, hook.NotifyLate)
		require.Zero(t, hook.GroupSeconds, "webhooks send each incident alone by default")

		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"notify_late": true, "group_seconds": 0})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &ch)
		require.True(t, ch.NotifyLate)
		require.Zero(t, ch.GroupSeconds)

		pd := map[string]any{"routing_key": "R0123456789abcdef0123456789abcdef"}
		for _, c := range []struct {
			method, path string
			body         map[string]any
			field        string
		}{
			{http.MethodPatch, "/api/v1/channels/" + ch.ID, map[string]any{"group_seconds": 601}, "group_seconds"},
			{http.MethodPatch, "/api/v1/channels/" + ch.ID, map[string]any{"group_seconds": -1}, "group_seconds"},
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "pagerduty", "name": "pd", "config": pd, "notify_late": true}, "notify_late"},
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "pagerduty", "name": "pd", "config": pd, "group_seconds": 30}, "group_seconds"},
		} {
			r := b.do(c.method, c.path, b.rw, c.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", c.body, r.body)
			var e api.Error
			r.json(t, &e)
			require.Equal(t, c.field, e.Field, "%s", r.body)
		}
		r = b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "pagerduty", "name": "pd", "config": pd})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var page api.Channel
		r.json(t, &page)
		require.False(t, page.NotifyLate)
		require.Zero(t, page.GroupSeconds)
	})
}

// TestChannelReport: a channel's report is weekly, monthly or absent; a
// PATCH changes it and null stops it; any other value, an empty one, and
// a report on a kind that takes none are 400s naming report, and nothing
// is stored.
func TestChannelReport(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		hook := map[string]any{"url": "https://hooks.example.com/vigil"}
		r := b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "webhook", "name": "hook", "config": hook})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		require.NotContains(t, string(r.body), `"report"`, "absent when none")
		var ch api.Channel
		r.json(t, &ch)

		r = b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "email", "name": "mail",
			"config": map[string]any{"to": []string{"team@example.com"}}, "report": "monthly"})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		var mail api.Channel
		r.json(t, &mail)
		require.Equal(t, "monthly", mail.Report)

		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"report": "weekly"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &ch)
		require.Equal(t, "weekly", ch.Report)
		r = b.do(http.MethodGet, "/api/v1/channels/"+ch.ID, b.ro, nil)
		r.json(t, &ch)
		require.Equal(t, "weekly", ch.Report)
		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"name": "hook 2"})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		r.json(t, &ch)
		require.Equal(t, "weekly", ch.Report, "a PATCH without report keeps it")

		pd := map[string]any{"routing_key": "R0123456789abcdef0123456789abcdef"}
		for _, c := range []struct {
			method, path string
			body         map[string]any
		}{
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": hook, "report": "daily"}},
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": hook, "report": ""}},
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": hook, "report": nil}},
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "pagerduty", "name": "pd", "config": pd, "report": "weekly"}},
			{http.MethodPost, "/api/v1/channels", map[string]any{"kind": "discord", "name": "d", "report": "weekly",
				"config": map[string]any{"webhook_url": "https://discord.com/api/webhooks/1/x"}}},
			{http.MethodPatch, "/api/v1/channels/" + ch.ID, map[string]any{"report": "Weekly"}},
			{http.MethodPatch, "/api/v1/channels/" + ch.ID, map[string]any{"report": ""}},
		} {
			r := b.do(c.method, c.path, b.rw, c.body)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", c.body, r.body)
			var e api.Error
			r.json(t, &e)
			require.Equal(t, "report", e.Field, "%s", r.body)
		}
		got, err := b.store.ChannelGet(t.Context(), b.prj.ID, ch.ID)
		require.NoError(t, err)
		require.Equal(t, monitors.ReportWeekly, got.Report, "a refused PATCH changes nothing")
		list, err := b.store.ChannelList(t.Context(), &monitors.ChannelListParams{ProjectID: b.prj.ID})
		require.NoError(t, err)
		require.Len(t, list, 2, "no refused channel was stored")

		r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"report": nil})
		require.Equal(t, http.StatusOK, r.status, "%s", r.body)
		require.NotContains(t, string(r.body), `"report"`, "null stops the reports")
		got, err = b.store.ChannelGet(t.Context(), b.prj.ID, ch.ID)
		require.NoError(t, err)
		require.Equal(t, monitors.ReportNone, got.Report)
	})
}
