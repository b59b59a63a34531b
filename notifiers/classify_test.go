package notifiers_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

func TestClassifyHTTP(t *testing.T) {
	t.Parallel()
	notifiertest.RunClassifyHTTP(t, notifiertest.StatusTable(), notifiers.ClassifyHTTP)
}

func TestClassifyHTTPOverTheWire(t *testing.T) {
	t.Parallel()
	// The same table through a real server and the client every kind uses.
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier {
			return notifierFunc(func(ctx context.Context, _ *notifiers.Notification) error {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, serverURL+"/hook/s3cret", strings.NewReader("{}"))
				require.NoError(t, err)
				return notifiers.SendHTTP(notifiertest.HTTPClient(t), req, "s3cret")
			})
		}, "s3cret")
}

type notifierFunc func(ctx context.Context, n *notifiers.Notification) error

func (f notifierFunc) Notify(ctx context.Context, n *notifiers.Notification) error { return f(ctx, n) }

func TestClassifyHTTPBodySnippet(t *testing.T) {
	t.Parallel()
	body := "upstream\nfailed:\tsee https://hooks.example.com/services/T000/B000/XXXX?token=abc for\x00details " +
		strings.Repeat("x", 500)
	resp := &http.Response{StatusCode: http.StatusBadRequest, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
	err := notifiers.ClassifyHTTP(resp)
	require.True(t, notifiers.IsPermanent(err))
	var status *notifiers.HTTPStatusError
	require.ErrorAs(t, err, &status)
	require.True(t, strings.HasPrefix(status.Body, "upstream failed: see https://hooks.example.com/[redacted] for details xxx"), status.Body)
	require.LessOrEqual(t, len([]rune(status.Body)), notifiers.BodySnippetMax+1)
	require.NotContains(t, err.Error(), "T000")
	require.NotContains(t, err.Error(), "token=abc")
	require.True(t, strings.HasPrefix(err.Error(), "HTTP 400 Bad Request: upstream failed"), err.Error())
}

func TestClassifyHTTPRetryAfterVariants(t *testing.T) {
	t.Parallel()
	date := time.Date(2026, 3, 14, 1, 5, 0, 0, time.UTC)
	cases := []struct {
		name     string
		header   http.Header
		wantOK   bool
		wantWait time.Duration
	}{
		{"zero seconds", http.Header{"Retry-After": {"0"}}, true, 0},
		{"past date", http.Header{"Retry-After": {date.Add(-time.Minute).Format(http.TimeFormat)}, "Date": {date.Format(http.TimeFormat)}}, true, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, false, 0},
		{"negative", http.Header{"Retry-After": {"-5"}}, false, 0},
		{"huge is capped", http.Header{"Retry-After": {"99999999999"}}, true, 365 * 24 * time.Hour},
		{"fraction rounds up", http.Header{"Retry-After": {"1.2"}}, true, 2 * time.Second},
		{"not a number", http.Header{"Retry-After": {"NaN"}}, false, 0},
		{"exponent", http.Header{"Retry-After": {"1e3"}}, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: c.header, Body: http.NoBody}
			err := notifiers.ClassifyHTTP(resp)
			require.Error(t, err)
			require.False(t, notifiers.IsPermanent(err))
			wait, ok := notifiers.RetryAfter(err)
			require.Equal(t, c.wantOK, ok)
			require.Equal(t, c.wantWait, wait)
		})
	}
}

func TestPermanentAndRetryable(t *testing.T) {
	t.Parallel()
	require.NoError(t, notifiers.Permanent(nil))
	require.NoError(t, notifiers.Retryable(nil, time.Second))
	require.False(t, notifiers.IsPermanent(nil))

	base := errors.New("boom")
	require.False(t, notifiers.IsPermanent(base), "errors are retryable by default")
	_, ok := notifiers.RetryAfter(base)
	require.False(t, ok)

	perm := fmt.Errorf("send: %w", notifiers.Permanent(base))
	require.True(t, notifiers.IsPermanent(perm))
	require.ErrorIs(t, perm, base)
	require.Equal(t, "send: boom", perm.Error(), "Permanent does not change the text")

	retry := fmt.Errorf("send: %w", notifiers.Retryable(base, 90*time.Second))
	require.False(t, notifiers.IsPermanent(retry))
	wait, ok := notifiers.RetryAfter(retry)
	require.True(t, ok)
	require.Equal(t, 90*time.Second, wait)
	require.Equal(t, "send: boom", retry.Error())

	wait, ok = notifiers.RetryAfter(notifiers.Retryable(base, -time.Second))
	require.True(t, ok)
	require.Zero(t, wait)

	_, ok = notifiers.RetryAfter(notifiers.Permanent(notifiers.Retryable(base, time.Second)))
	require.False(t, ok, "a permanent error has no retry wait")
}

