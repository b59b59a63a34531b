package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/healthchecks"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
)

// hcCheck is a check as Healthchecks' API shows it. The fields a version
// does not have, and those a read-only key does not see, are left out.
type hcCheck struct {
	Name              string  `json:"name"`
	Slug              string  `json:"slug"`
	Tags              string  `json:"tags"`
	Desc              string  `json:"desc"`
	Grace             int64   `json:"grace"`
	NPings            int64   `json:"n_pings"`
	Status            string  `json:"status"`
	Started           *bool   `json:"started,omitempty"`
	LastPing          *string `json:"last_ping"`
	NextPing          *string `json:"next_ping"`
	ManualResume      bool    `json:"manual_resume"`
	Methods           string  `json:"methods"`
	Subject           string  `json:"subject"`
	SubjectFail       string  `json:"subject_fail"`
	StartKW           string  `json:"start_kw"`
	SuccessKW         string  `json:"success_kw"`
	FailureKW         string  `json:"failure_kw"`
	FilterSubject     bool    `json:"filter_subject"`
	FilterBody        bool    `json:"filter_body"`
	FilterHTTPBody    *bool   `json:"filter_http_body,omitempty"`
	FilterDefaultFail *bool   `json:"filter_default_fail,omitempty"`
	BadgeURL          string  `json:"badge_url,omitempty"`
	UUID              string  `json:"uuid,omitempty"`
	UniqueKey         string  `json:"unique_key,omitempty"`
	PingURL           string  `json:"ping_url,omitempty"`
	UpdateURL         string  `json:"update_url,omitempty"`
	PauseURL          string  `json:"pause_url,omitempty"`
	ResumeURL         string  `json:"resume_url,omitempty"`
	Channels          *string `json:"channels,omitempty"`
	Timeout           *int64  `json:"timeout,omitempty"`
	Schedule          string  `json:"schedule,omitempty"`
	TZ                string  `json:"tz,omitempty"`
}

// hcStatusOf returns a monitor's status as Healthchecks reports it in
// version v, and whether a run is open (Healthchecks' started).
// Healthchecks knows new, up, grace, down and paused (and, in v1, started
// for a running check): late is grace, and so is retrying (a failure whose
// retry is announced, not alerted yet); undeclared is paused (watched by
// no one); running is the status under the run (new until a first
// success), with started set.
func hcStatusOf(m *monitors.Monitor, now time.Time, v int) (string, bool) {
	started := len(m.State.Runs) > 0 && !m.Paused
	st := m.StatusAt(now)
	if started && v == 1 {
		// v1 says started for a running check, even a down one.
		return "started", true
	}
	switch st {
	case monitors.StatusNew, monitors.StatusUp, monitors.StatusDown, monitors.StatusPaused:
		return string(st), started
	case monitors.StatusLate, monitors.StatusRetrying:
		return "grace", started
	case monitors.StatusUndeclared:
		return "paused", false
	case monitors.StatusRunning:
		switch {
		case m.State.Expected.IsZero() || m.State.LastSuccessAt.IsZero():
			// Started, never succeeded: Healthchecks' check is still new.
			return "new", started
		case !now.Before(m.State.Expected):
			return "grace", started
		}
		return "up", started
	}
	return string(st), started
}

// hcCheckURL is the API URL of a check in version v.
func (h *Handler) hcCheckURL(v int, pingKey string) string {
	return fmt.Sprintf("%s/api/v%d/checks/%s", h.baseURL, v, pingKey)
}

// hcCheckJSON is m as a check of version v.
func (h *Handler) hcCheckJSON(rq *hcRequest, m *monitors.Monitor, nPings int64, badgeKey string, now time.Time) hcCheck {
	status, started := hcStatusOf(m, now, rq.v)
	out := hcCheck{
		Name: m.Name, Slug: m.Slug, Tags: strings.Join(m.Tags, " "), Desc: m.Description,
		Grace: m.GraceSeconds, NPings: nPings, Status: status,
		LastPing: hcTime(m.State.LastPingAt),
		// Vigil keeps a paused monitor paused until a person resumes it:
		// Healthchecks' manual_resume.
		ManualResume: true,
	}
	if !m.Paused {
		out.NextPing = hcTime(m.State.Expected)
	}
	if rq.v >= 2 {
		out.Started = &started
	}
	if rq.v >= 3 {
		no := false
		out.FilterHTTPBody, out.FilterDefaultFail = &no, &no
		out.BadgeURL = h.badgeURLs(m.ProjectID, badgeKey, monitorTarget(m.ID)).SVG
	}
	if rq.key.ReadOnly {
		out.UniqueKey = keys.UniqueKey(m.ID)
	} else {
		if rq.v >= 3 {
			out.UUID = m.PingKey
		}
		u := h.hcCheckURL(rq.v, m.PingKey)
		ch := strings.Join(m.Channels, ",")
		out.PingURL, out.UpdateURL, out.PauseURL, out.ResumeURL = h.baseURL+"/ping/"+m.PingKey, u, u+"/pause", u+"/resume"
		out.Channels = &ch
	}
	switch m.Schedule.Kind {
	case monitors.ScheduleInterval:
		every := m.Schedule.EverySeconds
		out.Timeout = &every
	default:
		spec := m.Schedule.WithDefaults()
		out.Schedule, out.TZ = spec.Expr, spec.TZ
	}
	return out
}

