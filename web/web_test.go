package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/web"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type bundle struct {
	store   monitors.Store
	srv     *httptest.Server
	clock   *clock
	project *monitors.Project
}

type option func(*web.Config)

// testSetupToken is the setup token of the dashboards of these tests.
const testSetupToken = "setup-token-of-the-test-0123456789"

func setup(t *testing.T, opts ...option) *bundle {
	t.Helper()
	return setupOn(t, testdb.SQLite(t), opts...)
}

// eachStore runs fn on a bundle of each store.
func eachStore(t *testing.T, fn func(t *testing.T, b *bundle), opts ...option) {
	t.Helper()
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, setupOn(t, open(t), opts...))
		})
	}
}

// setupOn is setup on the given store.
func setupOn(t *testing.T, store monitors.Store, opts ...option) *bundle {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	p, err := store.ProjectCreate(context.Background(), &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Default",
		PingKey: keys.NewProjectPingKey(), Now: clk.now()})
	require.NoError(t, err)
	cfg := web.Config{Store: store, BaseURL: "http://vigil.test", NowFunc: clk.now, Logger: testdb.Logger(t),
		SetupToken: testSetupToken}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := web.New(cfg)
	require.NoError(t, err)
	e := echo.New()
	h.Register(e)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return &bundle{store: store, srv: srv, clock: clk, project: p}
}

// client is a browser: it keeps cookies and does not follow redirects.
type client struct {
	t    *testing.T
	b    *bundle
	http *http.Client
}

