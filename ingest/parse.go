package ingest

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// Limits of the query parameters (PROTOCOL.md §1). A value past one of them
// is refused with 400 and a sentence naming the parameter.
const (
	// RIDMaxLen is the most characters a run id may have.
	RIDMaxLen = 64
	// AttemptMax is the largest attempt number accepted.
	AttemptMax = 1_000_000
	// RetryMax is the furthest ahead a retry may be announced, by retry_in
	// or retry_at: 30 days. No scheduler we know of waits longer between
	// attempts, and a larger value is far more likely a unit mistake
	// (milliseconds for seconds) than a plan.
	RetryMax = 30 * 24 * time.Hour
	// RetryAtSkew is how far in the past a retry_at may be and still be
	// taken: the clocks of the job's host and of Vigil are rarely exactly in
	// step, and a retry announced "now" must not be refused for it.
	RetryAtSkew = time.Minute
	// DurationMax is the longest duration_ms accepted: 366 days.
	DurationMax = 366 * 24 * time.Hour
	// projectKeyMinLen and projectKeyMaxLen bound a project ping key.
	projectKeyMinLen, projectKeyMaxLen = 16, 128
	// slugMaxLen is the longest slug (monitors.Monitor.Validate).
	slugMaxLen = 100
)

// BadRequestError is a ping request that Vigil refuses: 400 with Message,
// a sentence naming the part at fault.
type BadRequestError struct {
	Param   string // the path part or query parameter at fault
	Message string
}

func (e *BadRequestError) Error() string { return e.Message }

func badRequest(param, format string, args ...any) error {
	return &BadRequestError{Param: param, Message: fmt.Sprintf(format, args...)}
}

// pingRequest is a parsed ping URL: the monitor it names, and the ping.
type pingRequest struct {
	// The monitor: by PingKey, or by ProjectPingKey and Slug.
	PingKey        string
	ProjectPingKey string
	Slug           string
	Create         bool
	// Update (update=1) changes the monitor's settings to Settings.
	Update bool
	// Settings are the monitor's settings the ping carries, read with
	// create=1 (on a slug URL) or update=1 only.
	Settings manage.PingSettings

	Kind     monitors.PingKind
	ExitCode *int
	RID      string
	Attempt  int
	RetryAt  *time.Time
	// ScheduledAt names the occurrence the run belongs to.
	ScheduledAt *time.Time
	DurationMS  *int64
}

// limitKey is the key the rate limit counts pings under: the monitor's ping
// key, or the project ping key and slug.
func (r *pingRequest) limitKey() string {
	if r.PingKey != "" {
		return r.PingKey
	}
	return r.ProjectPingKey + "/" + r.Slug
}

// parsePing parses the path after /ping/ and the raw query string of a ping
// request, at now. Errors are *BadRequestError.
func parsePing(path, rawQuery string, now time.Time) (*pingRequest, error) {
	r, err := parsePath(path)
	if err != nil {
		return nil, err
	}
	if err := r.parseQuery(rawQuery, now); err != nil {
		return nil, err
	}
	return r, nil
}

