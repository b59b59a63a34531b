package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// startServer runs a server on a fresh SQLite file until the test ends and
// returns it, its base URL and its admin key.
func startServer(t *testing.T) (*server.Server, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, testConfig(testdb.SQLitePath(t)), testdb.Logger(t))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return srv, "http://" + srv.Addr(), srv.Bootstrapped.APIKey
}

// readmeSection returns the README's section with that heading, up to the
// next heading of the same level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	require.NotEqual(t, -1, i, "README has no %q", heading)
	s = s[i+1:]
	if j := strings.Index(s[len(heading):], "\n## "); j >= 0 {
		s = s[:len(heading)+j]
	}
	return s
}

var shBlockRE = regexp.MustCompile("(?s)```sh\n(.*?)```")

// TestReadmeAPIExamples runs the README's curl examples of the management
// API, as written, against a real server, in the order they come (as a
// reader pasting them into one shell would), and checks that every path
// they call is a route.
func TestReadmeAPIExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	section := readmeSection(t, "## Management API")
	var script strings.Builder
	for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
		script.WriteString("\n")
	}
	require.Contains(t, script.String(), "curl", "the section has curl examples")

	// Every path the examples call is served.
	e, ok := srv.Handler().(*echo.Echo)
	require.True(t, ok)
	pathRE := regexp.MustCompile(`\$VIGIL_URL(/[^"?\s]*)`)
	paths := pathRE.FindAllStringSubmatch(section, -1)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		path := regexp.MustCompile(`\$[A-Z_]+`).ReplaceAllString(p[1], "x")
		found := false
		for _, r := range e.Routes() {
			if routeMatches(r.Path, path) {
				found = true
				break
			}
		}
		require.True(t, found, "README calls %s, which no route serves", p[1])
	}

	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the README's examples were only checked against the route table", tool)
		}
	}
	// A read-only key, as "vigil keys create --read-only" makes, for the
	// examples of /metrics/project/{key}.
	roKey, prefix, hash := keys.NewAPIKey()
	_, err := srv.Store().APIKeyCreate(context.Background(), &monitors.APIKeyCreateParams{ID: keys.NewID(),
		ProjectID: srv.Bootstrapped.Project.ID, Name: "prometheus", Prefix: prefix, Hash: hash, ReadOnly: true, Now: time.Now()})
	require.NoError(t, err)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key, "VIGIL_READONLY_KEY="+roKey)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())

	// What the README says the answers hold, they hold.
	require.Contains(t, out.String(), `"name":"nightly-import"`)
	require.NotContains(t, out.String(), "a-long-random-shared-secret", "channel secrets are never returned")
	require.Regexp(t, `https?://[^ ]+/badge/[^ ]+\.svg`, out.String())
	require.Contains(t, out.String(), `vigil_monitors{status="new"}`)
	var warning string
	jsonBlock := regexp.MustCompile(`(?s)"warnings": \["(.*?)"\]`).FindStringSubmatch(readmeSection(t, "## Management API"))
	require.NotNil(t, jsonBlock, "the README shows a warning")
	warning = jsonBlock[1]
	require.Contains(t, out.String(), warning, "the README's warning is the server's")
}