func (b *bundle) client(t *testing.T) *client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &client{t: t, b: b, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type response struct {
	status   int
	body     string
	location string
	header   http.Header
}

func (c *client) do(method, path string, form url.Values, header map[string]string) response {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.b.srv.URL+path, body)
	require.NoError(c.t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return response{status: resp.StatusCode, body: string(b), location: resp.Header.Get("Location"), header: resp.Header}
}

func (c *client) get(path string) response { return c.do(http.MethodGet, path, nil, nil) }

func (c *client) post(path string, form url.Values) response {
	return c.do(http.MethodPost, path, form, nil)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the session's CSRF token from a page.
func (c *client) csrf() string {
	c.t.Helper()
	r := c.get("/keys")
	m := csrfRE.FindStringSubmatch(r.body)
	require.NotNil(c.t, m, "no CSRF token in %s", r.body)
	return m[1]
}

// postForm posts a form of the signed-in session, with its CSRF token.
func (c *client) postForm(path string, form url.Values) response {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", c.csrf())
	return c.post(path, form)
}

func (b *bundle) user(t *testing.T, email, password string, projectIDs ...string) *monitors.User {
	t.Helper()
	hash, err := web.HashPassword(password)
	require.NoError(t, err)
	u, err := b.store.UserCreate(context.Background(), &monitors.UserCreateParams{ID: keys.NewID(), Email: email,
		PasswordHash: hash, ProjectIDs: projectIDs, Now: b.clock.now()})
	require.NoError(t, err)
	return u
}

// signIn returns a client signed in as a new member of the projects.
func (b *bundle) signIn(t *testing.T, email string, projectIDs ...string) *client {
	t.Helper()
	b.user(t, email, "password-of-"+email, projectIDs...)
	c := b.client(t)
	r := c.post("/login", url.Values{"email": {email}, "password": {"password-of-" + email}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	return c
}

func (b *bundle) monitor(t *testing.T, projectID, slug string) *monitors.Monitor {
	t.Helper()
	now := b.clock.now()
	m := &monitors.Monitor{ID: keys.NewID(), ProjectID: projectID, Name: slug, Slug: slug, PingKey: keys.NewPingKey(),
		CreatedAt: now, UpdatedAt: now}
	m.ApplyDefaults()
	require.NoError(t, b.store.MonitorInsert(context.Background(), m))
	return m
}

func sessionCookie(t *testing.T, r response) *http.Cookie {
	t.Helper()
	for _, ck := range (&http.Response{Header: r.header}).Cookies() {
		if strings.HasSuffix(ck.Name, "vigil_session") {
			return ck
		}
	}
	t.Fatalf("no session cookie in %v", r.header)
	return nil
}

func TestFirstAccount(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *web.Config) { c.LoginBurst = 100 })
	c := b.client(t)

	// The front page says where the form is; only the token opens it.
	r := c.get("/")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "/setup?token=")
	require.NotContains(t, r.body, testSetupToken)
	require.NotContains(t, r.body, `name="password"`)
	for _, path := range []string{"/setup", "/setup?token=", "/setup?token=wrong", "/setup?token=" + testSetupToken[:10]} {
		r = c.get(path)
		require.Equal(t, http.StatusForbidden, r.status, path)
		require.Contains(t, r.body, "This setup link is not valid", path)
	}
	r = c.post("/setup", url.Values{"email": {"eve@example.com"}, "password": {"long enough 1"}, "password2": {"long enough 1"}})
	require.Equal(t, http.StatusForbidden, r.status)
	r = c.post("/setup", url.Values{"token": {"wrong"}, "email": {"eve@example.com"}, "password": {"long enough 1"}, "password2": {"long enough 1"}})
	require.Equal(t, http.StatusForbidden, r.status)

	r = c.get("/setup?token=" + testSetupToken)
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "Create the first account")
	require.Contains(t, r.body, "joins the project <strong>Default</strong>")
	require.Contains(t, r.body, `name="token" value="`+testSetupToken+`"`)

	r = c.post("/setup", url.Values{"token": {testSetupToken}, "email": {"ada@example.com"}, "password": {"long enough 1"}, "password2": {"different 12"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "The two passwords differ.")
	r = c.post("/setup", url.Values{"token": {testSetupToken}, "email": {"ada@example.com"}, "password": {"short"}, "password2": {"short"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "at least 10 characters")

	r = c.post("/setup", url.Values{"token": {testSetupToken}, "email": {"ada@example.com"}, "password": {"long enough 1"}, "password2": {"long enough 1"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	ck := sessionCookie(t, r)
	require.Equal(t, "vigil_session", ck.Name)
	require.True(t, ck.HttpOnly)
	require.Equal(t, http.SameSiteLaxMode, ck.SameSite)
	require.False(t, ck.Secure, "http base URL")

	r = c.get("/")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "No monitors yet")
	u, err := b.store.UserGetByEmail(context.Background(), "ada@example.com")
	require.NoError(t, err)
	projects, err := b.store.ProjectListByUser(context.Background(), u.ID)
	require.NoError(t, err)
	require.Equal(t, b.project.ID, projects[0].ID, "the first account joins the first project")

	// The form is closed once an account exists, whoever posts it.
	other := b.client(t)
	r = other.get("/")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/login", r.location)
	r = other.post("/setup", url.Values{"token": {testSetupToken}, "email": {"eve@example.com"}, "password": {"long enough 2"}, "password2": {"long enough 2"}})
	require.Equal(t, http.StatusForbidden, r.status, "the token is spent")
	r = other.get("/setup?token=" + testSetupToken)
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/login", r.location)
	n, err := b.store.UserCount(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.user(t, "ada@example.com", "correct horse battery", b.project.ID)
	c := b.client(t)

	r := c.get("/monitors/new")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/login?next=%2Fmonitors%2Fnew", r.location)

	r = c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong password"}})
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, r.body, "That email and password do not match an account.")
	r = c.post("/login", url.Values{"email": {"nobody@example.com"}, "password": {"wrong password"}})
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Contains(t, r.body, "That email and password do not match an account.", "the same answer: no one learns which emails have accounts")

	r = c.post("/login", url.Values{"email": {"ADA@example.com"}, "password": {"correct horse battery"}, "next": {"/monitors/new"}})
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/monitors/new", r.location)
	token := sessionCookie(t, r).Value

	// The store keeps the token's hash only.
	_, err := b.store.SessionGet(context.Background(), &monitors.SessionGetParams{TokenHash: token, Now: b.clock.now()})
	require.ErrorIs(t, err, monitors.ErrNotFound)

	// Sign-out needs the CSRF token, then ends the session for good.
	r = c.post("/logout", url.Values{})
	require.Equal(t, http.StatusForbidden, r.status)
	r = c.postForm("/logout", nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Equal(t, "/login", r.location)
	replay := b.client(t)
	u, _ := url.Parse(b.srv.URL)
	replay.http.Jar.SetCookies(u, []*http.Cookie{{Name: "vigil_session", Value: token}})
	r = replay.get("/settings")
	require.Equal(t, http.StatusSeeOther, r.status, "a signed-out session's cookie signs no one in")

	// Off-site destinations after sign-in are refused.
	r = c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse battery"}, "next": {"//evil.example/x"}})
	require.Equal(t, "/", r.location)
}

func TestSessionExpires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, "ada@example.com", b.project.ID)
	require.Equal(t, http.StatusOK, c.get("/settings").status)

	// Used within its lifetime, a session is renewed.
	b.clock.advance(web.SessionLifetime - time.Hour)
	require.Equal(t, http.StatusOK, c.get("/settings").status)
	b.clock.advance(web.SessionLifetime - time.Hour)
	require.Equal(t, http.StatusOK, c.get("/settings").status)

	// Unused for its lifetime, it expires.
	b.clock.advance(web.SessionLifetime)
	r := c.get("/settings")
	require.Equal(t, http.StatusSeeOther, r.status)
	require.True(t, strings.HasPrefix(r.location, "/login"))
}

func TestSecureCookiesOnHTTPS(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *web.Config) { c.BaseURL = "https://vigil.example.com" })
	b.user(t, "ada@example.com", "correct horse battery", b.project.ID)
	r := b.client(t).post("/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse battery"}})
	require.Equal(t, http.StatusSeeOther, r.status)
	ck := sessionCookie(t, r)
	require.Equal(t, "__Host-vigil_session", ck.Name)
	require.True(t, ck.Secure)
	require.True(t, ck.HttpOnly)
	require.Equal(t, "/", ck.Path)
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, "ada@example.com", b.project.ID)
	form := url.Values{"name": {"nightly"}, "schedule_kind": {"interval"}, "every": {"1h"}, "grace": {"5m"},
		"alert_on_failure": {"final"}, "overlap": {"alert"}, "failure_threshold": {"1"}, "recovery_threshold": {"1"}}

	r := c.post("/monitors", form)
	require.Equal(t, http.StatusForbidden, r.status, "no token")
	form.Set("csrf", "forged")
	r = c.post("/monitors", form)
	require.Equal(t, http.StatusForbidden, r.status, "a wrong token")

	form.Set("csrf", c.csrf())
	r = c.do(http.MethodPost, "/monitors", form, map[string]string{"Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusForbidden, r.status, "a request from another site, even with the token")
	r = c.do(http.MethodPost, "/monitors", form, map[string]string{"Origin": "https://evil.example"})
	require.Equal(t, http.StatusForbidden, r.status)
	list, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.project.ID})
	require.NoError(t, err)
	require.Empty(t, list, "nothing refused was stored")

	r = c.post("/monitors", form)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)

	// htmx sends the token as a header.
	m := b.monitor(t, b.project.ID, "htmx-paused")
	r = c.do(http.MethodPost, "/monitors/"+m.ID+"/pause", url.Values{}, map[string]string{"X-CSRF-Token": c.csrf(), "HX-Request": "true"})
	require.Equal(t, http.StatusNoContent, r.status)
	require.Equal(t, "/monitors/"+m.ID, r.header.Get("HX-Redirect"))
}