// hcRender turns monitors into checks, with their ping counts.
func (h *Handler) hcRender(c echo.Context, rq *hcRequest, ms []*monitors.Monitor) ([]hcCheck, error) {
	out := make([]hcCheck, 0, len(ms))
	if len(ms) == 0 {
		return out, nil
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	counts, err := h.store.PingCountByMonitor(c.Request().Context(), rq.key.ProjectID, ids)
	if err != nil {
		return nil, err
	}
	badgeKey, err := h.hcBadgeKey(c, rq)
	if err != nil {
		return nil, err
	}
	now := h.now()
	for _, m := range ms {
		out = append(out, h.hcCheckJSON(rq, m, counts[m.ID], badgeKey, now))
	}
	return out, nil
}

// hcRespond answers one check.
func (h *Handler) hcRespond(c echo.Context, rq *hcRequest, status int, m *monitors.Monitor) error {
	out, err := h.hcRender(c, rq, []*monitors.Monitor{m})
	if err != nil {
		return err
	}
	return c.JSON(status, out[0])
}

// hcAll returns every monitor of the request's project, by name.
func (h *Handler) hcAll(c echo.Context, rq *hcRequest) ([]*monitors.Monitor, error) {
	return h.store.MonitorList(c.Request().Context(), &monitors.MonitorListParams{ProjectID: rq.key.ProjectID, Now: h.now()})
}

// hcFind finds the check a path names: by its uuid (the monitor's ping
// key) or, where Healthchecks allows it, by its unique_key. A check of
// another project is 403, as Healthchecks answers.
func (h *Handler) hcFind(c echo.Context, rq *hcRequest, byUniqueKey bool) (*monitors.Monitor, error) {
	code := pathParam(c, "code")
	if keys.IsPingKey(strings.ToLower(code)) {
		m, err := h.store.MonitorGetByPingKey(c.Request().Context(), strings.ToLower(code))
		if errors.Is(err, monitors.ErrNotFound) {
			return nil, hcErrorf(http.StatusNotFound, "not found")
		}
		if err != nil {
			return nil, err
		}
		if m.ProjectID != rq.key.ProjectID {
			return nil, hcErrorf(http.StatusForbidden, "wrong api key: the check belongs to another project")
		}
		return m, nil
	}
	if byUniqueKey && len(code) == 40 {
		ms, err := h.hcAll(c, rq)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if keys.UniqueKey(m.ID) == code {
				return m, nil
			}
		}
	}
	return nil, hcErrorf(http.StatusNotFound, "not found")
}

// hcListChecks answers GET /api/vN/checks/: every check of the project,
// only those with every ?tag= given and, in v3, with the ?slug= given.
func (h *Handler) hcListChecks(c echo.Context, rq *hcRequest) error {
	ms, err := h.hcAll(c, rq)
	if err != nil {
		return err
	}
	tags := c.QueryParams()["tag"]
	slug, bySlug := "", false
	if rq.v >= 3 && c.QueryParams().Has("slug") {
		slug, bySlug = c.QueryParam("slug"), true
	}
	keep := ms[:0]
	for _, m := range ms {
		if bySlug && m.Slug != slug {
			continue
		}
		if !hasAll(m.Tags, tags) {
			continue
		}
		keep = append(keep, m)
	}
	out, err := h.hcRender(c, rq, keep)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string][]hcCheck{"checks": out})
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// hcGetCheck answers GET /api/vN/checks/{uuid or unique_key}.
func (h *Handler) hcGetCheck(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, true)
	if err != nil {
		return err
	}
	return h.hcRespond(c, rq, http.StatusOK, m)
}

// hcInput is the body of a create or update, as far as Vigil keeps it;
// nil fields were left out.
type hcInput struct {
	name, slug, tags, desc, schedule, tz *string
	timeout, grace                       *int64
	channels                             *string
	unique                               []string
}

