package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// hcDo sends a request as Healthchecks' clients do (the Go client
// github.com/kristofferahl/go-healthchecksio/v2 that the Terraform provider
// uses): X-Api-Key, Content-Type application/json, a JSON body or none.
// path may be a full URL of the API (update_url and the like).
func (b *bundle) hcDo(method, path, key string, body any) (int, []byte) {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	default:
		enc, err := json.Marshal(v)
		require.NoError(b.t, err)
		rd = bytes.NewReader(enc)
	}
	url := strings.Replace(path, "https://vigil.example.com", b.srv.URL, 1)
	if strings.HasPrefix(path, "/") {
		url = b.srv.URL + path
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(b.t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	return resp.StatusCode, data
}

// hcJSON is hcDo that requires status and decodes the answer.
func (b *bundle) hcJSON(want int, method, path, key string, body any) map[string]any {
	b.t.Helper()
	status, data := b.hcDo(method, path, key, body)
	require.Equal(b.t, want, status, "%s %s: %s", method, path, data)
	var out map[string]any
	require.NoError(b.t, json.Unmarshal(data, &out), "%s", data)
	return out
}

// hcError requires an error answer {"error": "..."} with status and a
// message matching re.
func (b *bundle) hcError(want int, re, method, path, key string, body any) {
	b.t.Helper()
	status, data := b.hcDo(method, path, key, body)
	require.Equal(b.t, want, status, "%s %s: %s", method, path, data)
	var out map[string]string
	require.NoError(b.t, json.Unmarshal(data, &out), "%s", data)
	require.Len(b.t, out, 1, "only an error: %s", data)
	require.Regexp(b.t, re, out["error"])
}

// idOf reads a check's id as go-healthchecksio does: the last path
// element of its update_url.
func idOf(check map[string]any) string {
	u, _ := check["update_url"].(string)
	parts := strings.Split(u, "/")
	return parts[len(parts)-1]
}

func (b *bundle) monitorCount() int {
	b.t.Helper()
	ms, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: t0})
	require.NoError(b.t, err)
	return len(ms)
}

var hcTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$`)

// TestHealthchecksTerraformFlow drives the v1 API as the Terraform
// provider does through go-healthchecksio: create, list, read back by the
// id from update_url, update by POST to update_url, pause, delete.
func TestHealthchecksTerraformFlow(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ch := b.channel("ops hook")
		// go-healthchecksio's Healthcheck: channels and methods always sent.
		created := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v1/checks/", b.rw, map[string]any{
			"channels": ch.ID, "desc": "Runs the nightly backup", "grace": 120, "methods": "",
			"name": "Nightly Backups", "tags": "prod www", "timeout": 3600})
		id := idOf(created)
		require.True(t, keys.IsPingKey(id), "update_url ends in the uuid: %v", created["update_url"])
		require.Equal(t, "https://vigil.example.com/api/v1/checks/"+id, created["update_url"])
		require.Equal(t, "https://vigil.example.com/ping/"+id, created["ping_url"])
		require.Equal(t, created["update_url"].(string)+"/pause", created["pause_url"])
		require.Equal(t, created["update_url"].(string)+"/resume", created["resume_url"])
		require.Equal(t, "Nightly Backups", created["name"])
		require.Equal(t, "nightly-backups", created["slug"], "v1 makes the slug from the name")
		require.Equal(t, "prod www", created["tags"])
		require.Equal(t, "Runs the nightly backup", created["desc"])
		require.EqualValues(t, 120, created["grace"])
		require.EqualValues(t, 3600, created["timeout"])
		require.EqualValues(t, 0, created["n_pings"])
		require.Equal(t, "new", created["status"])
		require.Equal(t, ch.ID, created["channels"])
		require.Nil(t, created["last_ping"])
		require.Nil(t, created["next_ping"])
		require.NotContains(t, created, "started", "v1 has no started field")
		require.NotContains(t, created, "uuid", "v1 has no uuid field")
		require.NotContains(t, created, "schedule")

		// The check is a monitor whose ping key is the uuid.
		m, err := b.store.MonitorGetByPingKey(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, b.prj.ID, m.ProjectID)
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}, m.Schedule)
		require.EqualValues(t, 120, m.GraceSeconds)
		require.Equal(t, []string{"prod", "www"}, m.Tags)
		require.Equal(t, "Runs the nightly backup", m.Description)
		require.Equal(t, []string{ch.ID}, m.Channels)
		// ... and Vigil's own API shows the same monitor.
		require.Equal(t, "Runs the nightly backup", b.getMonitor(m.ID).Description)

		// Read: the provider lists all checks and finds its id.
		list := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v1/checks/", b.rw, nil)
		checks := list["checks"].([]any)
		require.Len(t, checks, 1)
		require.Equal(t, id, idOf(checks[0].(map[string]any)))

		// Update by POST to update_url.
		b.ping(id, monitors.PingSuccess, t0)
		updated := b.hcJSON(http.StatusOK, http.MethodPost, created["update_url"].(string), b.rw, map[string]any{
			"channels": "", "methods": "", "name": "Nightly Backups", "schedule": "15 5 * * *",
			"tz": "Europe/Riga", "grace": 60, "tags": "prod"})
		require.Equal(t, id, idOf(updated))
		require.Equal(t, "15 5 * * *", updated["schedule"])
		require.Equal(t, "Europe/Riga", updated["tz"])
		require.NotContains(t, updated, "timeout")
		require.EqualValues(t, 60, updated["grace"])
		require.Equal(t, "", updated["channels"])
		require.Equal(t, "prod", updated["tags"])
		require.EqualValues(t, 1, updated["n_pings"])
		require.Equal(t, "up", updated["status"])
		require.Regexp(t, hcTimeRE, updated["last_ping"])
		require.Regexp(t, hcTimeRE, updated["next_ping"])
		m, err = b.store.MonitorGetByPingKey(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "15 5 * * *", TZ: "Europe/Riga",
			Dialect: monitors.DialectCronie}, m.Schedule)
		require.Empty(t, m.Channels)
		pf := b.getMonitor(m.ID).PersonFields
		require.Contains(t, pf, "schedule", "what the API sets is a person's setting")

		// A schedule sent back as shown keeps the monitor's dialect.
		robfig := b.createMonitor(map[string]any{"name": "k8s-job", "schedule": map[string]any{"kind": "cron",
			"expr": "30 2 * * *", "tz": "Europe/Berlin", "dialect": "robfig"}})
		b.hcJSON(http.StatusOK, http.MethodPost, "/api/v1/checks/"+robfig.PingKey, b.rw, map[string]any{
			"schedule": "30 2 * * *", "tz": "Europe/Paris", "grace": 60})
		require.Equal(t, api.Schedule{Kind: "cron", Expr: "30 2 * * *", TZ: "Europe/Paris", Dialect: "robfig"}, b.getMonitor(robfig.ID).Schedule)
		b.hcJSON(http.StatusOK, http.MethodPost, "/api/v1/checks/"+robfig.PingKey, b.rw, map[string]any{"schedule": "30 3 * * *"})
		require.Equal(t, api.Schedule{Kind: "cron", Expr: "30 3 * * *", TZ: "Europe/Paris", Dialect: "cronie"}, b.getMonitor(robfig.ID).Schedule,
			"a new expression is read as Healthchecks reads it; the zone stays")
		b.hcJSON(http.StatusOK, http.MethodDelete, "/api/v1/checks/"+robfig.PingKey, b.rw, nil)

		// Only some fields: the rest keep their values.
		partial := b.hcJSON(http.StatusOK, http.MethodPost, created["update_url"].(string), b.rw, map[string]any{"desc": "new text"})
		require.Equal(t, "new text", partial["desc"])
		require.Equal(t, "15 5 * * *", partial["schedule"])
		require.EqualValues(t, 60, partial["grace"])

		// Pause: a POST with no body.
		paused := b.hcJSON(http.StatusOK, http.MethodPost, created["pause_url"].(string), b.rw, nil)
		require.Equal(t, "paused", paused["status"])
		require.Nil(t, paused["next_ping"])
		resumed := b.hcJSON(http.StatusOK, http.MethodPost, created["resume_url"].(string), b.rw, nil)
		require.Equal(t, "new", resumed["status"])
		b.hcError(http.StatusConflict, `^check is not paused$`, http.MethodPost, created["resume_url"].(string), b.rw, nil)

		// Delete answers the check as it was.
		deleted := b.hcJSON(http.StatusOK, http.MethodDelete, created["update_url"].(string), b.rw, nil)
		require.Equal(t, "Nightly Backups", deleted["name"])
		_, err = b.store.MonitorGetByPingKey(context.Background(), id)
		require.ErrorIs(t, err, monitors.ErrNotFound)
		b.hcError(http.StatusNotFound, `^not found$`, http.MethodGet, created["update_url"].(string), b.rw, nil)
		b.hcError(http.StatusNotFound, `^not found$`, http.MethodDelete, created["update_url"].(string), b.rw, nil)
	})
}

// TestHealthchecksVersions checks what differs between v1, v2 and v3:
// started, uuid, slug, the v3-only fields and filters.
func TestHealthchecksVersions(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		c := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{
			"name": "Database Backup", "slug": "db-backup", "tags": "production db", "schedule": "*-*~1 12:00",
			"tz": "Europe/Berlin"})
		id := c["uuid"].(string)
		require.Equal(t, id, idOf(c))
		require.Equal(t, "db-backup", c["slug"], "v3 takes the slug as given")
		require.Equal(t, "*-*~1 12:00", c["schedule"])
		m, err := b.store.MonitorGetByPingKey(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, monitors.ScheduleOnCalendar, m.Schedule.Kind, "an OnCalendar expression is told from cron")
		require.Equal(t, "Europe/Berlin", m.Schedule.TZ)
		require.Equal(t, false, c["started"])
		require.Equal(t, false, c["filter_http_body"])
		require.Equal(t, true, c["manual_resume"])
		require.Equal(t, "", c["methods"])
		require.Regexp(t, `^https://vigil\.example\.com/badge/.+\.svg$`, c["badge_url"])

		// A running check: v1 says started, v2 and v3 a started flag.
		b.ping(id, monitors.PingStart, t0)
		v1 := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v1/checks/"+id, b.rw, nil)
		require.Equal(t, "started", v1["status"])
		require.NotContains(t, v1, "started")
		require.NotContains(t, v1, "badge_url")
		require.NotContains(t, v1, "filter_http_body")
		for _, v := range []string{"v2", "v3"} {
			got := b.hcJSON(http.StatusOK, http.MethodGet, "/api/"+v+"/checks/"+id, b.rw, nil)
			require.Equal(t, "new", got["status"], v)
			require.Equal(t, true, got["started"], v)
			require.Equal(t, "https://vigil.example.com/api/"+v+"/checks/"+id, got["update_url"])
		}
		require.NotContains(t, b.hcJSON(http.StatusOK, http.MethodGet, "/api/v2/checks/"+id, b.rw, nil), "uuid")

		// Down, and started again: v1 says started, v2 down with started
		// (Healthchecks' own example of the difference).
		b.ping(id, monitors.PingFail, t0.Add(time.Second))
		b.ping(id, monitors.PingStart, t0.Add(2*time.Second))
		require.Equal(t, "started", b.hcJSON(http.StatusOK, http.MethodGet, "/api/v1/checks/"+id, b.rw, nil)["status"])
		v2 := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v2/checks/"+id, b.rw, nil)
		require.Equal(t, "down", v2["status"])
		require.Equal(t, true, v2["started"])

		// v1 and v2 make the slug from the name on update; v3 leaves it.
		b.hcJSON(http.StatusOK, http.MethodPost, "/api/v3/checks/"+id, b.rw, map[string]any{"name": "Renamed"})
		m, err = b.store.MonitorGetByPingKey(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, "db-backup", m.Slug)
		got := b.hcJSON(http.StatusOK, http.MethodPost, "/api/v2/checks/"+id, b.rw, map[string]any{"name": "DB Nightly", "slug": "ignored"})
		require.Equal(t, "db-nightly", got["slug"])
		// A name another check has: its slug gets the UUID's start.
		twin := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v1/checks/", b.rw, map[string]any{"name": "Twin"})
		twinID := idOf(twin)
		got = b.hcJSON(http.StatusOK, http.MethodPost, "/api/v1/checks/"+twinID, b.rw, map[string]any{"name": "DB Nightly"})
		require.Equal(t, "db-nightly-"+twinID[:8], got["slug"])
		b.hcJSON(http.StatusOK, http.MethodDelete, "/api/v1/checks/"+twinID, b.rw, nil)

		// Filters: every ?tag= given; ?slug= in v3.
		b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{"name": "Other", "tags": "production web"})
		count := func(path string) int {
			return len(b.hcJSON(http.StatusOK, http.MethodGet, path, b.rw, nil)["checks"].([]any))
		}
		require.Equal(t, 2, count("/api/v3/checks/"))
		require.Equal(t, 2, count("/api/v3/checks/?tag=production"))
		require.Equal(t, 1, count("/api/v3/checks/?tag=production&tag=db"))
		require.Equal(t, 0, count("/api/v3/checks/?tag=staging"))
		require.Equal(t, 1, count("/api/v3/checks/?slug=db-nightly"))
		require.Equal(t, 0, count("/api/v3/checks/?slug=nope"))
		require.Equal(t, 2, count("/api/v3/checks"), "the path without its slash works too")

		status, data := b.hcDo(http.MethodGet, "/api/v3/status/", b.rw, nil)
		require.Equal(t, http.StatusOK, status, "%s", data)
	})
}