func TestProjectsAreSeparate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	other, err := b.store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Team B",
		PingKey: keys.NewProjectPingKey(), Now: b.clock.now().Add(time.Minute)})
	require.NoError(t, err)
	ours := b.monitor(t, b.project.ID, "ours-nightly")
	theirs := b.monitor(t, other.ID, "theirs-secret")
	ch, err := b.store.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: other.ID, Kind: "webhook",
		Name: "their hook", Config: json.RawMessage(`{"url":"https://hooks.example.com/x","secret":"their-secret-value"}`), Now: b.clock.now()})
	require.NoError(t, err)
	key, err := b.store.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{ID: keys.NewID(), ProjectID: other.ID, Name: "their key",
		Prefix: "vk_abc", Hash: "h", Now: b.clock.now()})
	require.NoError(t, err)

	c := b.signIn(t, "ada@example.com", b.project.ID)
	r := c.get("/")
	require.Contains(t, r.body, "ours-nightly")
	require.NotContains(t, r.body, "theirs-secret")
	for _, path := range []string{"/monitors/" + theirs.ID, "/monitors/" + theirs.ID + "/edit", "/channels/" + ch.ID + "/edit"} {
		r := c.get(path)
		require.Equal(t, http.StatusNotFound, r.status, path)
		require.NotContains(t, r.body, "theirs-secret")
		require.NotContains(t, r.body, "their hook")
	}
	for _, path := range []string{"/monitors/" + theirs.ID + "/pause", "/monitors/" + theirs.ID + "/delete",
		"/channels/" + ch.ID + "/delete", "/keys/" + key.ID + "/revoke"} {
		require.Equal(t, http.StatusNotFound, c.postForm(path, nil).status, path)
	}
	got, err := b.store.MonitorGet(ctx, other.ID, theirs.ID)
	require.NoError(t, err)
	require.False(t, got.Paused)
	keysLeft, err := b.store.APIKeyList(ctx, other.ID)
	require.NoError(t, err)
	require.Nil(t, keysLeft[0].RevokedAt)
	require.NotContains(t, c.get("/channels").body, "their hook")
	require.NotContains(t, c.get("/keys").body, "their key")

	// Switching to a project one is not a member of is refused too.
	r = c.postForm("/project", url.Values{"project": {other.ID}})
	require.Equal(t, http.StatusNotFound, r.status)

	// Someone of no project sees none, and is told how to join one.
	nobody := b.signIn(t, "nobody@example.com")
	r = nobody.get("/")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, "not a member of any project")
	require.Contains(t, r.body, "vigil users join --email nobody@example.com --project NAME")
	require.NotContains(t, r.body, "ours-nightly")
	require.Equal(t, http.StatusOK, nobody.get("/monitors/"+ours.ID).status)
	require.NotContains(t, nobody.get("/monitors/"+ours.ID).body, "ours-nightly")

	// A member of both sees both, one project at a time.
	both := b.signIn(t, "bo@example.com", b.project.ID, other.ID)
	require.Contains(t, both.get("/").body, "ours-nightly")
	r = both.postForm("/project", url.Values{"project": {other.ID}})
	require.Equal(t, http.StatusSeeOther, r.status)
	body := both.get("/").body
	require.Contains(t, body, "theirs-secret")
	require.NotContains(t, body, "ours-nightly")
	require.Equal(t, http.StatusOK, both.get("/monitors/"+ours.ID).status, "a monitor's page opens in its own project")
}

func TestSchedulePreview(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, "ada@example.com", b.project.ID)
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"schedule_kind=cron&expr=30+2+*+*+*&tz=Europe/Berlin", []string{"At 02:30 every day", "Europe/Berlin",
			"Tue 3 Mar 2026, 02:30:00 CET", "Sat 7 Mar 2026, 02:30:00 CET"}},
		{"schedule_kind=cron&expr=*/15+*+*+*+*", []string{"Every 15 minutes", "UTC", "Mon 2 Mar 2026, 09:15:00 UTC"}},
		{"schedule_kind=cron&expr=61+*+*+*+*", []string{"Cron expression: minute", "61"}},
		{"schedule_kind=cron&expr=0+0+30+2+*", []string{"Cron expression:", "never"}},
		{"schedule_kind=cron&expr=0+*+*+*+*&tz=Mars/Olympus", []string{"Time zone: unknown time zone &#34;Mars/Olympus&#34;"}},
		{"schedule_kind=cron&expr=", []string{"Cron expression: enter one"}},
		{"schedule_kind=interval&every=90s", []string{"Expects a ping every 1 minute 30 seconds, counted from the last ping."}},
		{"schedule_kind=interval&every=1h30m", []string{"every 1 hour 30 minutes"}},
		{"schedule_kind=interval&every=soon", []string{"Interval: &#34;soon&#34; is not a duration"}},
		{"schedule_kind=cron&dialect=quartz&expr=0+30+2+%3F+*+1%232&tz=Europe/Berlin",
			[]string{"At 02:30 on the second Sunday of the month", "Sun 8 Mar 2026, 02:30:00 CET", "Sun 12 Apr 2026, 02:30:00 CEST"}},
		{"schedule_kind=cron&expr=0+30+2+%3F+*+1%232", []string{"? is not cronie syntax"}},
		{"schedule_kind=cron&dialect=robfig&expr=0+0+L+*+*", []string{"valid in the cronie dialect"}},
	} {
		r := c.get("/schedule/preview?" + tt.query)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, r.body, "<html", "a fragment")
		for _, w := range tt.want {
			require.Contains(t, r.body, w, tt.query)
		}
	}
}