// hcUnsupported are Healthchecks settings Vigil has no counterpart for:
// each may be sent with its default value (or, for manual_resume, Vigil's
// behaviour), and anything else is refused, since Vigil could not do it.
var hcUnsupported = []struct {
	name, kind string
	accept     any
	why        string
}{
	{"manual_resume", "boolean", true, "Vigil keeps a paused check paused until it is resumed (manual_resume true)"},
	{"methods", "string", "", "Vigil takes pings by HEAD, GET and POST"},
	{"subject", "string", "", "Vigil takes no pings by email"},
	{"subject_fail", "string", "", "Vigil takes no pings by email"},
	{"start_kw", "string", "", "Vigil does not classify pings by keywords"},
	{"success_kw", "string", "", "Vigil does not classify pings by keywords"},
	{"failure_kw", "string", "", "Vigil does not classify pings by keywords"},
	{"filter_subject", "boolean", false, "Vigil does not classify pings by keywords"},
	{"filter_body", "boolean", false, "Vigil does not classify pings by keywords"},
	{"filter_http_body", "boolean", false, "Vigil does not classify pings by keywords"},
	{"filter_default_fail", "boolean", false, "Vigil does not classify pings by keywords"},
}

// hcParseInput reads a create or update body of version v. Fields
// Healthchecks does not know are ignored, as Healthchecks ignores them;
// fields of the wrong type are a 400, as are settings Vigil cannot honour.
func hcParseInput(body object, v int) (*hcInput, error) {
	in := &hcInput{}
	str := func(name string) (*string, error) {
		if !body.has(name) {
			return nil, nil
		}
		var s string
		if err := json.Unmarshal(body[name], &s); err != nil {
			return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s is not a string", name)
		}
		return &s, nil
	}
	num := func(name string) (*int64, error) {
		if !body.has(name) {
			return nil, nil
		}
		var n json.Number
		dec := json.NewDecoder(bytes.NewReader(body[name]))
		dec.UseNumber()
		if err := dec.Decode(&n); err != nil {
			return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s is not a number", name)
		}
		i, err := n.Int64()
		if err != nil {
			return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s must be a whole number of seconds", name)
		}
		return &i, nil
	}
	var err error
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &in.name}, {"tags", &in.tags}, {"desc", &in.desc}, {"schedule", &in.schedule}, {"tz", &in.tz},
		{"channels", &in.channels}} {
		if *f.dst, err = str(f.name); err != nil {
			return nil, err
		}
	}
	if v >= 3 {
		// Before v3, Healthchecks made the slug from the name.
		if in.slug, err = str("slug"); err != nil {
			return nil, err
		}
	}
	if in.timeout, err = num("timeout"); err != nil {
		return nil, err
	}
	if in.grace, err = num("grace"); err != nil {
		return nil, err
	}
	if body.has("unique") {
		if err := json.Unmarshal(body["unique"], &in.unique); err != nil {
			return nil, hcErrorf(http.StatusBadRequest, "json validation error: unique is not an array of strings")
		}
		allowed := []string{"name", "tags", "timeout", "grace"}
		if v >= 3 {
			allowed = append(allowed, "slug")
		}
		for _, u := range in.unique {
			if !slices.Contains(allowed, u) {
				return nil, hcErrorf(http.StatusBadRequest, "json validation error: unique has unexpected item %q (allowed: %s)",
					u, strings.Join(allowed, ", "))
			}
		}
	}
	for _, u := range hcUnsupported {
		if !body.has(u.name) {
			continue
		}
		var got any
		if err := json.Unmarshal(body[u.name], &got); err != nil {
			return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s is not a %s", u.name, u.kind)
		}
		switch got.(type) {
		case string:
			if u.kind != "string" {
				return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s is not a %s", u.name, u.kind)
			}
		case bool:
			if u.kind != "boolean" {
				return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s is not a %s", u.name, u.kind)
			}
		default:
			return nil, hcErrorf(http.StatusBadRequest, "json validation error: %s is not a %s", u.name, u.kind)
		}
		if got != u.accept {
			if u.name == "methods" && got != "POST" {
				return nil, hcErrorf(http.StatusBadRequest, "json validation error: methods must be \"\" or \"POST\"")
			}
			return nil, hcErrorf(http.StatusBadRequest, "%s %s is not supported: %s", u.name, jsonText(got), u.why)
		}
	}
	return in, nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// hcResolveChannels turns a channels field into channel IDs: "" is none
