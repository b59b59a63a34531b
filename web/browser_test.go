package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/cron"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// UpdateScreenshotsEnv names the variable that makes the browser test
// write its screenshots to docs/screenshots.
const UpdateScreenshotsEnv = "VIGIL_UPDATE_SCREENSHOTS"

// findChromium returns Debian's chromium, or skips the test without it;
// with CI=true a missing browser fails the test instead.
func findChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; CI must install it (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed; skipping the browser test")
	return ""
}

type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// run runs actions with a time limit, failing the test on an error.
func (b *browser) run(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	require.NoError(b.t, chromedp.Do(ctx, actions...), what)
}

// waitFor polls a JavaScript condition until it is true. A poll cut short
// by a navigation (a form that was just submitted) starts again on the new
// page.
func (b *browser) waitFor(what, expr string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			left = time.Millisecond
		}
		ctx, cancel := context.WithTimeout(b.ctx, left+5*time.Second)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(left), chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err == nil {
			return
		}
		if time.Now().Before(deadline) && (strings.Contains(err.Error(), "navigated") || strings.Contains(err.Error(), "context")) {
			time.Sleep(50 * time.Millisecond) // the new page's turn to load; not a deadline
			continue
		}
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.body ? document.body.innerText : ''"))
		b.t.Fatalf("%s: %v\npage text:\n%s", what, err, text)
	}
}

// see reports whether a JavaScript condition becomes true within timeout.
func (b *browser) see(expr string, timeout time.Duration) bool {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b.eval(`String(!!(`+expr+`))`) == "true" {
			return true
		}
		time.Sleep(100 * time.Millisecond) // polling the page, not waiting for a deadline
	}
	return false
}

func (b *browser) eval(expr string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	require.NoError(b.t, err, expr)
	return v
}

// open navigates to a path of the dashboard and waits for its heading.
func (b *browser) open(path, heading string) {
	b.t.Helper()
	b.run("open "+path, chromedp.Navigate(b.base+path))
	b.waitFor("heading "+heading, fmt.Sprintf(`[...document.querySelectorAll("h1")].some(h => h.textContent.trim() === %q)`, heading), 10*time.Second)
}

// checkLabels fails the test if a form control of the page has no label
// that a screen reader would read.
func (b *browser) checkLabels(where string) {
	b.t.Helper()
	unlabelled := b.eval(`[...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
		.filter(el => !(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby"))
		.map(el => el.name || el.id || el.outerHTML).join(", ")`)
	require.Empty(b.t, unlabelled, "controls without a label on %s", where)
}