// TestHealthchecksUnique checks create with unique: the check found is
// updated (200), or a new one made (201).
func TestHealthchecksUnique(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		first := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{
			"name": "Backups", "timeout": 3600, "unique": []string{"name"}})
		again := b.hcJSON(http.StatusOK, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{
			"name": "Backups", "timeout": 7200, "grace": 600, "unique": []string{"name"}})
		require.Equal(t, first["uuid"], again["uuid"])
		require.EqualValues(t, 7200, again["timeout"], "the check found is updated")
		require.EqualValues(t, 600, again["grace"])
		// By slug and timeout: no match, a new check; two checks of one name
		// get distinct slugs.
		other := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{
			"name": "Backups", "timeout": 60, "unique": []string{"name", "timeout"}})
		require.NotEqual(t, first["uuid"], other["uuid"])
		require.NotEqual(t, first["slug"], other["slug"])
		require.Equal(t, 2, b.monitorCount())
		b.hcError(http.StatusBadRequest, `unique has unexpected item "slug"`, http.MethodPost, "/api/v1/checks/", b.rw,
			map[string]any{"name": "x", "unique": []string{"slug"}})
		// channels "*": every channel of the project.
		a, c := b.channel("a"), b.channel("c")
		all := b.hcJSON(http.StatusOK, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{
			"name": "Backups", "timeout": 7200, "channels": "*", "unique": []string{"name", "timeout"}})
		require.ElementsMatch(t, []string{a.ID, c.ID}, strings.Split(all["channels"].(string), ","))
		byName := b.hcJSON(http.StatusOK, http.MethodPost, "/api/v3/checks/"+all["uuid"].(string), b.rw, map[string]any{"channels": "c"})
		require.Equal(t, c.ID, byName["channels"], "channels by name")
	})
}

