package notifiers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// BodySnippetMax is how many characters of a response body an
// [HTTPStatusError] keeps.
const BodySnippetMax = 200

// bodyReadMax is how much of a response body ClassifyHTTP reads.
const bodyReadMax = 4 << 10

// ClassifyHTTP turns an HTTP answer into the outcome of an attempt:
//
//   - 2xx: nil.
//   - 429 and 503: retryable, honouring Retry-After (seconds, or an HTTP
//     date taken relative to the answer's own Date header, or to the local
//     clock when it has none).
//   - 408 and every other 5xx: retryable.
//   - everything else (other 4xx, 3xx: redirects are not followed, 1xx):
//     permanent.
//
// A failure is an [*HTTPStatusError] with the status and a short piece of
// the body, without URLs. ClassifyHTTP reads at most a few kilobytes of the
// body and does not close it.
func ClassifyHTTP(resp *http.Response) error {
	code := resp.StatusCode
	if code >= 200 && code <= 299 {
		return nil
	}
	err := &HTTPStatusError{StatusCode: code, Body: bodySnippet(resp.Body)}
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		if after, ok := parseRetryAfter(resp.Header, time.Now); ok {
			return Retryable(err, after)
		}
		return err
	case code == http.StatusRequestTimeout || (code >= 500 && code <= 599):
		return err
	}
	return Permanent(err)
}

// parseRetryAfter reads a Retry-After header: a number of seconds or an
// HTTP date. A date is measured from the response's Date header when it has
// one (the server's clock, so our clock's skew does not matter), otherwise
// from now(). ok is false when there is no usable header.
func parseRetryAfter(h http.Header, now func() time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && v[0] != '+' && !strings.ContainsAny(v, "eEnNxXpP_") {
		// RFC 9110 says whole seconds; some vendors (Discord) send
		// fractions. Round up, so we never come back too early.
		if secs < 0 {
			return 0, false
		}
		const maxSecs = float64(365 * 24 * time.Hour / time.Second)
		return time.Duration(math.Ceil(min(secs, maxSecs))) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	ref := now()
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		ref = date
	}
	return max(at.Sub(ref), 0), true
}

// bodySnippet reads the start of body and makes it one short line without
// URLs or control characters.
func bodySnippet(body io.Reader) string {
	if body == nil {
		return ""
	}
	raw, _ := io.ReadAll(io.LimitReader(body, bodyReadMax))
	text := strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(raw), "?"))
	text = strings.Join(strings.Fields(text), " ")
	text = RedactString(text)
	if runes := []rune(text); len(runes) > BodySnippetMax {
		text = string(runes[:BodySnippetMax]) + "…"
	}
	return text
}

func httpStatusText(code int) string { return http.StatusText(code) }

// SendHTTP makes one request with client, classifies the answer with
// [ClassifyHTTP], drains and closes the body, and redacts every secret from
// the error. Transport errors (connection refused, TLS, timeouts) are
// retryable unless they carry a permanent error, like a refused private
// address.
func SendHTTP(client *http.Client, req *http.Request, secrets ...string) error {
	resp, err := client.Do(req)
	if err != nil {
		return RedactError(AttemptError(req.Context(), fmt.Errorf("send request: %w", err)), secrets...)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, bodyReadMax))
		_ = resp.Body.Close()
	}()
	return RedactError(ClassifyHTTP(resp), secrets...)
}

// NewJSONRequest returns a POST of body encoded as JSON to target, with
// Content-Type application/json and User-Agent Vigil. An error here is a
// bug or a bad URL, so it is permanent; callers redact it.
func NewJSONRequest(ctx context.Context, target string, body any) (*http.Request, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, Permanent(fmt.Errorf("encode request body: %w", err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(raw))
	if err != nil {
		return nil, Permanent(fmt.Errorf("build request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Vigil")
	return req, nil
}
