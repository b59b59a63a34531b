package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// userAgentMaxLen is the most bytes of a User-Agent kept with a ping.
const userAgentMaxLen = 512

// WarningHeader is the header of a ping's answer that carries, one per
// header line, the advice about the monitor's settings
// ([monitors.Adviser.Advise]): the API's warnings, for scripts that only
// ping. vigil run prints them on standard error.
const WarningHeader = "Vigil-Warning"

// ping handles every ping URL: it parses the request, checks the rate of
// its key, reads the body, and records the ping; the answer comes once the
// ping is durable.
func (s *Service) ping(c echo.Context) error {
	start := time.Now()
	req := c.Request()
	h := c.Response().Header()
	// The values are shared by every answer (no header is changed in
	// place: Add appends to a copy, Set replaces).
	h["Ping-Body-Limit"] = s.bodyLimitHeader
	h["Access-Control-Allow-Origin"] = headerAnyOrigin
	h["Cache-Control"] = headerNoStore

	now := s.cfg.NowFunc()
	if blocked, wait := s.failures.empty(s.clientIP(req), now); blocked {
		h.Set("Retry-After", strconv.FormatInt(max(int64(math.Ceil(wait.Seconds())), 1), 10))
		return s.respond(c, start, "", resultRateLimited, http.StatusTooManyRequests,
			"too many pings from your address ended in 404 or 400; retry after the time in Retry-After")
	}
	pr, err := parsePath(strings.TrimPrefix(req.URL.Path, "/ping/"))
	if err != nil {
		return s.respond(c, start, "", resultBadRequest, http.StatusBadRequest, err.Error())
	}
	kind := string(pr.Kind)
	if err := pr.parseQuery(req.URL.RawQuery, now); err != nil {
		return s.respond(c, start, kind, resultBadRequest, http.StatusBadRequest, err.Error())
	}
	// The settings are judged before anything is stored, on a new monitor
	// with the defaults, as the API judges a new monitor's: a bad one is a
	// 400, whether or not the monitor exists yet.
	var created *monitors.Monitor
	if pr.Create || pr.Update {
		created = newMonitor(cmp.Or(pr.Slug, "ping"), now)
		if _, err := pr.Settings.Apply(created); err != nil {
			return s.respond(c, start, kind, resultBadRequest, http.StatusBadRequest, err.Error())
		}
	}
	key := pr.limitKey()
	if ok, wait := s.limiter.allow(key, now); !ok {
		secs := int64(math.Ceil(wait.Seconds()))
		h.Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
		return s.respond(c, start, kind, resultRateLimited, http.StatusTooManyRequests,
			"rate limit exceeded for this monitor; retry after the time in Retry-After")
	}
	body, truncated, err := s.readBody(req)
	if errors.Is(err, errBodyTooLarge) {
		return s.respond(c, start, kind, resultTooLarge, http.StatusRequestEntityTooLarge,
			fmt.Sprintf("the request body is larger than %d bytes", s.cfg.BodyHardLimit))
	}
	if err != nil {
		return s.respond(c, start, kind, resultBadRequest, http.StatusBadRequest, "the request body could not be read")
	}

	p := &monitors.PingRecordParams{
		PingKey: pr.PingKey, ProjectPingKey: pr.ProjectPingKey, Slug: pr.Slug, Create: pr.Create,
		Ping: monitors.Ping{
			Kind: pr.Kind, At: now, RID: pr.RID, Attempt: pr.Attempt, RetryAt: pr.RetryAt, ScheduledAt: pr.ScheduledAt,
			ExitCode: pr.ExitCode, DurationMS: pr.DurationMS, Body: body, BodyTruncated: truncated,
			RemoteAddr: s.clientIP(req), UserAgent: cut(req.UserAgent(), userAgentMaxLen),
		},
	}
	if pr.Create {
		p.NewMonitor = created
	}
	if pr.Update && !pr.Settings.IsZero() {
		settings := pr.Settings
		p.Update = manage.ChangeFunc(&manage.MonitorChange{Apply: settings.Apply}, now)
	}
	res, err := s.writer.record(req.Context(), key, p)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return s.fail(c, start, kind, err)
	}
	if res.Monitor != nil {
		for _, a := range s.adviser.Advise(res.Monitor, now) {
			h.Add(WarningHeader, a.String())
		}
	}
	if res.Created {
		return s.respond(c, start, kind, resultCreated, http.StatusCreated, "Created")
	}
	return s.respond(c, start, kind, resultOK, http.StatusOK, "OK")
}

