package sdk

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// A Monitor says where a ping goes: by ping key ([Key]), by project ping
// key and slug ([Slug]), or by the full ping URL that a declaration returned
// ([PingURL]). The zero Monitor addresses nothing: pinging it fails with
// [ErrInvalid].
type Monitor struct {
	key        string
	projectKey string
	slug       string
	create     bool
	update     bool
	settings   Settings
	pingURL    string
}

// Settings are the settings of a monitor that its pings carry with
// create=1 ([Monitor.WithCreate]), for Vigil to create the monitor with,
// or with update=1 ([Monitor.WithUpdate]), to change it to. The zero
// value of a field sends nothing; Vigil then keeps its default or the
// monitor's current value.
type Settings struct {
	// Schedule is a cron expression (schedule), in TZ (tz, an IANA zone;
	// Vigil's default is UTC), read as Dialect says (dialect: cronie,
	// robfig or quartz; Vigil's default is cronie).
	Schedule, TZ, Dialect string
	// Every is the period of an interval schedule (every, sent in whole
	// seconds, rounded up), instead of Schedule.
	Every time.Duration
	// Grace is how late a run may be (grace); MaxRuntime how long a run
	// may take before it is stuck (max_runtime). Sent in whole seconds,
	// rounded up.
	Grace, MaxRuntime time.Duration
}

// WithSettings returns a copy of m whose pings carry s, when they also
// carry create=1 or update=1.
func (m Monitor) WithSettings(s Settings) Monitor {
	m.settings = s
	return m
}

// WithUpdate returns a copy of m whose pings carry update=1: Vigil changes
// the monitor to the settings of [Monitor.WithSettings] the pings carry.
// Without it, the settings are used only when a ping creates the monitor.
func (m Monitor) WithUpdate() Monitor {
	m.update = true
	return m
}

// Key addresses a monitor by its ping key (a UUID): /ping/{key}.
func Key(pingKey string) Monitor { return Monitor{key: pingKey} }

// Slug addresses a monitor by its project's ping key and its slug:
// /ping/{projectPingKey}/{slug}. See [Monitor.WithCreate].
func Slug(projectPingKey, slug string) Monitor {
	return Monitor{projectKey: projectPingKey, slug: slug}
}

// PingURL addresses a monitor by its full ping URL, as returned in
// [DeclaredMonitor.PingURL]. The suffix (/start, /fail, …) is appended to
// it; the client's base URL is not used.
func PingURL(u string) Monitor { return Monitor{pingURL: strings.TrimRight(u, "/")} }

// WithCreate returns a copy of a [Slug] monitor whose pings carry
// ?create=1, so that Vigil creates the monitor on its first ping.
func (m Monitor) WithCreate() Monitor {
	m.create = true
	return m
}

// IsZero reports whether m addresses nothing.
func (m Monitor) IsZero() bool { return m == Monitor{} }

// String names the monitor for logs without its keys, which work like
// passwords.
func (m Monitor) String() string {
	switch {
	case m.slug != "":
		return "slug " + m.slug
	case m.key != "":
		return "key " + shorten(m.key)
	case m.pingURL != "":
		return "ping URL …/" + shorten(m.pingURL[strings.LastIndexByte(m.pingURL, '/')+1:])
	}
	return "no monitor"
}

func shorten(s string) string {
	if len(s) > 8 {
		return s[:8] + "…"
	}
	return s
}

// A Kind is what a ping says about a run. See PROTOCOL.md §1.
type Kind string

// The kinds of ping.
const (
	KindStart   Kind = "start"   // a run started
	KindSuccess Kind = "success" // the run succeeded
	KindFail    Kind = "fail"    // the run, or this attempt, failed
	KindLog     Kind = "log"     // a message only; no change of state
	KindSkip    Kind = "skip"    // the occurrence chose to do nothing
	KindCancel  Kind = "cancel"  // the run was interrupted by its host and will not finish
	KindExit    Kind = "exit"    // the run ended with PingOptions.ExitCode: 0 is success, else fail
)

// PingOptions are a ping's optional parameters. The zero value sends none.
type PingOptions struct {
	// RID is the run id that ties a start to its finish (up to 64
	// printable characters; a UUID from [NewRunID] is typical).
	RID string
	// Attempt is 1 for the first execution of an occurrence, 2 for its
	// first retry, and so on. 0 sends none.
	Attempt int
	// RetryIn, on a fail, says that the scheduler will retry this
	// occurrence after this long. It is sent in whole seconds, rounded up.
	RetryIn time.Duration
	// RetryAt, on a fail, says when the scheduler will retry.
	RetryAt time.Time
	// ScheduledAt is the scheduled fire time of the occurrence the run
	// belongs to (sent as scheduled_at, to the second). It keeps the runs
	// and retry chains of different occurrences apart, so that a retry of
	// 01:00 running at 02:10 is not taken for the 02:00 run. The zero time
	// sends none.
	ScheduledAt time.Time
	// ExitCode is the exit status sent by a [KindExit] ping, 0..255.
	ExitCode int
	// DurationMS is the run's duration as the client measured it. 0 sends
	// none.
	DurationMS int64
	// Body is the run's output or message. Longer than [BodyLimit], only
	// its end is sent.
	Body []byte
}