func TestMonitorForm(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	c := b.signIn(t, "ada@example.com", b.project.ID)
	form := url.Values{"name": {"Nightly import"}, "tags": {"etl, nightly etl"}, "schedule_kind": {"cron"},
		"expr": {"0 2 * * *"}, "tz": {"Europe/Berlin"}, "grace": {"10m"}, "max_runtime": {"1h"}, "deadline": {""},
		"alert_on_failure": {"every_attempt"}, "overlap": {"ignore"}, "failure_threshold": {"2"}, "recovery_threshold": {"1"},
		"notify_output": {"on"}}
	require.Contains(t, c.get("/monitors/new").body, `name="notify_output" value="on" checked`, "on for a new monitor")
	r := c.postForm("/monitors", form)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	m, err := b.store.MonitorGetBySlug(ctx, b.project.ID, "nightly-import")
	require.NoError(t, err)
	require.Equal(t, "/monitors/"+m.ID, r.location)
	require.Equal(t, []string{"etl", "nightly"}, m.Tags)
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin", Dialect: monitors.DialectCronie}, m.Schedule)
	require.EqualValues(t, 600, m.GraceSeconds)
	require.EqualValues(t, 3600, m.MaxRuntimeSeconds)
	require.Equal(t, monitors.AlertEveryAttempt, m.AlertOnFailure)
	require.Equal(t, monitors.OverlapIgnore, m.Overlap)
	require.Equal(t, 2, m.FailureThreshold)
	require.False(t, m.HideOutput)
	require.True(t, keys.IsPingKey(m.PingKey))

	page := c.get(r.location).body
	require.Contains(t, page, "Created. Add its ping URL to your job")
	require.Contains(t, page, "http://vigil.test/ping/"+m.PingKey)
	require.Contains(t, page, "At 02:00 every day (Europe/Berlin)")
	require.Contains(t, page, "CRON_TZ=Europe/Berlin\n0 2 * * * /path/to/job")

	// Mistakes are shown next to their fields, in words, and nothing is
	// stored.
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("grace", "soon")
	r = c.postForm("/monitors", bad)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "Grace period: &#34;soon&#34; is not a duration")
	require.Contains(t, r.body, `aria-invalid="true"`)
	bad.Set("grace", "5m")
	r = c.postForm("/monitors", bad)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, "the slug is taken")
	require.Contains(t, r.body, "Slug: another monitor of this project is called &#34;nightly-import&#34;")
	bad.Set("slug", "other")
	bad.Set("expr", "0 0 30 2 *")
	r = c.postForm("/monitors", bad)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "Cron expression:")
	list, err := b.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.project.ID})
	require.NoError(t, err)
	require.Len(t, list, 1)

	// A job run by robfig/cron is judged by robfig's reading.
	rob := url.Values{}
	for k, v := range form {
		rob[k] = v
	}
	rob.Set("name", "Robfig job")
	rob.Set("dialect", "robfig")
	rob.Set("expr", "0 0 2 * * *")
	r = c.postForm("/monitors", rob)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	rm, err := b.store.MonitorGetBySlug(ctx, b.project.ID, "robfig-job")
	require.NoError(t, err)
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 0 2 * * *", TZ: "Europe/Berlin",
		Dialect: monitors.DialectRobfig}, rm.Schedule)
	require.Contains(t, c.get(r.location).body, "At 02:00 every day (Europe/Berlin, as robfig/cron reads it)")
	require.Contains(t, c.get("/monitors/"+rm.ID+"/edit").body, `<option value="robfig" selected>`)
	require.NoError(t, b.store.MonitorDelete(ctx, b.project.ID, rm.ID))

	// A systemd timer.
	rob.Set("name", "Timer job")
	rob.Set("schedule_kind", "oncalendar")
	rob.Set("expr", "Mon..Fri 02:30")
	r = c.postForm("/monitors", rob)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	tm, err := b.store.MonitorGetBySlug(ctx, b.project.ID, "timer-job")
	require.NoError(t, err)
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "Mon..Fri 02:30", TZ: "Europe/Berlin"}, tm.Schedule)
	require.Contains(t, c.get("/monitors/"+tm.ID+"/edit").body, `id="kind-oncalendar" checked`)
	require.NoError(t, b.store.MonitorDelete(ctx, b.project.ID, tm.ID))
	// Its mistakes are named as a calendar expression's.
	rob.Set("expr", "Mon..Fri 25:00")
	r = c.postForm("/monitors", rob)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, `Calendar expression: &#34;Mon..Fri 25:00&#34; is not a systemd calendar expression: hour 25 is out of range`)
	require.NotContains(t, r.body, "Cron expression:")

	// An edit reconfigures the monitor and marks what the person changed.
	edit := url.Values{}
	for k, v := range form {
		edit[k] = v
	}
	edit.Set("schedule_kind", "interval")
	edit.Set("every", "15m")
	edit.Set("grace", "10m")
	r = c.postForm("/monitors/"+m.ID, edit)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	m, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 900}, m.Schedule)
	fields, err := b.store.MonitorPersonFields(ctx, b.project.ID, []string{m.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"schedule"}, fields[m.ID])
	require.Contains(t, c.get("/monitors/"+m.ID+"/edit").body, `value="15m"`)

	// Unticking the box keeps the output out of alerts.
	edit.Del("notify_output")
	r = c.postForm("/monitors/"+m.ID, edit)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	m, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.True(t, m.HideOutput)
	require.Contains(t, c.get("/monitors/"+m.ID+"/edit").body, `name="notify_output" value="on">`)

	// Pause, resume, delete.
	require.Equal(t, http.StatusSeeOther, c.postForm("/monitors/"+m.ID+"/pause", nil).status)
	m, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.True(t, m.Paused)
	require.Equal(t, monitors.StatusPaused, m.State.Status)
	require.Equal(t, http.StatusSeeOther, c.postForm("/monitors/"+m.ID+"/resume", nil).status)
	m, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.False(t, m.Paused)
	require.Equal(t, http.StatusSeeOther, c.postForm("/monitors/"+m.ID+"/delete", nil).status)
	_, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func TestMonitorListFiltersAndFragment(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.monitor(t, b.project.ID, "alpha-backup")
	b.monitor(t, b.project.ID, "beta-report")
	g := b.monitor(t, b.project.ID, "gamma-sync")
	res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{PingKey: a.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: b.clock.now().Add(-time.Minute)}},
		{PingKey: a.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: b.clock.now()}},
		{PingKey: g.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: b.clock.now().Add(-2 * time.Minute)}},
	}})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	c := b.signIn(t, "ada@example.com", b.project.ID)

	body := c.get("/").body
	require.Contains(t, body, "alpha-backup")
	require.Contains(t, body, "beta-report")
	require.Contains(t, body, `aria-label="Last 1 runs: median 1m00s, longest 1m00s"`)
	require.Contains(t, body, "A run started 2 min ago; it counts as stuck after 5 minutes.")

	body = c.get("/?status=up").body
	require.Contains(t, body, "alpha-backup")
	require.NotContains(t, body, ">beta-report<")
	body = c.get("/?q=BETA").body
	require.Contains(t, body, ">beta-report<")
	require.NotContains(t, body, ">alpha-backup<")

	// A recent outage of Vigil itself is told above the list.
	require.NotContains(t, body, "Vigil itself was not watching")
	for _, at := range []time.Time{b.clock.now().Add(-2 * time.Hour), b.clock.now().Add(-time.Hour)} {
		_, err := b.store.EvaluatorHeartbeat(ctx, &monitors.EvaluatorHeartbeatParams{Now: at, Threshold: time.Minute})
		require.NoError(t, err)
	}
	body = c.get("/").body
	require.Contains(t, body, "Vigil itself was not watching from")
	require.Contains(t, body, "(1 hour)")
	b.clock.advance(25 * time.Hour)
	require.NotContains(t, c.get("/").body, "Vigil itself was not watching", "only for a day")

	// htmx's refresh gets the rows only, with the same filter.
	r := c.do(http.MethodGet, "/?q=beta", nil, map[string]string{"HX-Request": "true", "HX-Target": "monitor-rows"})
	require.Equal(t, http.StatusOK, r.status)
	require.NotContains(t, r.body, "<html")
	require.Contains(t, r.body, `id="monitor-rows" hx-get="/?q=beta"`)
	require.Contains(t, r.body, ">beta-report<")
}

func TestAPIKeyShownOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.signIn(t, "ada@example.com", b.project.ID)
	r := c.postForm("/keys", url.Values{"name": {"deploy"}, "read_only": {"on"}})
	require.Equal(t, http.StatusCreated, r.status)
	key := regexp.MustCompile(`value="(vk_[A-Za-z0-9_-]+)"`).FindStringSubmatch(r.body)
	require.NotNil(t, key, r.body)
	require.Contains(t, r.body, "it will not be shown again")

	stored, err := b.store.APIKeyGetByHash(context.Background(), keys.HashAPIKey(key[1]))
	require.NoError(t, err)
	require.True(t, stored.ReadOnly)
	require.Equal(t, "deploy", stored.Name)
	require.NotContains(t, c.get("/keys").body, key[1], "shown once")

	require.Equal(t, http.StatusSeeOther, c.postForm("/keys/"+stored.ID+"/revoke", nil).status)
	_, err = b.store.APIKeyGetByHash(context.Background(), keys.HashAPIKey(key[1]))
	require.ErrorIs(t, err, monitors.ErrNotFound)
	require.Contains(t, c.get("/keys").body, "revoked")
}

func TestChannelSecretsAreWriteOnly(t *testing.T) {
	t.Parallel()
	eachStore(t, testChannelSecretsAreWriteOnly)
}

func testChannelSecretsAreWriteOnly(t *testing.T, b *bundle) {
	ctx := context.Background()
	c := b.signIn(t, "ada@example.com", b.project.ID)

	r := c.postForm("/channels", url.Values{"kind": {"webhook"}, "name": {"ops"}, "url": {"not a url"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "URL: ")

	r = c.postForm("/channels", url.Values{"kind": {"webhook"}, "name": {"ops"}, "url": {"https://hooks.example.com/vigil"},
		"secret": {"a-secret-of-some-length"}, "headers": {"Authorization: Bearer tok-123"}, "is_default": {"on"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	list, err := b.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.project.ID})
	require.NoError(t, err)
	require.Len(t, list, 1)
	ch := list[0]
	require.True(t, ch.IsDefault)
	require.JSONEq(t, `{"url":"https://hooks.example.com/vigil","secret":"a-secret-of-some-length","headers":{"Authorization":"Bearer tok-123"}}`, string(ch.Config))

	for _, page := range []string{"/channels", "/channels/" + ch.ID + "/edit"} {
		body := c.get(page).body
		require.Contains(t, body, "https://hooks.example.com/vigil")
		require.NotContains(t, body, "a-secret-of-some-length", page)
		require.NotContains(t, body, "tok-123", page)
	}

	// The edit form warns that a new URL forgets the stored secrets.
	require.Contains(t, c.get("/channels/"+ch.ID+"/edit").body,
		"Changing the URL forgets the stored Signing secret and Headers unless you enter them again here")

	// Saving without retyping the secrets keeps them; "remove" drops one.
	r = c.postForm("/channels/"+ch.ID, url.Values{"name": {"ops on-call"}, "url": {"https://hooks.example.com/vigil"}, "clear_headers": {"on"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	got, err := b.store.ChannelGet(ctx, b.project.ID, ch.ID)
	require.NoError(t, err)
	require.Equal(t, "ops on-call", got.Name)
	require.False(t, got.IsDefault)
	require.JSONEq(t, `{"url":"https://hooks.example.com/vigil","secret":"a-secret-of-some-length"}`, string(got.Config))
	require.Contains(t, c.get("/channels").body, "Saved the channel ops on-call.")

	// A new URL forgets the secrets not entered again, and says so.
	r = c.postForm("/channels/"+ch.ID, url.Values{"name": {"ops on-call"}, "url": {"https://hooks.example.com/v2"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	got, err = b.store.ChannelGet(ctx, b.project.ID, ch.ID)
	require.NoError(t, err)
	require.JSONEq(t, `{"url":"https://hooks.example.com/v2"}`, string(got.Config))
	require.Contains(t, c.get("/channels").body, "The stored Signing secret was forgotten because the URL changed: enter it again if the new address needs it.")

	// No test button without a sender; with one, it sends.
	require.NotContains(t, c.get("/channels").body, "Send test")
	require.Equal(t, http.StatusNotImplemented, c.postForm("/channels/"+ch.ID+"/test", nil).status)
}

type tester struct {
	mu   sync.Mutex
	sent []string
	err  error
}

func (s *tester) TestChannel(_ context.Context, ch *monitors.Channel) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, ch.ID)
	return s.err
}

func TestChannelTestButton(t *testing.T) {
	t.Parallel()
	sender := &tester{}
	b := setup(t, func(c *web.Config) { c.ChannelTester = sender })
	ch, err := b.store.ChannelCreate(context.Background(), &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: b.project.ID,
		Kind: "ntfy", Name: "phone", Config: json.RawMessage(`{"url":"https://ntfy.sh/vigil-test"}`), Now: b.clock.now()})
	require.NoError(t, err)
	c := b.signIn(t, "ada@example.com", b.project.ID)
	require.Contains(t, c.get("/channels").body, "Send test")

	r := c.postForm("/channels/"+ch.ID+"/test", nil)
	require.Equal(t, http.StatusSeeOther, r.status)
	require.Contains(t, c.get("/channels").body, "Sent a test notification to phone.")
	sender.err = errTestRefused
	c.postForm("/channels/"+ch.ID+"/test", nil)
	require.Contains(t, c.get("/channels").body, "The test notification to phone failed: the receiver answered 403")
	require.Equal(t, []string{ch.ID, ch.ID}, sender.sent)
}

var errTestRefused = errorString("the receiver answered 403")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *web.Config) { c.LoginRate, c.LoginBurst = rate.Every(time.Hour), 2 })
	c := b.client(t)
	b.user(t, "ada@example.com", "correct horse battery", b.project.ID)
	for i := range 2 {
		r := c.do(http.MethodPost, "/login", url.Values{"email": {"ada@example.com"}, "password": {"guess"}},
			map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i)})
		require.Equal(t, http.StatusUnauthorized, r.status)
	}
	// A forged X-Forwarded-For does not make another client: no proxy is
	// trusted.
	r := c.do(http.MethodPost, "/login", url.Values{"email": {"ada@example.com"}, "password": {"correct horse battery"}},
		map[string]string{"X-Forwarded-For": "198.51.100.7"})
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Contains(t, r.body, "Too many sign-in attempts")
}

func TestStaticAndHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := b.client(t)
	r := c.get("/login")
	require.Equal(t, http.StatusSeeOther, r.status, "no user yet: the front page offers the first account")
	r = c.get("/")
	require.Contains(t, r.header.Get("Content-Security-Policy"), "script-src 'self'")
	require.Equal(t, "DENY", r.header.Get("X-Frame-Options"))
	css := regexp.MustCompile(`href="(/static/app\.css\?v=[0-9a-f]+)"`).FindStringSubmatch(r.body)
	require.NotNil(t, css)
	r = c.get(css[1])
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.header.Get("Cache-Control"), "immutable")
	require.Contains(t, r.header.Get("Content-Type"), "text/css")
	r = c.get("/static/htmx.min.js")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "no-cache", r.header.Get("Cache-Control"), "an unversioned URL is revalidated")
	require.Equal(t, http.StatusNotFound, c.get("/static/../web.go").status)
	require.Contains(t, c.get("/static/NOTICE").body, "htmx 2.0.11")
}

