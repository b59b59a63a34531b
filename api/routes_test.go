package api_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// routeCase says how to call one route on a resource of the bundle's main
// project, and what each kind of caller gets.
type routeCase struct {
	// prepare makes what the route works on, and returns the path to call
	// and the body to send.
	prepare func(b *bundle) (path string, body any)
	// ok is the status a read-write key of the project gets.
	ok int
	// other is the status a read-write key of another project gets: 404
	// for a resource of the main project; for lists and creations, the
	// status they answer in the other project, and otherCheck then proves
	// the answer holds nothing of the main project.
	other      int
	otherCheck func(t *testing.T, b *bundle, path string, r *response)
}

// noneOf checks that an answer of the other project names no ID of the
// main project's resources.
func noneOf(ids ...string) func(t *testing.T, b *bundle, path string, r *response) {
	return func(t *testing.T, b *bundle, path string, r *response) {
		for _, id := range ids {
			require.NotContains(t, string(r.body), id, "another project's key sees %s", id)
		}
	}
}

func webhookBody(name string) map[string]any {
	return map[string]any{"kind": "webhook", "name": name,
		"config": map[string]any{"url": "https://hooks.example.com/vigil", "secret": "s3cret-value-0123456789"}}
}

func (b *bundle) channel(name string) api.Channel {
	b.t.Helper()
	r := b.do(http.MethodPost, "/api/v1/channels", b.rw, webhookBody(name))
	require.Equal(b.t, http.StatusCreated, r.status, "%s", r.body)
	var ch api.Channel
	r.json(b.t, &ch)
	return ch
}

// failedMonitor makes a monitor with an open failed incident.
func (b *bundle) failedMonitor() (api.Monitor, string) {
	b.t.Helper()
	m := b.createMonitor(map[string]any{"name": "fails-" + keys.NewID()[:8]})
	b.ping(m.PingKey, monitors.PingFail, t0)
	ins, err := b.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: b.prj.ID, MonitorID: m.ID})
	require.NoError(b.t, err)
	require.Len(b.t, ins, 1)
	return m, ins[0].ID
}

// statusPage makes a status page of the main project.
func (b *bundle) statusPage(body map[string]any) api.StatusPage {
	b.t.Helper()
	if body == nil {
		body = map[string]any{"slug": "page-" + keys.NewID()[:8], "title": "Jobs"}
	}
	r := b.do(http.MethodPost, "/api/v1/status-pages", b.rw, body)
	require.Equal(b.t, http.StatusCreated, r.status, "%s", r.body)
	var p api.StatusPage
	r.json(b.t, &p)
	return p
}

func statusPagePath(body any) func(b *bundle) (string, any) {
	return func(b *bundle) (string, any) {
		return "/api/v1/status-pages/" + b.statusPage(nil).ID, body
	}
}