// parsePath parses the part of a ping URL's path after "/ping/":
// {uuid}[/suffix] or {project-ping-key}/{slug}[/suffix].
func parsePath(path string) (*pingRequest, error) {
	segs := strings.Split(path, "/")
	if len(segs) > 1 && segs[len(segs)-1] == "" {
		segs = segs[:len(segs)-1] // one trailing slash is harmless
	}
	if len(segs) == 0 || segs[0] == "" {
		return nil, badRequest("key", "the URL has no ping key: use /ping/<uuid> or /ping/<project-ping-key>/<slug>")
	}
	r := &pingRequest{}
	var suffix []string
	switch key := segs[0]; {
	case isUUID(key):
		r.PingKey = strings.ToLower(key)
		suffix = segs[1:]
	case isProjectKey(key):
		if len(segs) < 2 || segs[1] == "" {
			return nil, badRequest("slug", "ping key %s is not a UUID; a project ping key must be followed by a monitor slug", quote(key))
		}
		if !isSlug(segs[1]) {
			return nil, badRequest("slug", "slug %s must be 1 to 100 characters of a-z, 0-9, - and _, starting with a letter or digit", quote(segs[1]))
		}
		r.ProjectPingKey, r.Slug = key, segs[1]
		suffix = segs[2:]
	default:
		return nil, badRequest("key", "ping key %s is neither a UUID nor a project ping key", quote(key))
	}
	if len(suffix) > 1 {
		return nil, badRequest("suffix", "unexpected %s after the ping kind %s", quote(strings.Join(suffix[1:], "/")), quote(suffix[0]))
	}
	s := ""
	if len(suffix) == 1 {
		s = suffix[0]
	}
	switch s {
	case "", "success", "complete":
		r.Kind = monitors.PingSuccess
	case "start":
		r.Kind = monitors.PingStart
	case "fail":
		r.Kind = monitors.PingFail
	case "log":
		r.Kind = monitors.PingLog
	case "skip":
		r.Kind = monitors.PingSkip
	case "cancel":
		r.Kind = monitors.PingCancel
	default:
		code, err := parseExitStatus(s)
		if err != nil {
			return nil, err
		}
		r.ExitCode = &code
		r.Kind = monitors.PingFail
		if code == 0 {
			r.Kind = monitors.PingSuccess
		}
	}
	return r, nil
}

// parseExitStatus parses an exit status suffix, 0 to 255.
func parseExitStatus(s string) (int, error) {
	if !isDigits(s) {
		if strings.HasPrefix(s, "-") && isDigits(s[1:]) {
			return 0, badRequest("exit_status", "exit status %s must be between 0 and 255", quote(s))
		}
		return 0, badRequest("suffix", "unknown ping kind %s: use start, success, complete, fail, log, skip, cancel or an exit status 0 to 255", quote(s))
	}
	v, err := strconv.ParseUint(s, 10, 16)
	if err != nil || v > 255 {
		return 0, badRequest("exit_status", "exit status %s must be between 0 and 255", quote(s))
	}
	return int(v), nil
}

// parseQuery reads the optional query parameters into r.
func (r *pingRequest) parseQuery(rawQuery string, now time.Time) error {
	if rawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return badRequest("query", "the query string is malformed: %s", trim(err.Error()))
	}
	get := func(name string) (string, bool, error) {
		vs, ok := q[name]
		if !ok {
			return "", false, nil
		}
		if len(vs) > 1 {
			return "", false, badRequest(name, "%s is given more than once", name)
		}
		return vs[0], true, nil
	}

	if v, ok, err := get("rid"); err != nil {
		return err
	} else if ok {
		if err := checkRID(v); err != nil {
			return err
		}
		r.RID = v
	}
	if v, ok, err := get("attempt"); err != nil {
		return err
	} else if ok {
		n, err := strconv.Atoi(v)
		if err != nil || !isDigits(v) || n < 1 || n > AttemptMax {
			return badRequest("attempt", "attempt %s must be a whole number from 1 (the first execution) to %d", quote(v), AttemptMax)
		}
		r.Attempt = n
	}
	retryIn, hasRetryIn, err := get("retry_in")
	if err != nil {
		return err
	}
	retryAt, hasRetryAt, err := get("retry_at")
	if err != nil {
		return err
	}
	if hasRetryIn && hasRetryAt {
		return badRequest("retry_in", "give retry_in or retry_at, not both")
	}
	var retry *time.Time
	if hasRetryIn {
		n, err := strconv.ParseInt(retryIn, 10, 64)
		if err != nil || !isDigits(retryIn) || n < 0 || n > int64(RetryMax/time.Second) {
			return badRequest("retry_in", "retry_in %s must be a whole number of seconds from 0 to %d (30 days)", quote(retryIn), int64(RetryMax/time.Second))
		}
		t := now.Add(time.Duration(n) * time.Second)
		retry = &t
	}
	if hasRetryAt {
		t, err := time.Parse(time.RFC3339, retryAt)
		if err != nil {
			return badRequest("retry_at", "retry_at %s is not an RFC 3339 time such as 2026-01-02T15:04:05Z", quote(retryAt))
		}
		if t.Before(now.Add(-RetryAtSkew)) {
			return badRequest("retry_at", "retry_at %s is in the past", quote(retryAt))
		}
		if t.After(now.Add(RetryMax)) {
			return badRequest("retry_at", "retry_at %s is more than 30 days ahead", quote(retryAt))
		}
		retry = &t
	}
	// A retry is announced only by a failure; on any other kind it means
	// nothing (a script that always adds retry_in to "/$?" may succeed), so
	// it is checked but not kept.
	if r.Kind == monitors.PingFail {
		r.RetryAt = retry
	}
	if v, ok, err := get("scheduled_at"); err != nil {
		return err
	} else if ok {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return badRequest("scheduled_at", "scheduled_at %s is not an RFC 3339 time such as 2026-01-02T15:04:05Z", quote(v))
		}
		// Any time is taken: one that cannot be the run's occurrence (a
		// host clock far off) is judged as no scheduled_at at all (see
		// monitors.ScheduledAtAhead), rather than losing the ping.
		r.ScheduledAt = &t
	}
	if v, ok, err := get("duration_ms"); err != nil {
		return err
	} else if ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !isDigits(v) || n < 0 || n > DurationMax.Milliseconds() {
			return badRequest("duration_ms", "duration_ms %s must be a whole number of milliseconds from 0 to %d (366 days)", quote(v), DurationMax.Milliseconds())
		}
		r.DurationMS = &n
	}
	// As in Healthchecks.io, create=1 creates and any other value does not;
	// on a UUID URL it has no meaning and is ignored.
	if v, _, err := get("create"); err != nil {
		return err
	} else if v == "1" && r.Slug != "" {
		r.Create = true
	}
	if v, _, err := get("update"); err != nil {
		return err
	} else if v == "1" {
		r.Update = true
	}
	if r.Create || r.Update {
		return r.parseSettings(get)
	}
	return nil
}

