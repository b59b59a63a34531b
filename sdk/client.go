package sdk

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	// TimeoutDefault bounds each HTTP request to Vigil.
	TimeoutDefault = 10 * time.Second
	// RetriesDefault is how many times a request is tried again after a
	// network error, a timeout, a 5xx or a 429.
	RetriesDefault = 2
	// BackoffDefault is the wait before the first retry of a request; it
	// doubles before each further retry (250 ms, then 500 ms).
	BackoffDefault = 250 * time.Millisecond
	// BodyLimit is the largest body a ping sends: Vigil's default storage
	// limit. Longer bodies keep their last BodyLimit bytes.
	BodyLimit = 100 << 10
)

// userAgent identifies the SDK to Vigil.
const userAgent = "vigil-go-sdk/1"

// A Client talks to one Vigil server. It is safe for concurrent use.
//
// Every call is bounded: each HTTP request by the timeout ([WithTimeout],
// default 10 s), each call by 1 + retries requests ([WithRetries], default 2)
// with a short backoff between them ([BackoffDefault]). The worst case of one
// ping is therefore timeout × (retries + 1) + the backoffs: 10 s × 3 + 0.75 s
// = 30.75 s with the defaults, and about 0.75 s when Vigil refuses
// connections. A 429's Retry-After is honoured, up to the timeout.
type Client struct {
	base       *url.URL
	baseErr    error
	httpClient *http.Client
	apiKey     string
	timeout    time.Duration
	retries    int
	backoff    time.Duration
	logger     *slog.Logger
	now        func() time.Time
	sleep      func(ctx context.Context, d time.Duration) error
	advice     adviceLog
}

// An Option configures a [Client].
type Option func(*Client)

// WithHTTPClient sets the HTTP client used for every request (default: a
// new http.Client with no timeout of its own; [WithTimeout] bounds each
// request).
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.httpClient = hc
		}
	}
}

// WithAPIKey sets the project API key that [Client.Declare] sends as
// "Authorization: Bearer". Pings need no key.
func WithAPIKey(key string) Option {
	return func(c *Client) { c.apiKey = key }
}

// WithTimeout bounds each HTTP request (default [TimeoutDefault]). Values
// of zero or less keep the default.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithRetries sets how many times a failed request is tried again (default
// [RetriesDefault]; 0 sends each request once).
func WithRetries(n int) Option {
	return func(c *Client) { c.retries = max(n, 0) }
}

// WithBackoff sets the wait before the first retry of a request (default
// [BackoffDefault]); it doubles for each further retry.
func WithBackoff(d time.Duration) Option {
	return func(c *Client) { c.backoff = max(d, 0) }
}

// WithLogger sets where the SDK logs Vigil's failures (default
// slog.Default()). A ping that cannot be delivered is logged, never
// returned as a job's error.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithNowFunc sets the clock used to measure run durations (default
// time.Now).
func WithNowFunc(now func() time.Time) Option {
	return func(c *Client) {
		if now != nil {
			c.now = now
		}
	}
}

// WithSleepFunc sets how the client waits: between the tries of one request
// and, in [Client.RunWithRetries], between the attempts of a job. It must
// return early with ctx's error when ctx is done. Tests pass one that
// records the waits and returns at once.
func WithSleepFunc(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) {
		if sleep != nil {
			c.sleep = sleep
		}
	}
}

// New returns a client for the Vigil server at baseURL, such as
// "https://vigil.example.com". A bad baseURL is reported by each call as
// [ErrInvalid], so that monitoring can never stop a program from starting.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{
		httpClient: &http.Client{},
		timeout:    TimeoutDefault,
		retries:    RetriesDefault,
		backoff:    BackoffDefault,
		logger:     slog.Default(),
		now:        time.Now,
		sleep:      sleepCtx,
	}
	c.base, c.baseErr = parseBaseURL(baseURL)
	for _, o := range opts {
		o(c)
	}
	return c
}

func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil {
		return nil, invalidf("base URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, invalidf("base URL %q: want http:// or https:// and a host", s)
	}
	return u, nil
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// endpoint joins path segments (already escaped) to the base URL.
func (c *Client) endpoint(escapedPath string) (*url.URL, error) {
	if c.baseErr != nil {
		return nil, c.baseErr
	}
	u := *c.base
	u.RawPath = ""
	u.Path = ""
	raw := strings.TrimRight(c.base.EscapedPath(), "/") + escapedPath
	p, err := url.PathUnescape(raw)
	if err != nil {
		return nil, invalidf("path %q: %v", raw, err)
	}
	u.Path, u.RawPath = p, raw
	return &u, nil
}

// request is one HTTP exchange that do may try several times.
type request struct {
	method string
	url    *url.URL
	body   []byte
	ctype  string
	auth   bool
}

// response is what do returns on a 2xx answer.
type response struct {
	status int
	body   []byte
	header http.Header
}

// do sends r, retrying network errors, timeouts, 5xx and 429 up to
// c.retries times with a doubling backoff. Other answers are final.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	var lastErr error
	for try := 0; ; try++ {
		resp, retryAfter, err := c.once(ctx, r)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if !retryable(err) || try >= c.retries || ctx.Err() != nil {
			return nil, lastErr
		}
		wait := c.backoff << try
		if retryAfter > 0 {
			wait = min(retryAfter, c.timeout)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, lastErr
		}
	}
}

func retryable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrRateLimited)
}

// once makes one HTTP request bounded by c.timeout.
func (c *Client) once(ctx context.Context, r request) (*response, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url.String(), body)
	if err != nil {
		return nil, 0, invalidf("build request: %v", err)
	}
	req.Header.Set("User-Agent", userAgent)
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	if r.auth {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		// url.Error repeats the URL, which holds the ping key: keep only
		// the cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, 0, fmt.Errorf("%w: %s %s: %w", ErrUnavailable, r.method, redact(r.url), err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: read answer to %s %s: %v", ErrUnavailable, r.method, redact(r.url), err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return &response{status: resp.StatusCode, body: data, header: resp.Header}, 0, nil
	}
	var sentinel error
	var retryAfter time.Duration
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound:
		sentinel = ErrNotFound
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		sentinel = ErrUnauthorized
	case code == http.StatusTooManyRequests:
		sentinel = ErrRateLimited
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			retryAfter = time.Duration(s) * time.Second
		}
	case code == http.StatusRequestTimeout || code >= 500:
		sentinel = ErrUnavailable
	default:
		sentinel = ErrBadRequest
	}
	return nil, retryAfter, fmt.Errorf("%w: %s %s: %d %s", sentinel, r.method, redact(r.url), resp.StatusCode, message(data))
}

// message extracts Vigil's explanation from an error answer: the "error"
// field of a JSON body, or the first line of a text one.
func message(data []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != "" {
		return e.Error
	}
	s := strings.TrimSpace(string(data))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// redact shows a URL without the ping key or project ping key, which work
// like passwords: only the path segment after "ping" is kept as "…".
func redact(u *url.URL) string {
	segs := strings.Split(u.EscapedPath(), "/")
	for i := range segs {
		if i > 0 && segs[i-1] == "ping" {
			segs[i] = "…"
		}
	}
	return u.Scheme + "://" + u.Host + strings.Join(segs, "/")
}

// NewRunID returns a fresh random (version 4) UUID to use as a run id.
func NewRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// Logger is the client's logger, for integrations that report through it.
func (c *Client) Logger() *slog.Logger { return c.logger }

// Now reads the client's clock ([WithNowFunc]).
func (c *Client) Now() time.Time { return c.now() }
