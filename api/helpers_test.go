package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// t0 is the tests' reference instant: a Monday, 09:00 UTC.
var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// bundle is a running API on a fresh store with two projects, each with a
// read-write and a read-only key.
type bundle struct {
	t     *testing.T
	store monitors.Store
	clock *clock
	h     *api.Handler
	srv   *httptest.Server
	reg   *prometheus.Registry
	doc   *openapi3.T

	prj, other *monitors.Project
	// rw and ro are keys of prj; otherRW of other.
	rw, ro, otherRW string
}

type options struct {
	tester     api.ChannelTester
	deliveries api.DeliveryLister
	bodyLimit  int64
}

// eachStore runs fn on a bundle of each store.
func eachStore(t *testing.T, fn func(t *testing.T, b *bundle)) {
	eachStoreWith(t, options{}, fn)
}

func eachStoreWith(t *testing.T, o options, fn func(t *testing.T, b *bundle)) {
	t.Helper()
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, open(t), o))
		})
	}
}

func setup(t *testing.T, s monitors.Store, o options) *bundle {
	t.Helper()
	b := &bundle{t: t, store: s, clock: &clock{t: t0}, reg: prometheus.NewRegistry()}
	var err error
	b.h, err = api.New(api.Config{Store: s, BaseURL: "https://vigil.example.com", NowFunc: b.clock.Now,
		Logger: testdb.Logger(t), ChannelTester: o.tester, Deliveries: o.deliveries, BodyLimit: o.bodyLimit,
		Registerer: b.reg})
	require.NoError(t, err)
	b.doc, err = b.h.OpenAPI()
	require.NoError(t, err)
	require.NoError(t, b.doc.Validate(context.Background()))
	e := echo.New()
	b.h.Mount(e)
	b.srv = httptest.NewServer(e)
	t.Cleanup(b.srv.Close)

	b.prj, b.rw = b.project("Main", false)
	b.ro = b.key(b.prj, true)
	b.other, b.otherRW = b.project("Other", false)
	return b
}

// with returns a copy of b that reports to t, for subtests.
func (b *bundle) with(t *testing.T) *bundle {
	c := *b
	c.t = t
	return &c
}

// project creates a project and a key of it.
func (b *bundle) project(name string, readOnly bool) (*monitors.Project, string) {
	p, err := b.store.ProjectCreate(context.Background(), &monitors.ProjectCreateParams{
		ID: keys.NewID(), Name: name, PingKey: keys.NewProjectPingKey(), Now: t0})
	require.NoError(b.t, err)
	return p, b.key(p, readOnly)
}

func (b *bundle) key(p *monitors.Project, readOnly bool) string {
	key, prefix, hash := keys.NewAPIKey()
	_, err := b.store.APIKeyCreate(context.Background(), &monitors.APIKeyCreateParams{
		ID: keys.NewID(), ProjectID: p.ID, Name: "test", Prefix: prefix, Hash: hash, ReadOnly: readOnly, Now: t0})
	require.NoError(b.t, err)
	return key
}

// response is an answer of the API.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) json(t *testing.T, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.body, v), "body: %s", r.body)
}

// errorBody decodes an error answer.
func (r *response) errorBody(t *testing.T) api.Error {
	t.Helper()
	var e api.Error
	r.json(t, &e)
	return e
}

// do sends a request with key as a bearer token (none when empty); body is
// JSON-encoded unless it is a string or []byte. Every answer of the API is
// checked against the OpenAPI document.
func (b *bundle) do(method, path, key string, body any) *response {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		enc, err := json.Marshal(v)
		require.NoError(b.t, err)
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, b.srv.URL+path, rd)
	require.NoError(b.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := b.srv.Client().Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err)
	r := &response{status: resp.StatusCode, header: resp.Header, body: data}
	b.checkAgainstDoc(req, r)
	return r
}

// checkAgainstDoc validates an answer of a /api/v1 route against the
// OpenAPI document: its status must be documented for the operation, and
// its body must match the schema.
func (b *bundle) checkAgainstDoc(req *http.Request, r *response) {
	b.t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/api/v1/") {
		return
	}
	tpl, params := matchRoute(b.h.Routes(), req.Method, req.URL.Path)
	if tpl == "" {
		return // no such route: echo's own 404 or 405
	}
	path := api.OpenAPIPath(tpl)
	item := b.doc.Paths.Find(path)
	require.NotNil(b.t, item, "%s is not in the OpenAPI document", path)
	op := item.GetOperation(req.Method)
	require.NotNil(b.t, op, "%s %s is not in the OpenAPI document", req.Method, path)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params,
			Route: &routers.Route{Spec: b.doc, Path: path, PathItem: item, Method: req.Method, Operation: op}},
		Status: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	require.NoError(b.t, openapi3filter.ValidateResponse(context.Background(), in),
		"%s %s answered %d, not as documented: %s", req.Method, req.URL.Path, r.status, r.body)
}

// matchRoute finds the route of the table that serves method and path.
func matchRoute(routes []api.Route, method, path string) (string, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, rt := range routes {
		if rt.Method != method {
			continue
		}
		tsegs := strings.Split(strings.Trim(rt.Path, "/"), "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params := map[string]string{}
		ok := true
		for i, s := range tsegs {
			if strings.HasPrefix(s, ":") {
				params[s[1:]] = segs[i]
			} else if s != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return rt.Path, params
		}
	}
	return "", nil
}

// createMonitor creates a monitor through the API and returns it.
func (b *bundle) createMonitor(body map[string]any) api.Monitor {
	b.t.Helper()
	r := b.do(http.MethodPost, "/api/v1/monitors", b.rw, body)
	require.Equal(b.t, http.StatusCreated, r.status, "%s", r.body)
	var m api.Monitor
	r.json(b.t, &m)
	return m
}

func (b *bundle) getMonitor(id string) api.Monitor {
	b.t.Helper()
	r := b.do(http.MethodGet, "/api/v1/monitors/"+id, b.rw, nil)
	require.Equal(b.t, http.StatusOK, r.status, "%s", r.body)
	var m api.Monitor
	r.json(b.t, &m)
	return m
}

// ping records pings for a monitor straight into the store.
func (b *bundle) ping(pingKey string, kind monitors.PingKind, at time.Time) {
	b.t.Helper()
	res, err := b.store.PingRecordBatch(context.Background(), &monitors.PingRecordBatchParams{
		Pings: []*monitors.PingRecordParams{{PingKey: pingKey, Ping: monitors.Ping{Kind: kind, At: at}}}})
	require.NoError(b.t, err)
	require.NoError(b.t, res[0].Err)
}

func ptr[T any](v T) *T { return &v }

// declareFromGoroutine declares specs without require, for use off the
// test's goroutine; failures are reported with t.Errorf.
func (b *bundle) declareFromGoroutine(t *testing.T, source string, specs []map[string]any) api.DeclarationResult {
	var res api.DeclarationResult
	body, err := json.Marshal(map[string]any{"monitors": specs})
	if err != nil {
		t.Errorf("encode: %v", err)
		return res
	}
	req, err := http.NewRequest(http.MethodPut, b.srv.URL+"/api/v1/sources/"+source+"/monitors", bytes.NewReader(body))
	if err != nil {
		t.Errorf("request: %v", err)
		return res
	}
	req.Header.Set("X-Api-Key", b.rw)
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		t.Errorf("declare: %v", err)
		return res
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("declare: %d %s %v", resp.StatusCode, data, err)
		return res
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Errorf("decode: %v", err)
	}
	return res
}