// parseSettings reads the monitor settings of a create=1 or update=1
// ping: their syntax here; their values are manage.PingSettings' to judge.
func (r *pingRequest) parseSettings(get func(string) (string, bool, error)) error {
	text := func(name string, into **string) error {
		v, ok, err := get(name)
		if err != nil || !ok {
			return err
		}
		if !utf8.ValidString(v) {
			return badRequest(name, "%s must be valid UTF-8", name)
		}
		*into = &v
		return nil
	}
	seconds := func(name string, into **int64) error {
		v, ok, err := get(name)
		if err != nil || !ok {
			return err
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !isDigits(v) {
			return badRequest(name, "%s %s must be a whole number of seconds", name, quote(v))
		}
		*into = &n
		return nil
	}
	s := &r.Settings
	for _, err := range []error{
		text("schedule", &s.Schedule), text("tz", &s.TZ), text("dialect", &s.Dialect),
		seconds("every", &s.Every), seconds("grace", &s.Grace), seconds("max_runtime", &s.MaxRuntime),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkRID checks a run id: up to RIDMaxLen printable characters.
func checkRID(v string) error {
	if !utf8.ValidString(v) {
		return badRequest("rid", "rid must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(v); n > RIDMaxLen {
		return badRequest("rid", "rid is %d characters long; it must be at most %d", n, RIDMaxLen)
	}
	for _, c := range v {
		if !unicode.IsPrint(c) {
			return badRequest("rid", "rid must hold printable characters only, not %U", c)
		}
	}
	return nil
}

// isUUID reports whether s is a UUID in its canonical 36-character form,
// in either case.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// isProjectKey reports whether s has the form of a project ping key: URL-safe
// base64 characters, at least 128 bits' worth.
func isProjectKey(s string) bool {
	if len(s) < projectKeyMinLen || len(s) > projectKeyMaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// isSlug reports whether s is a valid monitor slug: 1 to 100 characters of
// a-z, 0-9, - and _, starting with a letter or digit (the rule of
// monitors.Monitor.Validate).
func isSlug(s string) bool {
	if len(s) == 0 || len(s) > slugMaxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := '0' <= c && c <= '9' || 'a' <= c && c <= 'z'
		if !alnum && (i == 0 || c != '-' && c != '_') {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// quote quotes a value from the request for a message, cut to a readable
// length.
func quote(s string) string { return strconv.Quote(trim(s)) }

func trim(s string) string {
	const max = 70
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// errBodyTooLarge is a body past the hard limit: 413.
var errBodyTooLarge = errors.New("ingest: body too large")