// (in Vigil, the project's default channels), "*" every channel of the
// project, otherwise a comma-separated list of channel IDs or names.
func (h *Handler) hcResolveChannels(c echo.Context, rq *hcRequest, spec string) ([]string, error) {
	out := []string{}
	if spec == "" {
		return out, nil
	}
	chs, err := h.hcChannels(c, rq)
	if err != nil {
		return nil, err
	}
	if spec == "*" {
		for _, ch := range chs {
			out = append(out, ch.ID)
		}
		return out, nil
	}
	for _, tok := range strings.Split(spec, ",") {
		id := ""
		for _, ch := range chs {
			if ch.ID == strings.TrimSpace(tok) {
				id = ch.ID
				break
			}
		}
		if id == "" {
			for _, ch := range chs {
				if ch.Name == tok {
					if id != "" {
						return nil, hcErrorf(http.StatusBadRequest, "channels: more than one integration is named %q: use its id", tok)
					}
					id = ch.ID
				}
			}
		}
		if id == "" {
			return nil, hcErrorf(http.StatusBadRequest, "invalid channel identifier: %s", tok)
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// hcApply sets what in says on m, for version v, and returns the names of
// the settings it set (manage.ConfigFields), which become person fields.
// channels are in's channels, resolved. It reads nothing: it runs inside
// the store's transaction.
func hcApply(m *monitors.Monitor, in *hcInput, channels []string, v int) []string {
	var set []string
	if in.name != nil {
		m.Name = strings.TrimSpace(*in.name)
		set = append(set, "name")
		if v < 3 {
			if s := monitors.Slugify(m.Name); s != "" {
				m.Slug = s
			}
		}
	}
	if in.slug != nil {
		m.Slug = *in.slug
	}
	if in.tags != nil {
		m.Tags = healthchecks.Tags(*in.tags)
		set = append(set, "tags")
	}
	if in.desc != nil {
		m.Description = *in.desc
		set = append(set, "description")
	}
	calendar := m.Schedule.Kind == monitors.ScheduleCron || m.Schedule.Kind == monitors.ScheduleOnCalendar
	switch {
	case in.schedule != nil:
		// schedule wins over timeout, as in Healthchecks.
		tz := "UTC"
		if in.tz != nil {
			tz = *in.tz
		} else if calendar && m.Schedule.TZ != "" {
			tz = m.Schedule.TZ
		}
		m.Schedule = healthchecks.ScheduleUpdate(m.Schedule, *in.schedule, tz)
		set = append(set, "schedule")
	case in.timeout != nil:
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: *in.timeout}
		set = append(set, "schedule")
	case in.tz != nil && calendar:
		m.Schedule.TZ = *in.tz
		set = append(set, "schedule")
	}
	if in.grace != nil {
		m.GraceSeconds = *in.grace
		set = append(set, "grace_seconds")
	}
	if channels != nil {
		m.Channels = channels
		set = append(set, "channels")
	}
	return set
}

// hcMatches reports whether m has the values in gives (or their defaults)
// of every field of in.unique.
func hcMatches(m *monitors.Monitor, in *hcInput) bool {
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	for _, f := range in.unique {
		switch f {
		case "name":
			if m.Name != strings.TrimSpace(deref(in.name)) {
				return false
			}
		case "slug":
			if m.Slug != deref(in.slug) {
				return false
			}
		case "tags":
			if strings.Join(m.Tags, " ") != strings.Join(strings.Fields(deref(in.tags)), " ") {
				return false
			}
		case "timeout":
			want := int64(monitors.IntervalDefault)
			if in.timeout != nil {
				want = *in.timeout
			}
			if m.Schedule.Kind != monitors.ScheduleInterval || m.Schedule.EverySeconds != want {
				return false
			}
		case "grace":
			want := int64(monitors.GraceSecondsDefault)
			if in.grace != nil {
				want = *in.grace
			}
			if m.GraceSeconds != want {
				return false
			}
		}
	}
	return true
}

// hcPrepare parses a create or update body and resolves its channels
// (reads done before the store's transaction).
func (h *Handler) hcPrepare(c echo.Context, rq *hcRequest) (*hcInput, []string, error) {
	in, err := hcParseInput(rq.body, rq.v)
	if err != nil {
		return nil, nil, err
	}
	var channels []string
	if in.channels != nil {
		if channels, err = h.hcResolveChannels(c, rq, *in.channels); err != nil {
			return nil, nil, err
		}
	}
	return in, channels, nil
}

// hcCreateCheck answers POST /api/vN/checks/: a new check (201), or, when
// unique names fields that an existing check matches, that check updated
// (200).
func (h *Handler) hcCreateCheck(c echo.Context, rq *hcRequest) error {
	in, channels, err := h.hcPrepare(c, rq)
	if err != nil {
		return err
	}
	if len(in.unique) > 0 {
		ms, err := h.hcAll(c, rq)
		if err != nil {
			return err
		}
		for _, m := range ms {
			if hcMatches(m, in) {
				return h.hcChange(c, rq, m, in, channels)
			}
		}
	}

	now := h.now()
	m := newMonitor(rq.key.ProjectID)
	m.ID, m.PingKey, m.CreatedAt, m.UpdatedAt = keys.NewID(), keys.NewPingKey(), now, now
	hcApply(m, in, channels, rq.v)
	derived := in.slug == nil // before v3, and in v3 without a slug
	if m.Slug == "" {
		// Vigil's monitors have a slug; Healthchecks' may have none.
		m.Slug = monitors.Slugify(m.Name)
		if m.Slug == "" {
			m.Slug = m.PingKey
		}
	}
	finishNew(m)
	err = h.manage.MonitorCreate(c.Request().Context(), m)
	if errors.Is(err, monitors.ErrConflict) && derived {
		// Healthchecks allows two checks of one name; Vigil's slugs are
		// unique in a project, so a made-up slug gets a suffix.
		m.Slug = healthchecks.AltSlug(m.Slug, m.PingKey)
		err = h.manage.MonitorCreate(c.Request().Context(), m)
	}
	if errors.Is(err, monitors.ErrConflict) {
		return hcErrorf(http.StatusBadRequest, "invalid value for slug: %q is already used by another check of this project", m.Slug)
	}
	if err != nil {
		return err
	}
	return h.hcRespond(c, rq, http.StatusCreated, m)
}

// hcChange updates m as in says and answers it.
func (h *Handler) hcChange(c echo.Context, rq *hcRequest, m *monitors.Monitor, in *hcInput, channels []string) error {
	change := func(alt bool) (*monitors.Monitor, error) {
		changed, _, err := h.manage.MonitorChange(c.Request().Context(), &manage.MonitorChange{
			ProjectID: rq.key.ProjectID, ID: m.ID,
			Apply: func(m *monitors.Monitor) ([]string, error) {
				set := hcApply(m, in, channels, rq.v)
				if alt {
					m.Slug = healthchecks.AltSlug(m.Slug, m.PingKey)
				}
				return set, nil
			},
		})
		return changed, err
	}
	changed, err := change(false)
	if errors.Is(err, monitors.ErrConflict) && rq.v < 3 && in.name != nil {
		// Before v3 the slug is made from the name, which two checks may
		// share: as on create, the second gets its UUID's start appended.
		changed, err = change(true)
	}
	if errors.Is(err, monitors.ErrConflict) {
		return hcErrorf(http.StatusBadRequest, "invalid value for slug: it is already used by another check of this project")
	}
	if err != nil {
		return err
	}
	return h.hcRespond(c, rq, http.StatusOK, changed)
}

// hcUpdateCheck answers POST /api/vN/checks/{uuid}: fields left out keep
// their values.
func (h *Handler) hcUpdateCheck(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, false)
	if err != nil {
		return err
	}
	in, channels, err := h.hcPrepare(c, rq)
	if err != nil {
		return err
	}
	return h.hcChange(c, rq, m, in, channels)
}

// hcDeleteCheck answers DELETE /api/vN/checks/{uuid} with the check as it
// was.
func (h *Handler) hcDeleteCheck(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, false)
	if err != nil {
		return err
	}
	out, err := h.hcRender(c, rq, []*monitors.Monitor{m})
	if err != nil {
		return err
	}
	if err := h.manage.MonitorDelete(c.Request().Context(), rq.key.ProjectID, m.ID); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}

// hcPauseCheck answers POST /api/vN/checks/{uuid}/pause.
func (h *Handler) hcPauseCheck(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, false)
	if err != nil {
		return err
	}
	m, _, err = h.manage.MonitorSetPaused(c.Request().Context(), rq.key.ProjectID, m.ID, true)
	if err != nil {
		return err
	}
	return h.hcRespond(c, rq, http.StatusOK, m)
}

// hcResumeCheck answers POST /api/vN/checks/{uuid}/resume: 409 when the
// check is not paused, as Healthchecks answers.
func (h *Handler) hcResumeCheck(c echo.Context, rq *hcRequest) error {
	m, err := h.hcFind(c, rq, false)
	if err != nil {
		return err
	}
	if !m.Paused {
		return hcErrorf(http.StatusConflict, "check is not paused")
	}
	m, _, err = h.manage.MonitorSetPaused(c.Request().Context(), rq.key.ProjectID, m.ID, false)
	if err != nil {
		return err
	}
	return h.hcRespond(c, rq, http.StatusOK, m)
}