// TestHealthchecksReadOnlyKey checks what a read-only key sees and may do,
// as Healthchecks documents it.
func TestHealthchecksReadOnlyKey(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		c := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{"name": "Backups", "tags": "prod"})
		id := c["uuid"].(string)
		for _, v := range []string{"v1", "v2", "v3"} {
			list := b.hcJSON(http.StatusOK, http.MethodGet, "/api/"+v+"/checks/", b.ro, nil)
			ro := list["checks"].([]any)[0].(map[string]any)
			for _, hidden := range []string{"uuid", "ping_url", "update_url", "pause_url", "resume_url", "channels"} {
				require.NotContains(t, ro, hidden, "%s: a read-only key does not see %s", v, hidden)
			}
			uk := ro["unique_key"].(string)
			require.Regexp(t, `^[0-9a-f]{40}$`, uk)
			require.NotContains(t, string(mustJSON(t, ro)), id, "nothing holds the uuid")
			got := b.hcJSON(http.StatusOK, http.MethodGet, "/api/"+v+"/checks/"+uk, b.ro, nil)
			require.Equal(t, "Backups", got["name"])
			require.Equal(t, uk, got["unique_key"])
			b.hcJSON(http.StatusOK, http.MethodGet, "/api/"+v+"/checks/"+id, b.ro, nil)
			status, data := b.hcDo(http.MethodGet, "/api/"+v+"/checks/"+uk+"/flips/", b.ro, nil)
			require.Equal(t, http.StatusOK, status, "%s", data)
			b.hcJSON(http.StatusOK, http.MethodGet, "/api/"+v+"/badges/", b.ro, nil)

			for _, call := range []struct{ method, path string }{
				{http.MethodPost, "/api/" + v + "/checks/"},
				{http.MethodPost, "/api/" + v + "/checks/" + id},
				{http.MethodPost, "/api/" + v + "/checks/" + id + "/pause"},
				{http.MethodPost, "/api/" + v + "/checks/" + id + "/resume"},
				{http.MethodDelete, "/api/" + v + "/checks/" + id},
				{http.MethodGet, "/api/" + v + "/checks/" + id + "/pings/"},
				{http.MethodGet, "/api/" + v + "/channels/"},
			} {
				b.hcError(http.StatusUnauthorized, `^wrong api key: a read-only key`, call.method, call.path, b.ro, map[string]any{"name": "x"})
			}
		}
		require.Equal(t, 1, b.monitorCount())
		// The unique key works for get and flips only, as documented.
		b.hcError(http.StatusNotFound, `^not found$`, http.MethodPost, "/api/v3/checks/"+keys.UniqueKey(b.getMonitorByPingKey(id).ID),
			b.rw, map[string]any{"name": "x"})
	})
}