func TestRedactError(t *testing.T) {
	t.Parallel()
	const token = "xoxb-1234-SECRET"
	secretURL := "https://hooks.slack.com/services/T0/B0/" + token
	urlErr := &url.Error{Op: "Post", URL: secretURL, Err: context.DeadlineExceeded}
	err := fmt.Errorf("failed to post webhook: %w", urlErr)

	red := notifiers.RedactError(err, token)
	require.Equal(t, `failed to post webhook: Post "https://hooks.slack.com/[redacted]": context deadline exceeded`, red.Error())
	require.ErrorIs(t, red, context.DeadlineExceeded)
	require.False(t, notifiers.IsPermanent(red))
	notifiertest.AssertNoSecretLeak(t, red, token, secretURL, "services/T0")
	var ue *url.Error
	require.False(t, errors.As(red, &ue), "the original chain is not reachable")

	status := notifiers.Retryable(&notifiers.HTTPStatusError{StatusCode: 429, Body: "bad token " + token}, time.Minute)
	red = notifiers.RedactError(fmt.Errorf("post: %w", status), token)
	require.Equal(t, "post: HTTP 429 Too Many Requests: bad token [redacted]", red.Error())
	wait, ok := notifiers.RetryAfter(red)
	require.True(t, ok)
	require.Equal(t, time.Minute, wait)
	var se *notifiers.HTTPStatusError
	require.ErrorAs(t, red, &se)
	require.Equal(t, 429, se.StatusCode)
	notifiertest.AssertNoSecretLeak(t, red, token)

	red = notifiers.RedactError(notifiers.Permanent(errors.New("key "+url.QueryEscape("a b/c")+" refused")), "a b/c")
	require.True(t, notifiers.IsPermanent(red))
	require.Equal(t, "key [redacted] refused", red.Error())

	require.NoError(t, notifiers.RedactError(nil, token))
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://hooks.slack.com/services/T/B/X":       "https://hooks.slack.com/[redacted]",
		"https://user:pass@example.com/":               "https://example.com/[redacted]",
		"https://example.com":                          "https://example.com",
		"https://example.com/?token=abc":               "https://example.com/[redacted]",
		"http://127.0.0.1:8080/bot123:ABC/sendMessage": "http://127.0.0.1:8080/[redacted]",
		"not a url": "[redacted]",
	}
	for in, want := range cases {
		require.Equal(t, want, notifiers.RedactURL(in), in)
	}
}

func TestAttemptContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := notifiers.AttemptContext(context.Background(), 0)
		defer cancel()
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		require.Equal(t, notifiers.AttemptTimeoutDefault, time.Until(deadline))
		<-ctx.Done() // the bubble's clock jumps to the deadline
		err := notifiers.AttemptError(ctx, fmt.Errorf("send: %w", ctx.Err()))
		require.ErrorIs(t, err, notifiers.ErrAttemptTimeout)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.False(t, notifiers.IsPermanent(err))
		require.Equal(t, "send: context deadline exceeded (notifiers: attempt timed out)", err.Error())

		require.NoError(t, notifiers.AttemptError(ctx, nil))
		plain := errors.New("x")
		require.Equal(t, plain, notifiers.AttemptError(context.Background(), plain))
	})
}

func TestURLSecrets(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{
		"https://example.com/hook/a%20b?token=x",
		"/hook/a%20b", "/hook/a b",
		"/hook/a%20b?token=x",
		"token=x",
	}, notifiers.URLSecrets("https://example.com/hook/a%20b?token=x"))
	require.Equal(t, []string{"https://example.com/"}, notifiers.URLSecrets("https://example.com/"))

	err := notifiers.RedactError(errors.New(`401 for /hook/a%20b?token=x and "/hook/a b"`),
		notifiers.URLSecrets("https://example.com/hook/a%20b?token=x")...)
	require.Equal(t, `401 for [redacted] and "[redacted]"`, err.Error())
}