func routeCases() map[string]routeCase {
	monitorPath := func(suffix string) func(b *bundle) (string, any) {
		return func(b *bundle) (string, any) {
			m := b.createMonitor(map[string]any{"name": "job-" + keys.NewID()[:8]})
			return "/api/v1/monitors/" + m.ID + suffix, nil
		}
	}
	channelPath := func(suffix string, body any) func(b *bundle) (string, any) {
		return func(b *bundle) (string, any) {
			ch := b.channel("hook-" + keys.NewID()[:8])
			return "/api/v1/channels/" + ch.ID + suffix, body
		}
	}
	windowPath := func(suffix string, body any) func(b *bundle) (string, any) {
		return func(b *bundle) (string, any) {
			r := b.do(http.MethodPost, "/api/v1/maintenance-windows", b.rw, map[string]any{"name": "w-" + keys.NewID()[:8],
				"all": true, "starts_at": t0.Add(24 * time.Hour), "ends_at": t0.Add(25 * time.Hour)})
			require.Equal(b.t, http.StatusCreated, r.status, "%s", r.body)
			var w api.MaintenanceWindow
			r.json(b.t, &w)
			return "/api/v1/maintenance-windows/" + w.ID + suffix, body
		}
	}
	return map[string]routeCase{
		"GET /api/v1/maintenance-windows": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			windowPath("", nil)(b)
			return "/api/v1/maintenance-windows", nil
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var l api.MaintenanceWindowList
			r.json(t, &l)
			require.Empty(t, l.MaintenanceWindows)
		}},
		"POST /api/v1/maintenance-windows": {ok: 201, other: 201, prepare: func(b *bundle) (string, any) {
			return "/api/v1/maintenance-windows", map[string]any{"name": "created", "all": true, "starts_at": t0.Add(24 * time.Hour), "ends_at": t0.Add(25 * time.Hour)}
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var w api.MaintenanceWindow
			r.json(t, &w)
			_, err := b.store.MaintenanceWindowGet(context.Background(), b.prj.ID, w.ID)
			require.ErrorIs(t, err, monitors.ErrNotFound, "made in the key's own project")
		}},
		"GET /api/v1/maintenance-windows/:id":      {ok: 200, other: 404, prepare: windowPath("", nil)},
		"PATCH /api/v1/maintenance-windows/:id":    {ok: 200, other: 404, prepare: windowPath("", map[string]any{"name": "renamed"})},
		"DELETE /api/v1/maintenance-windows/:id":   {ok: 204, other: 404, prepare: windowPath("", nil)},
		"POST /api/v1/maintenance-windows/:id/end": {ok: 200, other: 404, prepare: windowPath("/end", nil)},
		"GET /api/v1/openapi.json":                 {ok: 200, prepare: func(b *bundle) (string, any) { return "/api/v1/openapi.json", nil }},
		"GET /api/v1/project": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) { return "/api/v1/project", nil },
			otherCheck: func(t *testing.T, b *bundle, _ string, r *response) { noneOf(b.prj.ID, b.prj.PingKey)(t, b, "", r) }},
		"GET /api/v1/monitors": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			b.createMonitor(map[string]any{"name": "listed"})
			return "/api/v1/monitors", nil
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var l api.MonitorList
			r.json(t, &l)
			require.Empty(t, l.Monitors)
		}},
		"POST /api/v1/monitors": {ok: 201, other: 201, prepare: func(b *bundle) (string, any) {
			return "/api/v1/monitors", map[string]any{"name": "created-" + keys.NewID()[:8]}
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var m api.Monitor
			r.json(t, &m)
			_, err := b.store.MonitorGet(context.Background(), b.prj.ID, m.ID)
			require.ErrorIs(t, err, monitors.ErrNotFound, "made in the key's own project")
		}},
		"GET /api/v1/monitors/:id": {ok: 200, other: 404, prepare: monitorPath("")},
		"PATCH /api/v1/monitors/:id": {ok: 200, other: 404, prepare: func(b *bundle) (string, any) {
			p, _ := monitorPath("")(b)
			return p, map[string]any{"grace_seconds": 600}
		}},
		"DELETE /api/v1/monitors/:id":     {ok: 204, other: 404, prepare: monitorPath("")},
		"POST /api/v1/monitors/:id/pause": {ok: 200, other: 404, prepare: monitorPath("/pause")},
		"POST /api/v1/monitors/:id/snooze": {ok: 200, other: 404, prepare: func(b *bundle) (string, any) {
			path, _ := monitorPath("/snooze")(b)
			return path, map[string]any{"seconds": 3600}
		}},
		"DELETE /api/v1/monitors/:id/snooze":        {ok: 200, other: 404, prepare: monitorPath("/snooze")},
		"POST /api/v1/monitors/:id/resume":          {ok: 200, other: 404, prepare: monitorPath("/resume")},
		"POST /api/v1/monitors/:id/rotate-ping-key": {ok: 200, other: 404, prepare: monitorPath("/rotate-ping-key")},
		"POST /api/v1/project/rotate-ping-key": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			return "/api/v1/project/rotate-ping-key", nil
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			noneOf(b.prj.ID, b.prj.PingKey)(t, b, "", r)
			p, err := b.store.ProjectGet(context.Background(), b.prj.ID)
			require.NoError(t, err)
			require.Equal(t, b.prj.PingKey, p.PingKey, "another project's key rotates its own")
		}},
		"GET /api/v1/monitors/:id/pings":     {ok: 200, other: 404, prepare: monitorPath("/pings")},
		"GET /api/v1/monitors/:id/runs":      {ok: 200, other: 404, prepare: monitorPath("/runs")},
		"GET /api/v1/monitors/:id/incidents": {ok: 200, other: 404, prepare: monitorPath("/incidents")},
		"GET /api/v1/monitors/:id/uptime":    {ok: 200, other: 404, prepare: monitorPath("/uptime")},
		"GET /api/v1/channels/:id":           {ok: 200, other: 404, prepare: channelPath("", nil)},
		"PATCH /api/v1/channels/:id":         {ok: 200, other: 404, prepare: channelPath("", map[string]any{"is_default": true})},
		"DELETE /api/v1/channels/:id":        {ok: 204, other: 404, prepare: channelPath("", nil)},
		"POST /api/v1/channels/:id/test":     {ok: 501, other: 404, prepare: channelPath("/test", nil)},
		"GET /api/v1/channels": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			b.channel("listed")
			return "/api/v1/channels", nil
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var l api.ChannelList
			r.json(t, &l)
			require.Empty(t, l.Channels)
		}},
		"POST /api/v1/channels": {ok: 201, other: 201, prepare: func(b *bundle) (string, any) {
			return "/api/v1/channels", webhookBody("made-" + keys.NewID()[:8])
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var ch api.Channel
			r.json(t, &ch)
			_, err := b.store.ChannelGet(context.Background(), b.prj.ID, ch.ID)
			require.ErrorIs(t, err, monitors.ErrNotFound, "made in the key's own project")
		}},
		"GET /api/v1/incidents": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			b.failedMonitor()
			return "/api/v1/incidents", nil
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var l api.IncidentList
			r.json(t, &l)
			require.Empty(t, l.Incidents)
		}},
		"GET /api/v1/incidents/:id": {ok: 200, other: 404, prepare: func(b *bundle) (string, any) {
			_, id := b.failedMonitor()
			return "/api/v1/incidents/" + id, nil
		}},
		"PUT /api/v1/sources/:source/monitors": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			return "/api/v1/sources/billing/monitors", map[string]any{"monitors": []map[string]any{{"slug": "invoices"}}}
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			// The other project's declaration of the same source made its
			// own monitor and left the main project's alone.
			list, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.prj.ID, Source: "billing"})
			require.NoError(t, err)
			require.Empty(t, list, "the other project's declaration made nothing here")
			var res api.DeclarationResult
			r.json(t, &res)
			require.Len(t, res.Monitors, 1)
			_, err = b.store.MonitorGet(context.Background(), b.other.ID, res.Monitors[0].ID)
			require.NoError(t, err)
		}},
		"GET /api/v1/status-pages": {ok: 200, other: 200, prepare: func(b *bundle) (string, any) {
			b.statusPage(nil)
			return "/api/v1/status-pages", nil
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var l api.StatusPageList
			r.json(t, &l)
			require.Empty(t, l.StatusPages)
		}},
		"POST /api/v1/status-pages": {ok: 201, other: 201, prepare: func(b *bundle) (string, any) {
			return "/api/v1/status-pages", map[string]any{"slug": "made-" + keys.NewID()[:8], "title": "Made"}
		}, otherCheck: func(t *testing.T, b *bundle, _ string, r *response) {
			var p api.StatusPage
			r.json(t, &p)
			_, err := b.store.StatusPageGet(context.Background(), b.prj.ID, p.ID)
			require.ErrorIs(t, err, monitors.ErrNotFound, "made in the key's own project")
			// Slugs are unique across projects: free it for the next call.
			require.NoError(t, b.store.StatusPageDelete(context.Background(), b.other.ID, p.ID))
		}},
		"GET /api/v1/status-pages/:id":    {ok: 200, other: 404, prepare: statusPagePath(nil)},
		"PATCH /api/v1/status-pages/:id":  {ok: 200, other: 404, prepare: statusPagePath(map[string]any{"published": true})},
		"DELETE /api/v1/status-pages/:id": {ok: 204, other: 404, prepare: statusPagePath(nil)},
		"GET /api/v1/incidents/:id/notes": {ok: 200, other: 404, prepare: func(b *bundle) (string, any) {
			_, id := b.failedMonitor()
			return "/api/v1/incidents/" + id + "/notes", nil
		}},
		"POST /api/v1/incidents/:id/notes": {ok: 201, other: 404, prepare: func(b *bundle) (string, any) {
			_, id := b.failedMonitor()
			return "/api/v1/incidents/" + id + "/notes", map[string]any{"body": "Looking into it."}
		}},
		"DELETE /api/v1/incidents/:id/notes/:note": {ok: 204, other: 404, prepare: func(b *bundle) (string, any) {
			_, id := b.failedMonitor()
			r := b.do(http.MethodPost, "/api/v1/incidents/"+id+"/notes", b.rw, map[string]any{"body": "note"})
			require.Equal(b.t, http.StatusCreated, r.status, "%s", r.body)
			var n api.IncidentNote
			r.json(b.t, &n)
			return "/api/v1/incidents/" + id + "/notes/" + n.ID, nil
		}},
		"GET /badge/:file": {ok: 200, prepare: func(b *bundle) (string, any) {
			m := b.createMonitor(map[string]any{"name": "badged"})
			u, err := url.Parse(m.Badge.SVG)
			require.NoError(b.t, err)
			return u.EscapedPath(), nil
		}},
		"GET /metrics/project/:key": {ok: 200, prepare: func(b *bundle) (string, any) { return "/metrics/project/" + b.ro, nil }},
	}
}