type deliveries map[string][]web.Delivery

func (d deliveries) IncidentDeliveries(_ context.Context, _ string, ids []string) (map[string][]web.Delivery, error) {
	out := map[string][]web.Delivery{}
	for _, id := range ids {
		if list, ok := d[id]; ok {
			out[id] = list
		}
	}
	return out, nil
}

// TestMonitorPageTimeline checks the words the monitor page uses for each
// kind of occurrence, and the delivery attempts of its incidents.
func TestMonitorPageTimeline(t *testing.T) {
	t.Parallel()
	listed := deliveries{}
	b := setup(t, func(c *web.Config) { c.Deliveries = listed })
	ctx := context.Background()
	m := b.monitor(t, b.project.ID, "etl")
	ch, err := b.store.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: b.project.ID, Kind: "webhook",
		Name: "ops", Config: json.RawMessage(`{"url":"https://hooks.example.com/x"}`), IsDefault: true, Now: b.clock.now()})
	require.NoError(t, err)
	t0 := b.clock.now().Add(-time.Hour)
	code := 3
	retryAt := t0.Add(10 * time.Minute)
	var batch []*monitors.PingRecordParams
	for _, p := range []monitors.Ping{
		{Kind: monitors.PingStart, At: t0, RID: "a", Attempt: 1},
		{Kind: monitors.PingFail, At: t0.Add(time.Minute), RID: "a", Attempt: 1, ExitCode: &code, RetryAt: &retryAt, Body: "disk full"},
		{Kind: monitors.PingStart, At: t0.Add(10 * time.Minute), RID: "b", Attempt: 2},
		{Kind: monitors.PingSuccess, At: t0.Add(12 * time.Minute), RID: "b", Attempt: 2},
		{Kind: monitors.PingSkip, At: t0.Add(20 * time.Minute)},
		{Kind: monitors.PingStart, At: t0.Add(30 * time.Minute), RID: "c"},
		{Kind: monitors.PingCancel, At: t0.Add(31 * time.Minute), RID: "c"},
		{Kind: monitors.PingFail, At: t0.Add(40 * time.Minute), Attempt: 1},
		{Kind: monitors.PingStart, At: t0.Add(50 * time.Minute), RID: "d"},
	} {
		batch = append(batch, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: p})
	}
	res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: batch})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
	incs, err := b.store.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: b.project.ID, MonitorID: m.ID})
	require.NoError(t, err)
	require.Len(t, incs, 1, "the final failure opened an incident")
	listed[incs[0].ID] = []web.Delivery{
		{ChannelID: ch.ID, Event: "incident.opened", Attempt: 1, At: t0.Add(40 * time.Minute), Outcome: "retrying", StatusCode: 502, Error: "bad gateway"},
		{ChannelID: ch.ID, Event: "incident.opened", Attempt: 2, At: t0.Add(41 * time.Minute), Outcome: "sent", StatusCode: 200},
	}

	c := b.signIn(t, "ada@example.com", b.project.ID)
	body := c.get("/monitors/" + m.ID).body
	for _, want := range []string{
		`<span class="outcome outcome-retried">failed, retry announced</span>`,
		`<span class="outcome outcome-ok">succeeded</span>`,
		`<span class="outcome outcome-skipped">skipped</span>`,
		`<span class="outcome outcome-cancelled">cancelled</span>`,
		`<span class="outcome outcome-failed">failed</span>`,
		`<span class="outcome outcome-running">running</span>`,
		"exit status 3, run a", "1m00s", "2m00s",
		"retry at", "disk full",
		"etl failed at", // why the incident opened
		"ops (webhook)", "opened, attempt 1: <span class=\"delivery delivery-retrying\">retrying</span> <span class=\"muted\">(HTTP 502; bad gateway)</span>",
		"opened, attempt 2: <span class=\"delivery delivery-sent\">sent</span>",
		"Alerts go to", "ops (the project&#39;s default channels)",
	} {
		require.Contains(t, body, want)
	}
	require.Equal(t, 1, strings.Count(body, "class=\"status status-down\""), "one status badge: down")
}

// TestSetupLimits: setup attempts are limited per address before the token
// is checked or a password hashed, and an account made meanwhile (by
// "vigil users create") closes the form before any hashing.
func TestSetupLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *web.Config) { c.LoginRate, c.LoginBurst = rate.Every(time.Hour), 3 })
	c := b.client(t)
	form := url.Values{"token": {"wrong"}, "email": {"eve@example.com"}, "password": {"long enough 1"}, "password2": {"long enough 1"}}
	for range 3 {
		require.Equal(t, http.StatusForbidden, c.post("/setup", form).status)
	}
	r := c.post("/setup", form)
	require.Equal(t, http.StatusTooManyRequests, r.status)
	require.Equal(t, "60", r.header.Get("Retry-After"))
	require.Contains(t, r.body, "Too many setup attempts")
	// The right token does not get past the limit either.
	form.Set("token", testSetupToken)
	require.Equal(t, http.StatusTooManyRequests, c.post("/setup", form).status)

	b2 := setup(t)
	hash, err := web.HashPassword("long enough 9")
	require.NoError(t, err)
	_, err = b2.store.UserCreate(context.Background(), &monitors.UserCreateParams{ID: keys.NewID(), Email: "ops@example.com",
		PasswordHash: hash, ProjectIDs: []string{b2.project.ID}, Now: time.Now()})
	require.NoError(t, err)
	r = b2.client(t).post("/setup", form)
	require.Equal(t, http.StatusConflict, r.status)
	require.Contains(t, r.body, "An account exists already")
}