// fill replaces the value of an input, typing it so that htmx sees input
// events.
func (b *browser) fill(sel, value string) {
	b.t.Helper()
	b.run("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	b.eval(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel))
	b.run("fill "+sel, chromedp.SendKeys(chromedp.CSS(sel), value))
}

func (b *browser) click(sel string) {
	b.t.Helper()
	b.run("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

func (b *browser) hasText(substr string) string {
	return fmt.Sprintf(`document.body.innerText.includes(%q)`, substr)
}

// screenshot captures the whole page; with VIGIL_UPDATE_SCREENSHOTS set it
// writes docs/screenshots/name.png.
func (b *browser) screenshot(name string) { b.capture(name, chromedp.FullScreenshot(100)) }

// capture writes what shot captures as docs/screenshots/name.png, when
// VIGIL_UPDATE_SCREENSHOTS is set.
func (b *browser) capture(name string, shot chromedp.Action[[]byte]) {
	b.t.Helper()
	if os.Getenv(UpdateScreenshotsEnv) == "" {
		return
	}
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	require.NoError(b.t, err)
	dir := filepath.Join("..", "docs", "screenshots")
	require.NoError(b.t, os.MkdirAll(dir, 0o755))
	require.NoError(b.t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	b.t.Logf("wrote docs/screenshots/%s.png", name)
}

// hook is a webhook receiver.
type hook struct {
	mu     sync.Mutex
	bodies []string
	srv    *httptest.Server
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies = append(h.bodies, string(b))
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) received() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies...)
}

// apiTestSend asks the management API to send a test notification, and
// reports whether the server can (false: 501 Not Implemented).
func apiTestSend(t *testing.T, url, apiKey string) bool {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+apiKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotImplemented {
		return false
	}
	require.Less(t, resp.StatusCode, 300, "test send: %s", b)
	return true
}

// ping sends a ping the way curl in a crontab does.
func ping(t *testing.T, url, body string) {
	t.Helper()
	var resp *http.Response
	var err error
	if body == "" {
		resp, err = http.Get(url)
	} else {
		resp, err = http.Post(url, "text/plain", strings.NewReader(body))
	}
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "ping %s: %s", url, b)
}

// TestBrowser drives the real dashboard of a real server in headless
// Chromium: the first account, a monitor made in the form with the live
// schedule preview, pings over HTTP, the list going up, late and down by
// itself, the incident, a webhook channel and its test, pause and resume,
// sign-out, and a second project's person who sees none of it.
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Port 0 without a base URL: the server binds at once, and its ping
	// URLs name the port it got.
	srv, err := server.New(ctx, server.Config{
		DatabaseURL: testdb.SQLitePath(t), Listen: "127.0.0.1:0",
		LogLevel: "info", LogFormat: "text", KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute,
		Web:      web.Config{RefreshInterval: 500 * time.Millisecond},
		Delivery: delivery.Config{AllowPrivate: true},
	}, testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	runCtx, stopServer := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Run(runCtx) }()
	defer func() {
		stopServer()
		require.NoError(t, <-served)
	}()
	store := srv.Store()
	base := "http://" + srv.Addr()

	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	require.Len(t, projects, 1)
	projectA := projects[0]
	seedMonitors(t, store, projectA.ID)

	// A default channel gets the project's incidents. Whether this server
	// delivers notifications at all is what its API says of a test send.
	oncall := newHook(t)
	onCallChannel, err := store.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: projectA.ID,
		Kind: "webhook", Name: "on-call", Config: json.RawMessage(`{"url":"` + oncall.srv.URL + `/hook"}`), IsDefault: true, Now: time.Now()})
	require.NoError(t, err)
	delivers := apiTestSend(t, base+"/api/v1/channels/"+onCallChannel.ID+"/test", srv.Bootstrapped.APIKey)
	if !delivers {
		t.Log("this server does not deliver notifications: no Send test button, and incidents list their events")
	}

	// Another project, with a monitor; its person signs up later.
	projectB, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Team B",
		PingKey: keys.NewProjectPingKey(), Now: time.Now()})
	require.NoError(t, err)
	secret := insertMonitor(t, store, projectB.ID, "team-b-secret-job", nil)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	b := &browser{t: t, ctx: bctx, base: base}
	// The first run starts the browser, on a context without a timeout.
	_, err = chromedp.Call(bctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Europe/Berlin"})
	require.NoError(t, err)
	// Every page records what the Content-Security-Policy blocked and any
	// script error, for the end of the test to check.
	_, err = chromedp.Call(bctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `
		const note = (what) => sessionStorage.setItem("problems", (sessionStorage.getItem("problems") || "") + what + "\n");
		document.addEventListener("securitypolicyviolation", e => note("CSP blocked " + e.violatedDirective + " " + e.blockedURI + " on " + location.pathname));
		window.addEventListener("error", e => note("script error: " + e.message + " on " + location.pathname));`})
	require.NoError(t, err)

	// First start: the front page says where the first account is made,
	// and the setup link opens the form.
	b.open("/", "Set up Vigil")
	b.open("/setup?token="+srv.SetupToken, "Create the first account")
	b.checkLabels("the first-account form")
	b.fill("#email", "ada@example.com")
	b.fill("#password", "correct horse battery")
	b.fill("#password2", "correct horse battery")
	b.click(`form[action="/setup"] button[type="submit"]`)
	b.waitFor("signed in to the list", `!!document.querySelector("#monitor-rows")`, 10*time.Second)
	b.open("/", "Monitors")
	hash, err := web.HashPassword("b-password-123")
	require.NoError(t, err)
	_, err = store.UserCreate(ctx, &monitors.UserCreateParams{ID: keys.NewID(), Email: "bea@example.com",
		PasswordHash: hash, ProjectIDs: []string{projectB.ID}, Now: time.Now()})
	require.NoError(t, err)
	b.waitFor("the viewer's zone", b.hasText("times in Europe/Berlin"), 5*time.Second)
	b.waitFor("seeded monitors", b.hasText("nightly-import"), 5*time.Second)
	require.NotContains(t, b.eval("document.body.innerText"), "team-b-secret-job", "another project's monitor")

	// A new monitor, with the schedule previewed as it is typed.
	b.click(`a[href="/monitors/new"]`)
	b.waitFor("the form", `!!document.querySelector("#m-expr")`, 10*time.Second)
	b.fill("#m-expr", "61 * * * *")
	b.waitFor("the error in words", `(document.querySelector(".preview-error")||{}).textContent?.includes("61")`, 5*time.Second)
	expr := "30 2 * * 1-5"
	e, err := cron.Parse(expr)
	require.NoError(t, err)
	b.fill("#m-expr", expr)
	b.fill("#m-tz", "America/New_York")
	b.waitFor("the plain reading", fmt.Sprintf(`(document.querySelector(".preview-words")||{}).textContent?.toLowerCase().includes(%q)`,
		strings.ToLower(e.Describe())), 5*time.Second)
	b.waitFor("five fire times in the zone", `document.querySelectorAll(".fire-times li").length === 5 && document.querySelector(".preview-words").textContent.includes("America/New_York")`, 5*time.Second)
	b.fill("#m-name", "db-backup")
	b.fill("#m-tags", "db backup")
	b.screenshot("edit-form")
	b.checkLabels("the monitor form")

	b.click("#kind-interval")
	b.fill("#m-every", "3s")
	b.waitFor("the interval reading", b.hasText("Expects a ping every 3 seconds"), 5*time.Second)
	b.fill("#m-grace", "2s")
	b.click(`form[action="/monitors"] button[type="submit"]`)
	b.waitFor("the monitor page", `!!document.querySelector("#ping-url")`, 10*time.Second)
	b.waitFor("created", b.hasText("Created."), 5*time.Second)
	pingURL := b.eval(`document.querySelector("#ping-url").value`)
	require.Regexp(t, `^`+base+`/ping/[0-9a-f-]{36}$`, pingURL)
	b.waitFor("snippets", fmt.Sprintf(`document.querySelector("#snippet-vigil-run").textContent.includes(%q)`, strings.TrimPrefix(pingURL, base+"/ping/")), 5*time.Second)

	// The list updates itself: up after the pings, late past the
	// interval, down with an incident past the grace period.
	b.open("/", "Monitors")
	b.eval(`String(window.vigilMarker = "still the same page")`)
	row := `document.querySelector('tr[data-slug="db-backup"] .status')`
	b.waitFor("new", row+`?.textContent.trim() === "new"`, 5*time.Second)
	// "up" lasts the 3 s interval and "late" the 2 s grace: on a machine
	// too busy to refresh the page within one of them, ping again and
	// watch the next round.
	seen := false
	for round := 1; round <= 3 && !seen; round++ {
		ping(t, pingURL+"/start", "")
		ping(t, pingURL, "backup finished: 42 tables, 1.3 GB")
		seen = b.see(row+`?.textContent.trim() === "up"`, 3*time.Second) && b.see(row+`?.textContent.trim() === "late"`, 5*time.Second)
		if !seen {
			t.Logf("round %d: the list did not show up, then late, in time", round)
		}
	}
	require.True(t, seen, "the list showed the monitor up, then late")
	b.waitFor("down", row+`?.textContent.trim() === "down"`, 8*time.Second)
	require.Equal(t, "still the same page", b.eval(`String(window.vigilMarker)`), "the list refreshed without reloading")
	b.waitFor("every seeded status", `["up","late","running","down","paused","new"].every(s => document.querySelector(".monitors .status-" + s))`, 10*time.Second)
	b.screenshot("list")
	b.checkLabels("the monitor list")
	if os.Getenv(UpdateScreenshotsEnv) != "" {
		_, err = chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		require.NoError(t, err)
		b.screenshot("list-dark")
		_, err = chromedp.Call(bctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
		require.NoError(t, err)
	}

	// Filters, by text and by status.
	b.fill("#f-q", "db-")
	b.waitFor("filtered by text", `document.querySelectorAll(".monitors tbody tr").length === 1`, 5*time.Second)
	b.eval(`const q = document.querySelector("#f-q"); q.value = ""; q.dispatchEvent(new Event("input", {bubbles: true})); ""`)
	b.waitFor("filter cleared", `document.querySelectorAll(".monitors tbody tr").length > 1`, 5*time.Second)
	b.eval(`document.querySelector("#f-status").value = "paused"; document.querySelector("#f-status").dispatchEvent(new Event("change", {bubbles: true})); ""`)
	b.waitFor("filtered by status", `document.querySelectorAll(".monitors tbody tr").length === 1 && !!document.querySelector('tr[data-slug="legacy-export"]')`, 5*time.Second)
	b.waitFor("the filter in the URL", `location.search.includes("status=paused")`, 5*time.Second)
	b.open("/", "Monitors")

	// The monitor page: the incident, why it opened, and the ping's body.
	b.click(`tr[data-slug="db-backup"] a.monitor-name`)
	b.waitFor("open incident", `!!document.querySelector(".card-alert") && document.querySelector(".card-alert").textContent.includes("missed")`, 10*time.Second)
	b.waitFor("why it opened", b.hasText("db-backup did not ping within 3s"), 5*time.Second)
	b.waitFor("the run", `document.querySelector(".history .outcome-ok")?.textContent === "succeeded"`, 5*time.Second)
	b.waitFor("missed in the timeline", `!!document.querySelector(".history .outcome-missed")`, 5*time.Second)
	b.waitFor("the ping body", `[...document.querySelectorAll("pre.body")].some(p => p.textContent.includes("42 tables"))`, 5*time.Second)
	if delivers {
		b.waitFor("the incident's delivery", `(document.querySelector(".incidents")||{}).textContent?.includes("on-call (webhook)") && document.querySelector(".incidents").textContent.includes("opened, attempt 1: sent")`, 15*time.Second)
		require.Contains(t, strings.Join(oncall.received(), "\n"), `"incident.opened"`)
	} else {
		b.waitFor("the incident's events", b.hasText("Events (1)"), 5*time.Second)
	}
	b.eval(`document.querySelectorAll(".incidents details, .pings details").forEach(d => d.open = true); ""`)
	b.screenshot("monitor")
	b.checkLabels("the monitor page")

	// The uptime strip: 90 days, each cell labelled in words; the missed
	// ping shows on today's (or, across midnight, yesterday's).
	b.waitFor("the uptime strip", `document.querySelectorAll("#uptime-strip li").length === 90 && [...document.querySelectorAll("#uptime-strip li")].every(li => /^\d{4}-\d{2}-\d{2}: /.test(li.title) && li.textContent === li.title)`, 5*time.Second)
	b.waitFor("the missed day", `[...document.querySelectorAll("#uptime-strip li")].slice(-2).some(li => li.title.includes("missed: 1") && !li.classList.contains("uptime-none"))`, 5*time.Second)
	b.capture("uptime-strip", chromedp.Screenshot(`section[aria-labelledby="uptime-h"]`))

	// Pause and resume.
	b.click(`form[action$="/pause"] button`)
	b.waitFor("paused", `document.querySelector(".status-line .status")?.textContent.trim() === "paused" && document.body.innerText.includes("Paused.")`, 10*time.Second)
	b.waitFor("incident resolved by the pause", `!document.querySelector(".card-alert")`, 5*time.Second)
	b.click(`form[action$="/resume"] button`)
	b.waitFor("resumed", `document.querySelector(".status-line .status")?.textContent.trim() === "new" && document.body.innerText.includes("Resumed.")`, 10*time.Second)

	// A webhook channel, and a test notification through it.
	receiver := newHook(t)
	b.open("/channels", "Alert channels")
	b.click(`a[href="/channels/new?kind=webhook"]`)
	b.waitFor("the webhook form", `!!document.querySelector("#c-url")`, 10*time.Second)
	b.fill("#c-name", "ops hook")
	b.checkLabels("the channel form")
	b.fill("#c-url", receiver.srv.URL+"/vigil")
	b.fill("#c-secret", "a-signing-secret-long-enough")
	b.click(`form[action="/channels"] button[type="submit"]`)
	b.waitFor("channel created", b.hasText("Created the channel ops hook."), 10*time.Second)
	// The button is there exactly when the server can send tests, as
	// POST /api/v1/channels/{id}/test can.
	testButton := `tr[data-channel="ops hook"] form[action$="/test"] button`
	if delivers {
		b.click(testButton)
		b.waitFor("test sent", b.hasText("Sent a test notification to ops hook."), 15*time.Second)
		got := receiver.received()
		require.Len(t, got, 1)
		var payload struct {
			Event string `json:"event"`
		}
		require.NoError(t, json.Unmarshal([]byte(got[0]), &payload), got[0])
		require.Equal(t, "test", payload.Event)
	} else {
		require.Equal(t, "false", b.eval(`String(!!document.querySelector('`+testButton+`'))`))
	}
	require.NotContains(t, b.eval("document.body.innerText"), "a-signing-secret-long-enough", "secrets are never shown")
	b.screenshot("channels")

	// An API key, shown once; the project's settings.
	b.open("/keys", "API keys")
	b.checkLabels("the API keys page")
	b.fill("#k-name", "deploy")
	b.click(`form[action="/keys"] button[type="submit"]`)
	b.waitFor("the key, shown once", `/^vk_[A-Za-z0-9_-]{40,}$/.test((document.querySelector("#new-key") || {}).value || "")`, 10*time.Second)
	b.open("/settings", "Project settings")
	b.checkLabels("the settings page")
	require.Equal(t, projectA.PingKey, b.eval(`document.querySelector("#ping-key").value`))

	// A phone-sized list stays readable.
	b.run("phone viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.open("/", "Monitors")
	b.capture("list-phone", chromedp.CaptureScreenshot())
	b.run("desktop viewport", chromedp.EmulateViewport(1280, 900))

	require.Empty(t, b.eval(`sessionStorage.getItem("problems") || ""`), "no page broke its CSP or threw")

	// Sign out: the pages ask to sign in again.
	b.click(`form[action="/logout"] button`)
	b.waitFor("signed out", `!!document.querySelector('form[action="/login"]')`, 10*time.Second)
	b.open("/monitors/new", "Sign in to Vigil")
	b.checkLabels("the sign-in form")

	// Someone of another project sees their monitors only.
	b.fill("#email", "bea@example.com")
	b.fill("#password", "b-password-123")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("signed in as bea", `!!document.querySelector("#m-expr")`, 10*time.Second) // back where she was going
	b.open("/", "Monitors")
	b.waitFor("her monitor", b.hasText("team-b-secret-job"), 5*time.Second)
	text := b.eval("document.body.innerText")
	for _, other := range []string{"db-backup", "nightly-import", "Default"} {
		require.NotContains(t, text, other)
	}
	dbBackup, err := store.MonitorGetBySlug(ctx, projectA.ID, "db-backup")
	require.NoError(t, err)
	b.run("open another project's monitor", chromedp.Navigate(base+"/monitors/"+dbBackup.ID))
	b.waitFor("not found", b.hasText("Not found"), 5*time.Second)
	require.NotContains(t, b.eval("document.body.innerText"), "db-backup")
	b.run("open her monitor", chromedp.Navigate(base+"/monitors/"+secret.ID))
	b.waitFor("her monitor page", `!!document.querySelector("#ping-url")`, 5*time.Second)
	require.Empty(t, b.eval(`sessionStorage.getItem("problems") || ""`), "no page broke its CSP or threw")
}

func insertMonitor(t *testing.T, store monitors.Store, projectID, slug string, fn func(m *monitors.Monitor)) *monitors.Monitor {
	t.Helper()
	now := time.Now()
	m := &monitors.Monitor{ID: keys.NewID(), ProjectID: projectID, Name: slug, Slug: slug, PingKey: keys.NewPingKey(),
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}, CreatedAt: now, UpdatedAt: now}
	if fn != nil {
		fn(m)
	}
	m.ApplyDefaults()
	require.NoError(t, m.Validate())
	require.NoError(t, store.MonitorInsert(context.Background(), m))
	return m
}

