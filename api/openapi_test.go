package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
)

// TestOpenAPIMatchesRoutes keeps the document true: every route echo
// serves under /api/v1 is in it, and every operation in it is a route.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SQLite(t), options{})
	e := echo.New()
	b.h.Mount(e)
	var served []string
	for _, r := range e.Routes() {
		if strings.HasPrefix(r.Path, "/api/v1/") && r.Method != http.MethodHead && !api.IsHealthchecksRoute(r.Path) {
			served = append(served, r.Method+" "+api.OpenAPIPath(r.Path))
		}
	}
	var documented []string
	for path, item := range b.doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(documented)
	require.NotEmpty(t, served)
	require.Equal(t, served, documented)

	// The served document is that one, and loads as valid OpenAPI 3.
	r := b.do(http.MethodGet, "/api/v1/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, r.status)
	loaded, err := openapi3.NewLoader().LoadFromData(r.body)
	require.NoError(t, err)
	require.NoError(t, loaded.Validate(context.Background()))
	require.Len(t, loaded.Paths.Map(), len(b.doc.Paths.Map()))

	// Request and response schemas of monitors and channels.
	schemas := loaded.Components.Schemas
	for name, required := range map[string][]string{
		"Monitor":           {"id", "name", "slug", "schedule", "status", "ping_url", "ping_urls", "next_expected_at", "last_ping_at", "open_incidents", "person_fields"},
		"MonitorCreate":     nil,
		"MonitorUpdate":     nil,
		"Declaration":       {"monitors"},
		"Channel":           {"id", "kind", "name", "config", "is_default"},
		"ChannelCreate":     {"kind", "name", "config"},
		"ChannelUpdate":     nil,
		"Incident":          {"id", "kind", "opened_at", "resolved_at", "summary", "events", "deliveries"},
		"Error":             {"error"},
		"DeclarationResult": {"monitors", "undeclared"},
	} {
		s, ok := schemas[name]
		require.True(t, ok, "schema %s", name)
		for _, f := range required {
			require.Contains(t, s.Value.Required, f, "%s.%s", name, f)
		}
		require.NotNil(t, s.Value.AdditionalProperties.Has, name)
		require.False(t, *s.Value.AdditionalProperties.Has, "%s allows no undocumented field", name)
	}
	require.Equal(t, []any{"new", "up", "running", "late", "retrying", "down", "paused", "undeclared"},
		schemas["Monitor"].Value.Properties["status"].Value.Enum)
	require.Equal(t, []any{"weekly", "monthly"}, schemas["Channel"].Value.Properties["report"].Value.Enum)
	require.Equal(t, []any{"weekly", "monthly"}, schemas["ChannelCreate"].Value.Properties["report"].Value.Enum)
	require.True(t, schemas["ChannelUpdate"].Value.Properties["report"].Value.Nullable, "null stops a channel's reports")
	require.NotContains(t, schemas["Channel"].Value.Required, "report", "absent when none")
	require.Contains(t, schemas["MonitorCreate"].Value.Properties, "schedule")
	require.Contains(t, schemas["MonitorUpdate"].Value.Properties, "person_fields")
}

// TestOpenAPICatchesDrift proves that the check every test's answers go
// through is not vacuous: an answer with an undocumented field, a missing
// field or an undocumented status fails it.
func TestOpenAPICatchesDrift(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SQLite(t), options{})
	m := b.createMonitor(map[string]any{"name": "job"})
	good := b.do(http.MethodGet, "/api/v1/monitors/"+m.ID, b.rw, nil)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(good.body, &obj))

	check := func(status int, body map[string]any) error {
		data, err := json.Marshal(body)
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodGet, "/api/v1/monitors/"+m.ID, nil)
		path := "/api/v1/monitors/{id}"
		item := b.doc.Paths.Find(path)
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: map[string]string{"id": m.ID},
				Route: &routers.Route{Spec: b.doc, Path: path, PathItem: item, Method: http.MethodGet, Operation: item.Get}},
			Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(data)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true},
		}
		return openapi3filter.ValidateResponse(context.Background(), in)
	}
	require.NoError(t, check(http.StatusOK, obj))
	extra := maps(obj)
	extra["surprise"] = 1
	require.Error(t, check(http.StatusOK, extra))
	missing := maps(obj)
	delete(missing, "ping_url")
	require.Error(t, check(http.StatusOK, missing))
	wrong := maps(obj)
	wrong["status"] = "sleeping"
	require.Error(t, check(http.StatusOK, wrong))
	require.Error(t, check(http.StatusTeapot, map[string]any{"error": "x"}))
}