// fail answers a ping that was not stored because of err.
func (s *Service) fail(c echo.Context, start time.Time, kind string, err error) error {
	var (
		verr *monitors.ValidationError
		lerr *monitors.LimitError
	)
	h := c.Response().Header()
	switch {
	case errors.Is(err, monitors.ErrNotFound):
		return s.respond(c, start, kind, resultNotFound, http.StatusNotFound, "not found")
	case errors.As(err, &verr):
		return s.respond(c, start, kind, resultBadRequest, http.StatusBadRequest, verr.Error())
	case errors.Is(err, monitors.ErrConflict):
		return s.respond(c, start, kind, resultError, http.StatusConflict, "the monitor could not be created: its slug or ping key is taken")
	case errors.As(err, &lerr):
		return s.respond(c, start, kind, resultLimited, http.StatusForbidden,
			fmt.Sprintf("the monitor was not created: the project has reached its limit of %d monitors (VIGIL_MAX_MONITORS_PER_PROJECT)", lerr.Limit))
	case errors.Is(err, errStopped), errors.Is(err, context.Canceled):
		h.Set("Retry-After", "1")
		return s.respond(c, start, kind, resultUnavailable, http.StatusServiceUnavailable, "not stored: the server is shutting down; try again")
	default:
		s.cfg.Logger.Error("record ping", "kind", kind, "err", err)
		return s.respond(c, start, kind, resultError, http.StatusInternalServerError, "internal error: the ping was not stored")
	}
}

// respond answers with a short plain text and counts the ping; a 404 or
// 400 also counts against the client's address.
func (s *Service) respond(c echo.Context, start time.Time, kind, result string, status int, text string) error {
	s.m.ping(kind, result, time.Since(start))
	if status == http.StatusNotFound || status == http.StatusBadRequest {
		s.failures.allow(s.clientIP(c.Request()), s.cfg.NowFunc())
	}
	// As c.String(status, text) answers, with the common bodies made once.
	w := c.Response()
	if w.Header().Get(echo.HeaderContentType) == "" {
		w.Header()[echo.HeaderContentType] = headerTextPlain
	}
	w.WriteHeader(status)
	var body []byte
	switch text {
	case "OK":
		body = bodyOK
	case "Created":
		body = bodyCreated
	default:
		body = []byte(text)
	}
	_, err := w.Write(body)
	return err
}

// The values of the headers and the bodies of the common answers, shared.
var (
	headerAnyOrigin = []string{"*"}
	headerNoStore   = []string{"no-store"}
	headerTextPlain = []string{echo.MIMETextPlainCharsetUTF8}
	bodyOK          = []byte("OK")
	bodyCreated     = []byte("Created")
)

// readBody reads the request body: the first BodyLimit bytes are kept, and
// truncated tells whether there was more. A body past BodyHardLimit is
// errBodyTooLarge. A cut never splits a UTF-8 character.
func (s *Service) readBody(req *http.Request) (string, bool, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return "", false, nil
	}
	if req.ContentLength > s.cfg.BodyHardLimit {
		return "", false, errBodyTooLarge
	}
	limit := s.cfg.BodyLimit
	// One byte past the limit tells whether the body is cut, and where the
	// last kept character ends.
	buf, err := io.ReadAll(io.LimitReader(req.Body, limit+1))
	if err != nil {
		return "", false, fmt.Errorf("read body: %w", err)
	}
	if int64(len(buf)) <= limit {
		return string(buf), false, nil
	}
	rest, err := io.Copy(io.Discard, io.LimitReader(req.Body, s.cfg.BodyHardLimit-limit))
	if err != nil {
		return "", false, fmt.Errorf("read body: %w", err)
	}
	if limit+1+rest > s.cfg.BodyHardLimit {
		return "", false, errBodyTooLarge
	}
	cutAt := int(limit)
	for cutAt > 0 && !utf8.RuneStart(buf[cutAt]) && int(limit)-cutAt < utf8.UTFMax {
		cutAt--
	}
	return string(buf[:cutAt]), true, nil
}

// newMonitor returns the monitor a create=1 ping makes: the documented
// defaults, and no channels of its own, so the project's default channels
// apply.
func newMonitor(slug string, now time.Time) *monitors.Monitor {
	m := &monitors.Monitor{
		ID: keys.NewID(), Name: slug, Slug: slug, PingKey: keys.NewPingKey(),
		Channels: []string{}, CreatedAt: now, UpdatedAt: now,
	}
	m.ApplyDefaults()
	return m
}

// cut returns s cut to at most n bytes, on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
