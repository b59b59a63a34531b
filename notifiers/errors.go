package notifiers

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ErrPrivateTarget is wrapped by the error of a connection that the client
// from [NewHTTPClient] refused because the target address is loopback,
// private or otherwise internal. It is always permanent.
var ErrPrivateTarget = errors.New("notifiers: target address is not public")

// ErrAttemptTimeout is the cause of the context of an attempt that ran out
// of time. Such an error is retryable.
var ErrAttemptTimeout = errors.New("notifiers: attempt timed out")

// AttemptTimeoutDefault bounds one delivery attempt when the kind is not
// given another timeout.
const AttemptTimeoutDefault = 30 * time.Second

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying: bad configuration, a 4xx
// answer, a template that fails, an address that is refused. Permanent(nil)
// is nil. The error text is unchanged.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked with
// [Permanent]. Every other non-nil error is retryable.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// RetryableError is a retryable error that carries how long the receiver
// asked us to wait before the next attempt (an HTTP Retry-After, a
// rate-limit answer). Errors that are not permanent are retryable anyway;
// this type exists for the wait.
type RetryableError struct {
	Err error
	// RetryAfter is the wait the receiver asked for. Zero means "now".
	RetryAfter time.Duration
}

func (e *RetryableError) Error() string { return e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// Retryable returns err as retryable after the given wait. Retryable(nil, d)
// is nil; a negative wait counts as zero.
func Retryable(err error, after time.Duration) error {
	if err == nil {
		return nil
	}
	return &RetryableError{Err: err, RetryAfter: max(after, 0)}
}

// RetryAfter reports the wait carried by a [RetryableError] in err's chain,
// and whether there was one. A permanent error reports none.
func RetryAfter(err error) (time.Duration, bool) {
	if IsPermanent(err) {
		return 0, false
	}
	var r *RetryableError
	if errors.As(err, &r) {
		return r.RetryAfter, true
	}
	return 0, false
}

// HTTPStatusError is an HTTP answer that was not a success, as classified by
// [ClassifyHTTP]. The delivery log can record StatusCode; Body is a short,
// single-line piece of the response body with URLs removed.
type HTTPStatusError struct {
	StatusCode int
	Body       string
}

func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("HTTP %d", e.StatusCode)
	if text := httpStatusText(e.StatusCode); text != "" {
		msg += " " + text
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// redactedError holds a scrubbed message and the secret-free errors of the
// original chain that callers test for with errors.Is and errors.As.
type redactedError struct {
	msg   string
	kinds []error
}

func (e *redactedError) Error() string   { return e.msg }
func (e *redactedError) Unwrap() []error { return e.kinds }

// Redacted is the text that replaces a secret.
const Redacted = "[redacted]"

// RedactError returns an error with the text of err, where each secret and
// every URL has been replaced ([RedactURL] keeps a URL's scheme and host),
// and every IP address too ([RedactAddresses]): the error is shown to
// whoever set the channel up, through a test or the delivery log, and the
// addresses a name resolves to inside our network are not theirs to learn.
// The result keeps what the delivery layer decides on: [IsPermanent],
// [RetryAfter], an [*HTTPStatusError], and errors.Is for
// [context.Canceled], [context.DeadlineExceeded], [ErrAttemptTimeout] and
// [ErrPrivateTarget]. It does not wrap err itself, so nothing in the
// original chain (a *url.Error with the full URL, say) can be reached
// through it. RedactError(nil) is nil.
func RedactError(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	out := &redactedError{msg: RedactAddresses(RedactString(err.Error(), secrets...))}
	for _, sentinel := range []error{context.Canceled, context.DeadlineExceeded, ErrAttemptTimeout, ErrPrivateTarget} {
		if errors.Is(err, sentinel) {
			out.kinds = append(out.kinds, sentinel)
		}
	}
	var status *HTTPStatusError
	if errors.As(err, &status) {
		out.kinds = append(out.kinds, &HTTPStatusError{
			StatusCode: status.StatusCode,
			Body:       RedactAddresses(RedactString(status.Body, secrets...)),
		})
	}
	var result error = out
	if after, ok := RetryAfter(err); ok {
		result = &RetryableError{Err: result, RetryAfter: after}
	}
	if IsPermanent(err) {
		result = Permanent(result)
	}
	return result
}

// AddressRedacted is the text that replaces an IP address.
const AddressRedacted = "[address]"

// addressCandidate matches what might be an IP address, with its port:
// 10.1.2.3:443, [fd00::1]:80, ::1.
var addressCandidate = regexp.MustCompile(`\[[0-9A-Fa-f:.%a-z]+\](?::\d+)?|[0-9A-Fa-f]*[:.][0-9A-Fa-f:.]*[0-9A-Fa-f](?:%[\w.-]+)?`)

// RedactAddresses replaces every IP address in s (with its port, if any)
// by [AddressRedacted].
func RedactAddresses(s string) string {
	return addressCandidate.ReplaceAllStringFunc(s, func(m string) string {
		if _, err := netip.ParseAddrPort(m); err == nil {
			return AddressRedacted
		}
		if a, err := netip.ParseAddr(strings.Trim(m, "[]")); err == nil && (a.Is4() || strings.Count(m, ":") >= 2) {
			return AddressRedacted
		}
		// "10.1.2.3:443" with a port: try the address before the last colon.
		if i := strings.LastIndexByte(m, ':'); i > 0 {
			if a, err := netip.ParseAddr(m[:i]); err == nil && a.Is4() {
				return AddressRedacted
			}
		}
		return m
	})
}

var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`)

// RedactString replaces every secret in s, and every URL (keeping only its
// scheme and host), with [Redacted]; a secret that is a URL keeps its
// scheme and host too. Secrets are also matched in their
// URL-escaped forms. Empty secrets are ignored.
func RedactString(s string, secrets ...string) string {
	// Longest first, so that a secret that contains another goes whole.
	secrets = slices.Clone(secrets)
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		replacement := Redacted
		if urlPattern.MatchString(secret) && urlPattern.FindString(secret) == secret {
			replacement = RedactURL(secret) // keep the host: it helps and is no secret
		}
		for _, form := range []string{secret, url.PathEscape(secret), url.QueryEscape(secret)} {
			s = strings.ReplaceAll(s, form, replacement)
		}
	}
	return urlPattern.ReplaceAllStringFunc(s, RedactURL)
}

// RedactURL keeps the scheme and host of a URL and replaces its user
// information, path and query with [Redacted]: the path of a Slack, Discord
// or Teams webhook is its credential. Text that does not parse as a URL is
// replaced whole.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return Redacted
	}
	host := u.Host
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	out := u.Scheme + "://" + host
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		out += "/" + Redacted
	}
	return out
}

// AttemptContext returns ctx bounded by timeout (or [AttemptTimeoutDefault]
// when timeout is not positive), with [ErrAttemptTimeout] as the cause when
// it runs out.
func AttemptContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		timeout = AttemptTimeoutDefault
	}
	return context.WithTimeoutCause(ctx, timeout, ErrAttemptTimeout)
}

// AttemptError adds the cause of ctx to err when ctx ended: an attempt that
// ran out of time then reads "...: notifiers: attempt timed out" and
// matches [ErrAttemptTimeout]. Other errors are returned unchanged.
func AttemptError(ctx context.Context, err error) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if cause == nil || errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w (%w)", err, cause)
}

// URLSecrets returns the forms in which a secret URL can show up in an
// error: the whole URL, its path with query ("/services/T/B/X?k=v"), its
// path and its query. Pass them to [RedactError] for channels whose URL is
// a credential, since receivers often echo the path they were called on.
// A bare "/" path is left out.
func URLSecrets(raw string) []string {
	out := []string{raw}
	u, err := url.Parse(raw)
	if err != nil {
		return out
	}
	if p := u.EscapedPath(); len(p) > 1 {
		out = append(out, p, u.Path)
	}
	if uri := u.RequestURI(); len(uri) > 1 {
		out = append(out, uri)
	}
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
	}
	return out
}