func (b *bundle) getMonitorByPingKey(pingKey string) *monitors.Monitor {
	b.t.Helper()
	m, err := b.store.MonitorGetByPingKey(context.Background(), pingKey)
	require.NoError(b.t, err)
	return m
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// TestHealthchecksBadInput checks the answers to bad keys and bad bodies:
// Healthchecks' status codes, {"error": ...} naming the field, and nothing
// stored.
func TestHealthchecksBadInput(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		b.hcError(http.StatusUnauthorized, `^missing api key$`, http.MethodGet, "/api/v3/checks/", "", nil)
		b.hcError(http.StatusUnauthorized, `^wrong api key$`, http.MethodGet, "/api/v3/checks/", "vk_nope", nil)
		b.hcError(http.StatusUnauthorized, `^wrong api key$`, http.MethodPost, "/api/v3/checks/", "", map[string]any{"api_key": "vk_nope"})
		// The key in the body, as Healthchecks allows for POSTs.
		c := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", "", map[string]any{"api_key": b.rw, "name": "Backups"})
		id := c["uuid"].(string)

		for _, tc := range []struct {
			body any
			re   string
		}{
			{`{"name": `, `^could not parse request body`},
			{`[1, 2]`, `^could not parse request body`},
			{map[string]any{"timeout": "soon"}, `^json validation error: timeout is not a number$`},
			{map[string]any{"timeout": 1.5}, `^json validation error: timeout must be a whole number`},
			{map[string]any{"name": 7}, `^json validation error: name is not a string$`},
			{map[string]any{"timeout": 0}, `^invalid value for timeout: must be between`},
			{map[string]any{"grace": -1}, `^invalid value for grace: must be between`},
			{map[string]any{"schedule": "61 * * * *"}, `^invalid value for schedule: `},
			{map[string]any{"schedule": "0 2 * * *", "tz": "Mars/Olympus"}, `^invalid value for tz: unknown time zone`},
			{map[string]any{"slug": "Not A Slug"}, `^invalid value for slug: `},
			{map[string]any{"tags": strings.Repeat("t", 51)}, `^invalid value for tags: `},
			{map[string]any{"manual_resume": false}, `^manual_resume false is not supported: Vigil keeps a paused check paused`},
			{map[string]any{"methods": "POST"}, `^methods "POST" is not supported`},
			{map[string]any{"methods": "PUT"}, `^json validation error: methods must be "" or "POST"$`},
			{map[string]any{"success_kw": "OK", "filter_http_body": true}, `is not supported: Vigil does not classify pings by keywords$`},
			{map[string]any{"channels": "no-such-channel"}, `^invalid channel identifier: no-such-channel$`},
			{map[string]any{"unique": "name"}, `^json validation error: unique is not an array of strings$`},
		} {
			b.hcError(http.StatusBadRequest, tc.re, http.MethodPost, "/api/v3/checks/", b.rw, tc.body)
			b.hcError(http.StatusBadRequest, tc.re, http.MethodPost, "/api/v3/checks/"+id, b.rw, tc.body)
		}
		require.Equal(t, 1, b.monitorCount(), "nothing was created")
		got := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v3/checks/"+id, b.rw, nil)
		require.Equal(t, c, got, "nothing was changed")

		b.hcError(http.StatusBadRequest, `^invalid value for slug: "backups" is already used`, http.MethodPost, "/api/v3/checks/", b.rw,
			map[string]any{"name": "Two", "slug": "backups"})

		// Another project's check, and one that does not exist.
		b.hcError(http.StatusForbidden, `^wrong api key`, http.MethodGet, "/api/v3/checks/"+id, b.otherRW, nil)
		b.hcError(http.StatusForbidden, `^wrong api key`, http.MethodPost, "/api/v3/checks/"+id+"/pause", b.otherRW, nil)
		b.hcError(http.StatusNotFound, `^not found$`, http.MethodGet, "/api/v3/checks/"+keys.NewPingKey(), b.rw, nil)
		b.hcError(http.StatusNotFound, `^not found$`, http.MethodGet, "/api/v3/checks/not-a-uuid", b.rw, nil)
		b.hcError(http.StatusBadRequest, `^invalid seconds`, http.MethodGet, "/api/v3/checks/"+id+"/flips/?seconds=x", b.rw, nil)
		require.False(t, b.getMonitorByPingKey(id).Paused)
	})
}