// TestMonitorPageSourceAndRetries: the monitor page says what a declared
// monitor's source did (an undeclared monitor is not paused) and how long
// its retry policy's retries may take.
func TestMonitorPageSourceAndRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := b.clock.now()
	m := &monitors.Monitor{ID: keys.NewID(), ProjectID: b.project.ID, Name: "sync", Slug: "sync", PingKey: keys.NewPingKey(),
		Source: "billing", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"},
		RetryPolicy: &monitors.RetryPolicy{Name: "hangfire-default", MaxRetries: 10,
			MaxDelaysSeconds: []int64{44, 74, 118, 212, 416, 814, 1514, 2648, 4372, 6866}},
		CreatedAt: now, UpdatedAt: now}
	m.ApplyDefaults()
	m.State.Undeclared = true
	require.NoError(t, b.store.MonitorInsert(context.Background(), m))

	body := b.signIn(t, "ada@example.com", b.project.ID).get("/monitors/" + m.ID).body
	require.Contains(t, body, "declared by billing (no longer declared: undeclared, not watched, history kept)")
	require.NotContains(t, body, "paused, history kept")
	require.Contains(t, body, "<dt>Retries</dt><dd>hangfire-default: up to 10, over 4 hours 44 minutes at most</dd>")
	require.Contains(t, body, `data-field="retry_policy"`, "the advice card")
}

// TestMonitorListETagAndPages: the list's refresh carries an ETag, an
// unchanged list answers 304 to it, a change (a ping, or time moving a
// relative time) answers 200 with another tag; a long list comes in pages.
func TestMonitorListETagAndPages(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.monitor(t, b.project.ID, "alpha-backup")
	c := b.signIn(t, "ada@example.com", b.project.ID)
	rows := map[string]string{"HX-Request": "true", "HX-Target": "monitor-rows"}
	conditional := func(tag string) map[string]string {
		return map[string]string{"HX-Request": "true", "HX-Target": "monitor-rows", "If-None-Match": tag}
	}

	r := c.do(http.MethodGet, "/", nil, rows)
	require.Equal(t, http.StatusOK, r.status)
	tag := r.header.Get("ETag")
	require.NotEmpty(t, tag)
	require.Contains(t, r.body, `data-etag="`+html.EscapeString(tag)+`"`, "the rows carry their tag")
	require.Contains(t, c.get("/").body, `data-etag="`+html.EscapeString(tag)+`"`, "the full page's rows too")

	r = c.do(http.MethodGet, "/", nil, conditional(tag))
	require.Equal(t, http.StatusNotModified, r.status)
	require.Empty(t, r.body)
	r = c.do(http.MethodGet, "/?q=alpha", nil, conditional(tag))
	require.Equal(t, http.StatusOK, r.status, "another filter is another list")

	res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{PingKey: a.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: b.clock.now()}}}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	r = c.do(http.MethodGet, "/", nil, conditional(tag))
	require.Equal(t, http.StatusOK, r.status, "a ping changed the list")
	tag = r.header.Get("ETag")
	require.Equal(t, http.StatusNotModified, c.do(http.MethodGet, "/", nil, conditional(tag)).status)
	b.clock.advance(time.Minute)
	r = c.do(http.MethodGet, "/", nil, conditional(tag))
	require.Equal(t, http.StatusOK, r.status, "the last ping is a minute older")
	require.Contains(t, r.body, "1 min ago")

	for _, bad := range []string{"0", "-1", "two"} {
		r := c.get("/?page=" + bad)
		require.Equal(t, http.StatusBadRequest, r.status, bad)
		require.Contains(t, r.body, "page must be a whole number from 1")
	}

	// 501 monitors: two pages.
	for i := range 500 {
		b.monitor(t, b.project.ID, fmt.Sprintf("job-%03d", i))
	}
	body := c.get("/").body
	require.Equal(t, 500, strings.Count(body, `<tr class="row-`))
	require.True(t, strings.Contains(body, `href="/?page=2"`), pager(body))
	require.True(t, strings.Contains(body, "Monitors 1 to 500 of 501 (page 1 of 2)"), pager(body))
	body = c.get("/?page=2").body
	require.Equal(t, 1, strings.Count(body, `<tr class="row-`))
	require.True(t, strings.Contains(body, `href="/?page=1"`), pager(body))
	require.True(t, strings.Contains(body, `hx-get="/?page=2"`), "the refresh keeps the page")
	require.True(t, strings.Contains(c.get("/?page=9").body, "(page 2 of 2)"), "past the end: the last page")
	body = c.get("/?q=job-00").body
	require.Equal(t, 10, strings.Count(body, `<tr class="row-`), "a filter narrows before paging")
	require.False(t, strings.Contains(body, "page 1 of"))
}

// pager returns the list's pager from a page, for failure messages.
func pager(body string) string {
	if i := strings.Index(body, `<nav class="pager"`); i >= 0 {
		return body[i:min(len(body), i+600)]
	}
	return "no pager"
}