// TestEveryRoute calls every route of the table with no key, a bad key, a
// read-only key, another project's key and a read-write key. A route added
// without a case here fails.
func TestEveryRoute(t *testing.T) {
	t.Parallel()
	cases := routeCases()
	eachStore(t, func(t *testing.T, b *bundle) {
		routes := b.h.Routes()
		seen := map[string]bool{}
		for _, rt := range routes {
			name := rt.Method + " " + rt.Path
			seen[name] = true
			t.Run(name, func(t *testing.T) {
				b := b.with(t)
				tc, ok := cases[name]
				require.True(t, ok, "route %s has no case in routeCases", name)
				path, body := tc.prepare(b)
				if rt.Public {
					r := b.do(rt.Method, path, "", body)
					require.Equal(t, tc.ok, r.status, "%s", r.body)
					return
				}

				r := b.do(rt.Method, path, "", body)
				require.Equal(t, http.StatusUnauthorized, r.status, "no key: %s", r.body)
				require.Contains(t, r.errorBody(t).Error, "API key is required")
				require.Contains(t, r.header.Get("WWW-Authenticate"), "Bearer")
				r = b.do(rt.Method, path, "vk_not-a-key", body)
				require.Equal(t, http.StatusUnauthorized, r.status, "bad key: %s", r.body)

				r = b.do(rt.Method, path, b.ro, body)
				if rt.Write {
					require.Equal(t, http.StatusForbidden, r.status, "read-only key: %s", r.body)
					require.Contains(t, r.errorBody(t).Error, "read-only")
				} else {
					require.Equal(t, tc.ok, r.status, "read-only key reads: %s", r.body)
				}

				r = b.do(rt.Method, path, b.otherRW, body)
				require.Equal(t, tc.other, r.status, "another project's key: %s", r.body)
				if tc.otherCheck != nil {
					tc.otherCheck(t, b, path, r)
				} else {
					require.Equal(t, http.StatusNotFound, r.status)
				}

				r = b.do(rt.Method, path, b.rw, body)
				require.Equal(t, tc.ok, r.status, "read-write key: %s", r.body)
			})
		}
		for name := range cases {
			require.True(t, seen[name], "routeCases has %s, which is no route", name)
		}
	})
}