func record(t *testing.T, store monitors.Store, m *monitors.Monitor, pings ...monitors.Ping) {
	t.Helper()
	var batch []*monitors.PingRecordParams
	for _, p := range pings {
		batch = append(batch, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: p})
	}
	res, err := store.PingRecordBatch(context.Background(), &monitors.PingRecordBatchParams{Pings: batch})
	require.NoError(t, err)
	for _, r := range res {
		require.NoError(t, r.Err)
	}
}

// seedMonitors makes a project look lived in: a monitor in each status,
// with a history of runs.
func seedMonitors(t *testing.T, store monitors.Store, projectID string) {
	now := time.Now()
	runs := func(m *monitors.Monitor, every time.Duration, n int, last time.Time, durs ...time.Duration) {
		var pings []monitors.Ping
		for i := range n {
			at := last.Add(-time.Duration(n-1-i) * every)
			d := durs[i%len(durs)]
			rid := fmt.Sprintf("run-%d", i)
			pings = append(pings, monitors.Ping{Kind: monitors.PingStart, At: at.Add(-d), RID: rid},
				monitors.Ping{Kind: monitors.PingSuccess, At: at, RID: rid, RemoteAddr: "10.0.4.12", UserAgent: "curl/8.5.0"})
		}
		record(t, store, m, pings...)
	}
	nightly := insertMonitor(t, store, projectID, "nightly-import", func(m *monitors.Monitor) {
		m.Tags = []string{"etl", "nightly"}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin"}
		m.GraceSeconds = 1800
	})
	runs(nightly, 24*time.Hour, 14, now.Add(-time.Minute), 41*time.Second, 44*time.Second, 39*time.Second, 52*time.Second, 47*time.Second, 95*time.Second, 43*time.Second)

	invoice := insertMonitor(t, store, projectID, "invoice-sync", func(m *monitors.Monitor) {
		m.Tags = []string{"billing"}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "*/15 * * * *", TZ: "UTC"}
		m.MaxRuntimeSeconds = 3600
	})
	runs(invoice, 15*time.Minute, 20, now.Add(-10*time.Minute), 8*time.Second, 11*time.Second, 9*time.Second, 14*time.Second, 7*time.Second)
	record(t, store, invoice, monitors.Ping{Kind: monitors.PingStart, At: now.Add(-20 * time.Second), RID: "run-now"})

	drainer := insertMonitor(t, store, projectID, "queue-drainer", func(m *monitors.Monitor) {
		m.Tags = []string{"web"}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 600}
		m.GraceSeconds = 120
	})
	runs(drainer, 10*time.Minute, 18, now.Add(-2*time.Minute), 800*time.Millisecond, 1200*time.Millisecond, 950*time.Millisecond, 3*time.Second)

	late := insertMonitor(t, store, projectID, "cache-warmer", func(m *monitors.Monitor) {
		m.Tags = []string{"web"}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}
		m.GraceSeconds = 900
	})
	runs(late, time.Hour, 10, now.Add(-62*time.Minute), 3*time.Second, 4*time.Second, 2*time.Second)

	failing := insertMonitor(t, store, projectID, "report-mailer", func(m *monitors.Monitor) {
		m.Tags = []string{"billing", "reports"}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 7 * * 1", TZ: "America/New_York"}
	})
	code := 1
	record(t, store, failing,
		monitors.Ping{Kind: monitors.PingStart, At: now.Add(-3 * time.Minute), RID: "weekly"},
		monitors.Ping{Kind: monitors.PingFail, At: now.Add(-2 * time.Minute), RID: "weekly", ExitCode: &code,
			Body: "smtp: 421 too many connections", RemoteAddr: "10.0.4.19", UserAgent: "vigil-run"})

	insertMonitor(t, store, projectID, "legacy-export", func(m *monitors.Monitor) {
		m.Tags = []string{"etl"}
		m.Paused = true
	})
	insertMonitor(t, store, projectID, "search-reindex", func(m *monitors.Monitor) {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 3 * * 0", TZ: "Europe/London"}
	})
}
