package ntfy_test

import (
	"context"
	"mime"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/ntfy"
)

const (
	topic = "vigil-alerts-8f2k1q"
	token = "tk_AgQdq7mVBoFD37zQVN29RhuMzNIz2"
)

func published(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"id":"sPs71M8A2T","time":1773450302,"event":"message","topic":"` + topic + `"}`))
}

func newNotifier(t *testing.T, serverURL, tok string) *ntfy.Notifier {
	t.Helper()
	n, err := ntfy.New(ntfy.Config{URL: serverURL + "/" + topic, Token: tok},
		notifiers.WithHTTPClient(notifiertest.HTTPClient(t)))
	require.NoError(t, err)
	return n
}

func TestOpenedAndResolved(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, published)
	nt := newNotifier(t, recv.URL, token)
	require.NoError(t, nt.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, nt.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, "/"+topic, req.Path)
		require.Equal(t, "Bearer "+token, req.Header.Get("Authorization"))
		require.Equal(t, "text/plain; charset=utf-8", req.Header.Get("Content-Type"))
		require.Equal(t, "https://vigil.example.com/monitors/mon_7f3a", req.Header.Get("Click"))
	}

	opened := reqs[0]
	require.Equal(t, "DOWN nightly-import: missed", opened.Header.Get("Title"))
	require.Equal(t, "urgent", opened.Header.Get("Priority"))
	require.Equal(t, "rotating_light,etl,billing", opened.Header.Get("Tags"))
	require.Equal(t, "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)\n\n"+
		"Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.\n\n"+
		"Schedule: 0 2 * * * (Europe/Berlin)\nExpected: 2026-03-14 01:00 UTC\nLast ping: 2026-03-13 01:00 UTC\n"+
		"Opened: 2026-03-14 01:05 UTC\nTags: etl, billing", string(opened.Body))

	resolved := reqs[1]
	require.Equal(t, "UP nightly-import: recovered after 12m", resolved.Header.Get("Title"))
	require.Equal(t, "default", resolved.Header.Get("Priority"))
	require.Equal(t, "white_check_mark,etl,billing", resolved.Header.Get("Tags"))
	require.Contains(t, string(resolved.Body), "Downtime: 12m")
}

func TestWithoutTokenAndNonASCIITitle(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, published)
	n := notifiertest.Notification(notifiers.EventReminder)
	n.Monitor.Name = "Nächtlicher Import"
	require.NoError(t, newNotifier(t, recv.URL, "").Notify(context.Background(), n))
	req := recv.Only(t)
	require.Empty(t, req.Header.Get("Authorization"))
	require.Equal(t, "high", req.Header.Get("Priority"))
	title := req.Header.Get("Title")
	require.NotEqual(t, "STILL DOWN Nächtlicher Import: missed, down for 2h", title, "non-ASCII is RFC 2047 encoded")
	decoded, err := new(mime.WordDecoder).DecodeHeader(title)
	require.NoError(t, err)
	require.Equal(t, "STILL DOWN Nächtlicher Import: missed, down for 2h", decoded)
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier { return newNotifier(t, serverURL, token) },
		token, topic)
}

func TestForbiddenIsPermanentAndRedacted(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"code":40301,"http":403,"error":"forbidden for ` + r.URL.Path + `","link":"https://ntfy.sh/docs/publish/#authentication"}`))
	})
	err := newNotifier(t, recv.URL, token).Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err))
	require.Contains(t, err.Error(), "publish ntfy message: HTTP 403 Forbidden")
	notifiertest.AssertNoSecretLeak(t, err, token, topic)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&ntfy.Config{URL: "https://ntfy.sh/" + topic}).Validate())
	require.NoError(t, (&ntfy.Config{URL: "https://example.com/ntfy/" + topic + "/", Token: token}).Validate())
	cases := map[string]ntfy.Config{
		"url: must be set": {},
		"url: must include the topic, like https://ntfy.sh/my-topic":                              {URL: "https://ntfy.sh/"},
		"url: the topic must be 1 to 64 letters, digits, - or _":                                  {URL: "https://ntfy.sh/a.b"},
		"url: must not have a query or fragment; set the token in token":                          {URL: "https://ntfy.sh/topic?auth=x"},
		"token: must not contain spaces or control characters":                                    {URL: "https://ntfy.sh/topic", Token: "tk one"},
		"url: must be an https or http URL\ntoken: must not contain spaces or control characters": {URL: "ntfy.sh/topic", Token: "a b"},
	}
	for want, cfg := range cases {
		require.EqualError(t, cfg.Validate(), want)
	}
}