// TestChannelFormAlerting: the channel form sets the late warning and the
// grouping, shows the kind's default, refuses a bad number naming the
// field, and leaves both out for the kinds that page.
func TestChannelFormAlerting(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c := b.signIn(t, "ada@example.com", b.project.ID)
		body := c.get("/channels/new?kind=slack").body
		require.Contains(t, body, `name="notify_late"`)
		require.Contains(t, body, `name="group_seconds" type="number" min="0" max="600" inputmode="numeric" value="30"`)
		require.NotContains(t, c.get("/channels/new?kind=pagerduty").body, `name="group_seconds"`)

		form := url.Values{"kind": {"slack"}, "name": {"team"}, "webhook_url": {"https://hooks.slack.com/services/T000/B000/XXXX"},
			"notify_late": {"on"}, "group_seconds": {"ten"}}
		r := c.postForm("/channels", form)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.body, "Group seconds: a whole number of seconds from 0 to 600.")
		form.Set("group_seconds", "900")
		r = c.postForm("/channels", form)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.body, "must be between 0 and 600")
		form.Set("group_seconds", "45")
		r = c.postForm("/channels", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		list, err := b.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.project.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.True(t, list[0].NotifyLate)
		require.Equal(t, 45, list[0].GroupSeconds)
		listed := c.get("/channels").body
		require.Contains(t, listed, `<span class="pill">late warning</span>`)
		require.Contains(t, listed, `<span class="pill">groups 45 s</span>`)

		r = c.postForm("/channels/"+list[0].ID, url.Values{"name": {"team"}, "webhook_url": {"https://hooks.slack.com/services/T000/B000/XXXX"},
			"group_seconds": {"0"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := b.store.ChannelGet(ctx, b.project.ID, list[0].ID)
		require.NoError(t, err)
		require.False(t, got.NotifyLate, "an unticked box turns the warning off")
		require.Zero(t, got.GroupSeconds)
	})
}

// TestMonitorFormRunRules: the run rules are off on a new monitor, set
// from the form, said in words on the monitor page, and their mistakes
// shown by their fields.
func TestMonitorFormRunRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	c := b.signIn(t, "ada@example.com", b.project.ID)
	blank := c.get("/monitors/new").body
	require.Contains(t, blank, `<input id="m-minrt" name="min_runtime" value=""`)
	require.Contains(t, blank, `<option value="ignore" selected>ignore</option>`)
	form := url.Values{"name": {"Nightly backup"}, "schedule_kind": {"cron"}, "expr": {"0 2 * * *"}, "tz": {"Europe/Berlin"},
		"grace": {"10m"}, "max_runtime": {"2h"}, "alert_on_failure": {"final"}, "overlap": {"alert"},
		"failure_threshold": {"1"}, "recovery_threshold": {"1"},
		"min_runtime": {"1m"}, "early": {"5m"}, "too_often": {"alert"}}
	r := c.postForm("/monitors", form)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	m, err := b.store.MonitorGetBySlug(ctx, b.project.ID, "nightly-backup")
	require.NoError(t, err)
	require.EqualValues(t, 60, m.MinRuntimeSeconds)
	require.EqualValues(t, 300, m.EarlySeconds)
	require.Equal(t, monitors.TooOftenAlert, m.TooOften)

	page := c.get(r.location).body
	require.Contains(t, page, "A success in less than 1 minute opens a too_fast incident")
	require.Contains(t, page, "A run that starts more than 5 minutes before its occurrence opens an early incident")
	require.Contains(t, page, "A second success for one occurrence opens a too_often incident")
	edit := c.get("/monitors/" + m.ID + "/edit").body
	require.Contains(t, edit, `name="min_runtime" value="1m"`)
	require.Contains(t, edit, `<option value="alert" selected>alert</option>`)

	// Mistakes, by their fields; nothing is stored.
	bad := url.Values{}
	for k, v := range form {
		bad[k] = v
	}
	bad.Set("name", "Other")
	bad.Set("schedule_kind", "interval")
	bad.Set("every", "1h")
	r = c.postForm("/monitors", bad)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "Early: is for cron and oncalendar schedules only")
	require.Contains(t, r.body, `id="m-early-err"`)
	bad.Set("early", "")
	bad.Set("min_runtime", "3h")
	r = c.postForm("/monitors", bad)
	require.Equal(t, http.StatusUnprocessableEntity, r.status)
	require.Contains(t, r.body, "Min runtime: 10800 must be less than the max runtime (2h")
	list, err := b.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.project.ID})
	require.NoError(t, err)
	require.Len(t, list, 1)
}

// TestChannelFormReport: the channel form sets and clears a channel's
// report, refuses a value that is not weekly or monthly naming the field,
// and leaves the field out for the kinds that carry no reports.
func TestChannelFormReport(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c := b.signIn(t, "ada@example.com", b.project.ID)
		body := c.get("/channels/new?kind=email").body
		require.Contains(t, body, `<select id="c-report" name="report"`)
		require.Contains(t, body, `<option value="" selected>No report</option>`)
		for _, kind := range []string{"pagerduty", "opsgenie", "discord", "teams", "telegram", "ntfy"} {
			require.NotContains(t, c.get("/channels/new?kind="+kind).body, `name="report"`, kind)
		}

		form := url.Values{"kind": {"webhook"}, "name": {"reports"}, "url": {"https://example.com/hook"}, "report": {"daily"}}
		r := c.postForm("/channels", form)
		require.Equal(t, http.StatusUnprocessableEntity, r.status)
		require.Contains(t, r.body, "Report: &#34;daily&#34; is not weekly or monthly")
		form.Set("report", "weekly")
		r = c.postForm("/channels", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		list, err := b.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.project.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, monitors.ReportWeekly, list[0].Report)
		require.Contains(t, c.get("/channels").body, `<span class="pill">weekly report</span>`)
		require.Contains(t, c.get("/channels/"+list[0].ID+"/edit").body, `<option value="weekly" selected>`)

		r = c.postForm("/channels/"+list[0].ID, url.Values{"name": {"reports"}, "url": {"https://example.com/hook"}, "report": {"monthly"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := b.store.ChannelGet(ctx, b.project.ID, list[0].ID)
		require.NoError(t, err)
		require.Equal(t, monitors.ReportMonthly, got.Report)
		r = c.postForm("/channels/"+list[0].ID, url.Values{"name": {"reports"}, "url": {"https://example.com/hook"}, "report": {""}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err = b.store.ChannelGet(ctx, b.project.ID, list[0].ID)
		require.NoError(t, err)
		require.Equal(t, monitors.ReportNone, got.Report)
	})
}

// TestMonitorPageSaysFlapping: a monitor whose incidents opened and
// resolved four times in a few minutes says on its page since when it
// flaps, and that its incidents are not notified.
func TestMonitorPageSaysFlapping(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		c := b.signIn(t, "ada@example.com", b.project.ID)
		m := b.monitor(t, b.project.ID, "flaky")
		require.NotContains(t, c.get("/monitors/"+m.ID).body, "Flapping since")
		at := b.clock.now()
		for i := range monitors.FlapThreshold + 1 {
			storetest.MustRecord(t, b.store, storetest.Ping(m, monitors.PingFail, at.Add(time.Duration(2*i)*time.Minute)))
			storetest.MustRecord(t, b.store, storetest.Ping(m, monitors.PingSuccess, at.Add(time.Duration(2*i+1)*time.Minute)))
		}
		body := c.get("/monitors/" + m.ID).body
		require.Contains(t, body, "Flapping since")
		require.Contains(t, body, "not notified until none opens for an hour")
		// An incident open while it flaps says what it waits for.
		storetest.MustRecord(t, b.store, storetest.Ping(m, monitors.PingFail, at.Add(time.Duration(2*monitors.FlapThreshold+2)*time.Minute)))
		body = c.get("/monitors/" + m.ID).body
		require.Contains(t, body, "Opened while the monitor flaps: notified when it is stable again, if still open.")
		require.NotContains(t, body, "Opened while snoozed")
	})
}