// Ping sends one ping of kind for m. opts may be nil.
//
// The request is bounded as described on [Client]. Success and the kinds
// other than exit go to /ping/{key}/{kind} (success to the bare
// /ping/{key}); KindExit goes to /ping/{key}/{code}. Every ping is a POST,
// which Vigil and Healthchecks both accept with or without a body.
func (c *Client) Ping(ctx context.Context, m Monitor, kind Kind, opts *PingOptions) error {
	if opts == nil {
		opts = &PingOptions{}
	}
	u, err := c.pingURL(m, kind, opts)
	if err != nil {
		return fmt.Errorf("ping %s: %w", kind, err)
	}
	body := opts.Body
	if len(body) > BodyLimit {
		body = body[len(body)-BodyLimit:]
	}
	resp, err := c.do(ctx, request{method: "POST", url: u, body: body, ctype: "text/plain; charset=utf-8"})
	if err != nil {
		return fmt.Errorf("ping %s: %w", kind, err)
	}
	c.warn(m.address(), m.String(), resp.header.Values(WarningHeader))
	return nil
}

// pingURL builds the URL of a ping.
func (c *Client) pingURL(m Monitor, kind Kind, opts *PingOptions) (*url.URL, error) {
	var suffix string
	switch kind {
	case KindSuccess:
	case KindStart, KindFail, KindLog, KindSkip, KindCancel:
		suffix = "/" + string(kind)
	case KindExit:
		if opts.ExitCode < 0 || opts.ExitCode > 255 {
			return nil, invalidf("exit code %d: want 0..255", opts.ExitCode)
		}
		suffix = "/" + strconv.Itoa(opts.ExitCode)
	default:
		return nil, invalidf("unknown ping kind %q", kind)
	}
	if len(opts.RID) > 64 {
		return nil, invalidf("rid: longer than 64 characters")
	}
	if opts.Attempt < 0 {
		return nil, invalidf("attempt %d: want 1 or more", opts.Attempt)
	}

	var u *url.URL
	var err error
	switch {
	case m.pingURL != "":
		u, err = url.Parse(m.pingURL + suffix)
		if err == nil && (u.Scheme != "http" && u.Scheme != "https" || u.Host == "") {
			err = fmt.Errorf("want an http:// or https:// URL")
		}
		if err != nil {
			return nil, invalidf("ping URL: %v", err)
		}
	case m.key != "":
		u, err = c.endpoint("/ping/" + url.PathEscape(m.key) + suffix)
	case m.projectKey != "" && m.slug != "":
		u, err = c.endpoint("/ping/" + url.PathEscape(m.projectKey) + "/" + url.PathEscape(m.slug) + suffix)
	default:
		return nil, invalidf("no monitor: use Key, Slug or PingURL")
	}
	if err != nil {
		return nil, err
	}

	q := u.Query()
	if opts.RID != "" {
		q.Set("rid", opts.RID)
	}
	if opts.Attempt > 0 {
		q.Set("attempt", strconv.Itoa(opts.Attempt))
	}
	if opts.RetryIn > 0 {
		q.Set("retry_in", strconv.FormatInt(int64(math.Ceil(opts.RetryIn.Seconds())), 10))
	}
	if !opts.RetryAt.IsZero() {
		// Rounded up to the second: Vigil must not expect the retry early.
		at := opts.RetryAt.UTC()
		if t := at.Truncate(time.Second); !t.Equal(at) {
			at = t.Add(time.Second)
		}
		q.Set("retry_at", at.Format(time.RFC3339))
	}
	if !opts.ScheduledAt.IsZero() {
		q.Set("scheduled_at", opts.ScheduledAt.UTC().Format(time.RFC3339))
	}
	if opts.DurationMS > 0 {
		q.Set("duration_ms", strconv.FormatInt(opts.DurationMS, 10))
	}
	create := m.create && m.slug != ""
	if create {
		q.Set("create", "1")
	}
	if m.update {
		q.Set("update", "1")
	}
	if create || m.update {
		st := m.settings
		set := func(name, v string) {
			if v != "" {
				q.Set(name, v)
			}
		}
		secs := func(name string, d time.Duration) {
			if d > 0 {
				set(name, strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10))
			}
		}
		set("schedule", st.Schedule)
		set("tz", st.TZ)
		set("dialect", st.Dialect)
		secs("every", st.Every)
		secs("grace", st.Grace)
		secs("max_runtime", st.MaxRuntime)
	}
	u.RawQuery = q.Encode()
	return u, nil
}