// routeMatches reports whether an echo route path serves path.
func routeMatches(route, path string) bool {
	rs, ps := strings.Split(route, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i := range rs {
		if !strings.HasPrefix(rs[i], ":") && rs[i] != ps[i] {
			return false
		}
	}
	return true
}

// TestMetricsEndpoint scrapes /metrics: the API's collectors, the parts'
// metrics and Go's own are on one registry.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	_, base, key := startServer(t)
	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/monitors", strings.NewReader(`{"name":"job"}`))
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	code, body := get(t, base+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, want := range []string{
		`vigil_monitors{status="new"} 1`,
		`vigil_incidents_open{kind="missed"} 0`,
		`vigil_store_scrape_ok 1`,
		`vigil_api_requests_total{code="201",method="POST",route="/api/v1/monitors"} 1`,
		`go_goroutines `,
	} {
		require.Contains(t, body, want)
	}

	// Badges are served without a key, beside the dashboard's routes.
	req, err = http.NewRequest(http.MethodGet, base+"/api/v1/project", nil)
	require.NoError(t, err)
	req.Header.Set("X-Api-Key", key)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	var prj struct {
		Badges map[string]struct{ SVG string } `json:"badges"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&prj))
	resp.Body.Close()
	// The configured base URL names port 0; call the bound address.
	badge, err := url.Parse(prj.Badges["*"].SVG)
	require.NoError(t, err)
	resp, err = http.Get(base + badge.EscapedPath())
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "image/svg+xml; charset=utf-8", resp.Header.Get("Content-Type"))

	// The OpenAPI document is served without a key, and is JSON.
	code, body = get(t, base+"/api/v1/openapi.json")
	require.Equal(t, http.StatusOK, code)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	require.Equal(t, "3.0.3", doc["openapi"])
}

// TestReadmeMaintenanceExamples runs the curl examples of the README's
// "Maintenance windows" section against a real server.
func TestReadmeMaintenanceExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	section := readmeSection(t, "### Maintenance windows")
	if j := strings.Index(section, "\n### "); j >= 0 {
		section = section[:j]
	}
	var script strings.Builder
	for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
		script.WriteString("\n")
	}
	require.Contains(t, script.String(), "/api/v1/maintenance-windows")
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), `"name": "sunday patching"`)
	require.Contains(t, out.String(), `"duration_seconds":3600`)
	require.Contains(t, out.String(), `"ended_at":"`)
	ws, err := srv.Store().MaintenanceWindowList(context.Background(), srv.Bootstrapped.Project.ID)
	require.NoError(t, err)
	require.Len(t, ws, 1, "the recurring one was deleted")
	require.Equal(t, "etl upgrade", ws[0].Name)
}

// readmeScript runs the sh blocks of the README's section heading (up to
// its next heading of any level below ##) against the server at base.
func readmeScript(t *testing.T, heading, base, key string) string {
	t.Helper()
	section := readmeSection(t, heading)
	if j := strings.Index(section, "\n### "); j >= 0 {
		section = section[:j]
	}
	var script strings.Builder
	for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
		script.WriteString("\n")
	}
	require.NotEmpty(t, script.String(), "the README's %s has examples", heading)
	for _, tool := range []string{"bash", "curl", "jq", "date"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())
	return out.String()
}

// TestReadmeSnoozeExamples runs the curl examples of the README's
// "Snooze" section against a real server: a snooze for an hour, until a
// time, one too long refused naming the field, and its end.
func TestReadmeSnoozeExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	out := readmeScript(t, "### Snooze", base, key)
	require.Contains(t, out, `{"slug":"nightly-backup","snoozed_until":"`)
	require.Contains(t, out, `{"snoozed":true}`)
	require.Contains(t, out, `"error":"seconds: must be between 1 and 604800 (7d)","field":"seconds"`)
	require.Contains(t, out, `{"slug":"nightly-backup","snoozed_until":null}`)
	m, err := srv.Store().MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "nightly-backup")
	require.NoError(t, err)
	require.Nil(t, m.SnoozedUntil, "ended")
}

// TestReadmeDependenciesExamples runs the curl examples of the README's
// "Dependencies" section against a real server: dependencies by ID and
// by slug, a cycle refused naming it, and a failure under a failing
// parent opening suppressed.
func TestReadmeDependenciesExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	out := readmeScript(t, "### Dependencies", base, key)
	require.Contains(t, out, `{"slug":"etl-load","depends_on":true}`)
	load, err := srv.Store().MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "etl-load")
	require.NoError(t, err)
	require.Contains(t, out, `{"slug":"report","depends_on":["`+load.ID+`"]}`)
	require.Contains(t, out, `"error":"depends_on: cycle db-check → report → etl-load → db-check","field":"depends_on"`)
	require.Contains(t, out, `{"monitor":"etl-load","state":"suppressed","suppressed":true}`)
	require.Contains(t, out, `{"monitor":"db-check","state":"open","suppressed":false}`)
}

// TestReadmeRunRulesExamples runs the README's curl examples of the run
// rules against a real server: a backup done at once opens too_fast, the
// other rules are set by PATCH, and early_seconds on an interval is
// refused naming the field.
func TestReadmeRunRulesExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	section := readmeSection(t, "### Runs that succeed wrongly")
	var script strings.Builder
	for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
		script.WriteString("\n")
	}
	require.Contains(t, script.String(), "min_runtime_seconds")
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), `{"kind":"too_fast","summary":"nightly-backup: run \"run-1\" succeeded at `)
	require.Contains(t, out.String(), `less than its min runtime of 1m"}`)
	require.Contains(t, out.String(), `{"min_runtime_seconds":60,"early_seconds":300,"too_often":"alert"}`)
	require.Contains(t, out.String(), `"error":"early_seconds: is for cron and oncalendar schedules only`)
	m, err := srv.Store().MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "nightly-backup")
	require.NoError(t, err)
	require.Equal(t, monitors.StatusDown, m.State.Status)
	_, err = srv.Store().MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "queue-drain")
	require.ErrorIs(t, err, monitors.ErrNotFound, "nothing stored")
}