// TestHealthchecksHistory checks pings, a ping's body, flips, channels and
// badges.
func TestHealthchecksHistory(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		c := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{"name": "Backups", "tags": "prod db"})
		id := c["uuid"].(string)
		res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
			{PingKey: id, Ping: monitors.Ping{Kind: monitors.PingStart, At: t0, RID: "r1", RemoteAddr: "192.0.2.7", UserAgent: "curl/8"}},
			{PingKey: id, Ping: monitors.Ping{Kind: monitors.PingFail, At: t0.Add(3 * time.Second), RID: "r1", Body: "disk full",
				ExitCode: ptr(2), DurationMS: ptr(int64(2500))}},
			{PingKey: id, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: t0.Add(time.Hour)}},
		}})
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}

		pings := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v3/checks/"+id+"/pings/", b.rw, nil)["pings"].([]any)
		require.Len(t, pings, 3)
		newest, fail, start := pings[0].(map[string]any), pings[1].(map[string]any), pings[2].(map[string]any)
		require.Equal(t, "success", newest["type"])
		require.Nil(t, newest["rid"])
		require.Nil(t, newest["body_url"])
		require.Equal(t, "start", start["type"])
		require.Equal(t, "r1", start["rid"])
		require.Equal(t, "192.0.2.7", start["remote_addr"])
		require.Equal(t, "curl/8", start["ua"])
		require.Equal(t, "2026-03-02T09:00:00.000000+00:00", start["date"])
		require.Equal(t, "fail", fail["type"])
		require.EqualValues(t, 2, fail["exitstatus"])
		require.EqualValues(t, 2.5, fail["duration"])
		require.Greater(t, fail["n"].(float64), start["n"].(float64))
		bodyURL := fail["body_url"].(string)
		status, body := b.hcDo(http.MethodGet, bodyURL, b.rw, nil)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "disk full", string(body))
		status, _ = b.hcDo(http.MethodGet, strings.Replace(bodyURL, "/body", "", 1)+"9/body", b.rw, nil)
		require.Equal(t, http.StatusNotFound, status)
		require.EqualValues(t, 3, b.hcJSON(http.StatusOK, http.MethodGet, "/api/v3/checks/"+id, b.rw, nil)["n_pings"])

		// The failure opened an incident (down), the success resolved it (up).
		var flips []map[string]any
		status, data := b.hcDo(http.MethodGet, "/api/v3/checks/"+id+"/flips/", b.rw, nil)
		require.Equal(t, http.StatusOK, status, "%s", data)
		require.NoError(t, json.Unmarshal(data, &flips))
		require.Equal(t, []map[string]any{
			{"timestamp": "2026-03-02T10:00:00+00:00", "up": float64(1)},
			{"timestamp": "2026-03-02T09:00:03+00:00", "up": float64(0)},
		}, flips)
		status, data = b.hcDo(http.MethodGet, "/api/v3/checks/"+id+"/flips/?start=1772442000", b.rw, nil) // 09:00:00
		require.Equal(t, http.StatusOK, status)
		require.NoError(t, json.Unmarshal(data, &flips))
		require.Len(t, flips, 2)
		_, data = b.hcDo(http.MethodGet, "/api/v3/checks/"+id+"/flips/?end=1772443000", b.rw, nil) // 09:16:40
		require.NoError(t, json.Unmarshal(data, &flips))
		require.Len(t, flips, 1)
		require.EqualValues(t, 0, flips[0]["up"])

		// Channels, with Healthchecks' kind names.
		ch := b.channel("ops hook")
		r := b.do(http.MethodPost, "/api/v1/channels", b.rw, map[string]any{"kind": "pagerduty", "name": "pager",
			"config": map[string]any{"routing_key": "0123456789abcdef0123456789abcdef"}})
		require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
		chs := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v1/channels/", b.rw, nil)["channels"].([]any)
		require.Len(t, chs, 2)
		require.Contains(t, chs, map[string]any{"id": ch.ID, "name": "ops hook", "kind": "webhook"})
		require.Equal(t, "pd", chs[1].(map[string]any)["kind"])
		// Vigil's own /api/v1/channels (no slash) is unchanged.
		require.Equal(t, http.StatusOK, b.do(http.MethodGet, "/api/v1/channels", b.rw, nil).status)

		// Badges: each tag and "*", in every format; the URLs work.
		badges := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v3/badges/", b.rw, nil)["badges"].(map[string]any)
		require.Len(t, badges, 3)
		for _, tag := range []string{"*", "prod", "db"} {
			urls := badges[tag].(map[string]any)
			for _, f := range []string{"svg", "svg3", "json", "json3", "shields", "shields3"} {
				status, data := b.hcDo(http.MethodGet, urls[f].(string), "", nil)
				require.Equal(t, http.StatusOK, status, "%s %s: %s", tag, f, data)
			}
		}
		_, data = b.hcDo(http.MethodGet, badges["prod"].(map[string]any)["json"].(string), "", nil)
		require.JSONEq(t, `{"label": "prod", "status": "up"}`, string(data))
	})
}

// TestHealthchecksLateBadge checks the two-state badge: late counts as up.
func TestHealthchecksLateBadge(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		c := b.hcJSON(http.StatusCreated, http.MethodPost, "/api/v3/checks/", b.rw, map[string]any{"name": "Hourly", "timeout": 3600, "tags": "t"})
		b.ping(c["uuid"].(string), monitors.PingSuccess, t0)
		b.clock.Set(t0.Add(time.Hour + time.Minute)) // past expected, within grace
		got := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v3/checks/"+c["uuid"].(string), b.rw, nil)
		require.Equal(t, "grace", got["status"])
		urls := b.hcJSON(http.StatusOK, http.MethodGet, "/api/v3/badges/", b.rw, nil)["badges"].(map[string]any)["t"].(map[string]any)
		_, two := b.hcDo(http.MethodGet, urls["json"].(string), "", nil)
		require.JSONEq(t, `{"label": "t", "status": "up"}`, string(two))
		_, three := b.hcDo(http.MethodGet, urls["json3"].(string), "", nil)
		require.JSONEq(t, `{"label": "t", "status": "late"}`, string(three))
	})
}