// TestReadOnlyChangesNothing checks, in the database, that the writes a
// read-only key is refused leave everything as it was.
func TestReadOnlyChangesNothing(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		m := b.createMonitor(map[string]any{"name": "kept", "grace_seconds": 120})
		ch := b.channel("kept")
		before, err := b.store.MonitorGet(ctx, b.prj.ID, m.ID)
		require.NoError(t, err)
		for _, rq := range []struct {
			method, path string
			body         any
		}{
			{http.MethodPatch, "/api/v1/monitors/" + m.ID, map[string]any{"grace_seconds": 600}},
			{http.MethodPost, "/api/v1/monitors/" + m.ID + "/pause", nil},
			{http.MethodDelete, "/api/v1/monitors/" + m.ID, nil},
			{http.MethodPost, "/api/v1/monitors", map[string]any{"name": "new"}},
			{http.MethodDelete, "/api/v1/channels/" + ch.ID, nil},
			{http.MethodPatch, "/api/v1/channels/" + ch.ID, map[string]any{"name": "renamed"}},
			{http.MethodPut, "/api/v1/sources/app/monitors", map[string]any{"monitors": []any{}}},
		} {
			r := b.do(rq.method, rq.path, b.ro, rq.body)
			require.Equal(t, http.StatusForbidden, r.status, "%s %s", rq.method, rq.path)
		}
		after, err := b.store.MonitorGet(ctx, b.prj.ID, m.ID)
		require.NoError(t, err)
		require.Equal(t, before, after)
		list, err := b.store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
		got, err := b.store.ChannelGet(ctx, b.prj.ID, ch.ID)
		require.NoError(t, err)
		require.Equal(t, "kept", got.Name)
	})
}

func TestAuthForms(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		get := func(header, value string) int {
			req, err := http.NewRequest(http.MethodGet, b.srv.URL+"/api/v1/monitors", nil)
			require.NoError(t, err)
			req.Header.Set(header, value)
			resp, err := b.srv.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusOK, get("X-Api-Key", b.rw))
		require.Equal(t, http.StatusOK, get("Authorization", "bearer "+b.rw), "the scheme is case-insensitive")
		require.Equal(t, http.StatusUnauthorized, get("Authorization", "Basic "+b.rw))
		require.Equal(t, http.StatusUnauthorized, get("Authorization", "Bearer "))

		// A revoked key is refused.
		keyList, err := b.store.APIKeyList(context.Background(), b.prj.ID)
		require.NoError(t, err)
		for _, k := range keyList {
			if strings.HasPrefix(b.ro, k.Prefix) {
				require.NoError(t, b.store.APIKeyRevoke(context.Background(), b.prj.ID, k.ID, t0))
			}
		}
		require.Equal(t, http.StatusUnauthorized, get("X-Api-Key", b.ro))
	})
}