// TestReadmeReportExamples runs the curl examples of the README's
// "Reports" section against a real server: a channel's report is set,
// changed, stopped, and refused on a kind that pages, naming the field.
func TestReadmeReportExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	section := readmeSection(t, "### Reports")
	if j := strings.Index(section, "\n### "); j >= 0 {
		section = section[:j]
	}
	var script strings.Builder
	for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
		script.WriteString("\n")
	}
	require.Contains(t, script.String(), `"report": "weekly"`)
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), `"report": "weekly"`)
	require.Contains(t, out.String(), `{"report":"monthly"}`)
	require.Contains(t, out.String(), `{"report":null}`, "null stops the reports: the field is absent")
	require.Contains(t, out.String(), `"field":"report"`)
	chs, err := srv.Store().ChannelList(context.Background(), &monitors.ChannelListParams{ProjectID: srv.Bootstrapped.Project.ID})
	require.NoError(t, err)
	require.Len(t, chs, 1, "the pagerduty channel was refused")
	require.Equal(t, monitors.ReportNone, chs[0].Report)
}

// TestReadmeStatusPageExamples runs the curl examples of the README's
// "Status pages" section against a real server: a page made unpublished
// (404), published, a note on the incident of a failing monitor, and the
// public JSON and feed showing the public name and the note.
func TestReadmeStatusPageExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	section := readmeSection(t, "## Status pages")
	var script strings.Builder
	for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
		script.WriteString(m[1])
		script.WriteString("\n")
	}
	require.Contains(t, script.String(), "/api/v1/status-pages")
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())
	got := out.String()
	require.True(t, strings.HasPrefix(got, "404\n"), "unpublished first:\n%s", got)
	require.Contains(t, got, `"published":true`)
	require.Contains(t, got, `"body":"The backup disk is full; we are clearing it and will re-run tonight."`)
	require.Contains(t, got, `"name": "Database backup"`)
	require.Contains(t, got, `"status_text": "Down: failed run"`)
	require.Contains(t, got, "<title>Database backup: failed run</title>")
	require.NotContains(t, got, `"pg-dump-nightly"`+"\n", "the public JSON does not name it")
	pages, err := srv.Store().StatusPageList(context.Background(), srv.Bootstrapped.Project.ID)
	require.NoError(t, err)
	require.Len(t, pages, 1)
	require.True(t, pages[0].Published)
}

// TestReadmeAlertingExamples runs the curl examples of the README's
// sections on the late warning, grouping and flapping against a real
// server: the fields are set and refused as they say, and four failures
// and recoveries in a row make a monitor flap.
func TestReadmeAlertingExamples(t *testing.T) {
	t.Parallel()
	srv, base, key := startServer(t)
	var script strings.Builder
	for _, title := range []string{"### A warning before the page", "### Grouping", "### Flapping"} {
		section := readmeSection(t, title)
		if j := strings.Index(section, "\n### "); j >= 0 {
			section = section[:j]
		}
		for _, m := range shBlockRE.FindAllStringSubmatch(section, -1) {
			script.WriteString(m[1])
			script.WriteString("\n")
		}
	}
	require.Contains(t, script.String(), `"notify_late": true`)
	require.Contains(t, script.String(), `"group_seconds": 60`)
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script.String())
	cmd.Env = append(os.Environ(), "VIGIL_URL="+base, "VIGIL_API_KEY="+key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), "the README's examples failed:\n%s\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), `{"name":"early warning","notify_late":true,"group_seconds":0}`)
	require.Contains(t, out.String(), `"field":"notify_late"`)
	require.Contains(t, out.String(), `{"kind":"slack","group_seconds":30}`)
	require.Contains(t, out.String(), `{"group_seconds":60}`)
	require.Contains(t, out.String(), `"field":"group_seconds"`)
	require.Contains(t, out.String(), `{"name":"flaky-sync","flapping":true}`)
	chs, err := srv.Store().ChannelList(context.Background(), &monitors.ChannelListParams{ProjectID: srv.Bootstrapped.Project.ID})
	require.NoError(t, err)
	require.Len(t, chs, 2, "the pagerduty channel was refused")
	m, err := srv.Store().MonitorGetBySlug(context.Background(), srv.Bootstrapped.Project.ID, "flaky-sync")
	require.NoError(t, err)
	require.True(t, m.State.IsFlapping())
}