func maps(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestMetricsCollectors(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		down := b.createMonitor(map[string]any{"name": "down"})
		b.ping(down.PingKey, monitors.PingFail, t0)
		b.ping(down.PingKey, monitors.PingSuccess, t0.Add(1))
		b.ping(down.PingKey, monitors.PingFail, t0.Add(2))
		b.createMonitor(map[string]any{"name": "new"})
		b.createMonitor(map[string]any{"name": "paused", "paused": true})

		expected := `
# HELP vigil_incidents_open Incidents open now, by kind.
# TYPE vigil_incidents_open gauge
vigil_incidents_open{kind="deadline"} 0
vigil_incidents_open{kind="early"} 0
vigil_incidents_open{kind="failed"} 1
vigil_incidents_open{kind="missed"} 0
vigil_incidents_open{kind="overlap"} 0
vigil_incidents_open{kind="stuck"} 0
vigil_incidents_open{kind="too_fast"} 0
vigil_incidents_open{kind="too_often"} 0
# HELP vigil_incidents_opened_total Incidents opened, by kind, as kept in the database (deleting a monitor deletes its incidents).
# TYPE vigil_incidents_opened_total counter
vigil_incidents_opened_total{kind="deadline"} 0
vigil_incidents_opened_total{kind="early"} 0
vigil_incidents_opened_total{kind="failed"} 2
vigil_incidents_opened_total{kind="missed"} 0
vigil_incidents_opened_total{kind="overlap"} 0
vigil_incidents_opened_total{kind="stuck"} 0
vigil_incidents_opened_total{kind="too_fast"} 0
vigil_incidents_opened_total{kind="too_often"} 0
# HELP vigil_incidents_resolved_total Incidents resolved, by kind, as kept in the database.
# TYPE vigil_incidents_resolved_total counter
vigil_incidents_resolved_total{kind="deadline"} 0
vigil_incidents_resolved_total{kind="early"} 0
vigil_incidents_resolved_total{kind="failed"} 1
vigil_incidents_resolved_total{kind="missed"} 0
vigil_incidents_resolved_total{kind="overlap"} 0
vigil_incidents_resolved_total{kind="stuck"} 0
vigil_incidents_resolved_total{kind="too_fast"} 0
vigil_incidents_resolved_total{kind="too_often"} 0
# HELP vigil_monitors Monitors by status (late is derived at scrape time).
# TYPE vigil_monitors gauge
vigil_monitors{status="down"} 1
vigil_monitors{status="late"} 0
vigil_monitors{status="new"} 1
vigil_monitors{status="paused"} 1
vigil_monitors{status="retrying"} 0
vigil_monitors{status="running"} 0
vigil_monitors{status="undeclared"} 0
vigil_monitors{status="up"} 0
# HELP vigil_store_scrape_ok 1 when the store answered the queries of this scrape, 0 when it did not.
# TYPE vigil_store_scrape_ok gauge
vigil_store_scrape_ok 1
`
		require.NoError(t, testutil.GatherAndCompare(b.reg, strings.NewReader(expected),
			"vigil_monitors", "vigil_incidents_open", "vigil_incidents_opened_total", "vigil_incidents_resolved_total", "vigil_store_scrape_ok"))

		// Requests are counted by route.
		require.EqualValues(t, 3, requests(t, b, "/api/v1/monitors", "POST", "201"))

		// A store that fails reports it, and the scrape goes on.
		require.NoError(t, b.store.Close())
		require.NoError(t, testutil.GatherAndCompare(b.reg, strings.NewReader(`
# HELP vigil_store_scrape_ok 1 when the store answered the queries of this scrape, 0 when it did not.
# TYPE vigil_store_scrape_ok gauge
vigil_store_scrape_ok 0
`), "vigil_store_scrape_ok", "vigil_monitors"))
	})
}

// requests reads vigil_api_requests_total for a route, method and status.
func requests(t *testing.T, b *bundle, route, method, code string) float64 {
	t.Helper()
	families, err := b.reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "vigil_api_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["route"] == route && labels["method"] == method && labels["code"] == code {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
