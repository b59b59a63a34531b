package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// The rules of what a person changes are the same through the API as
// through the dashboard (web/person_rules_test.go tests the same three
// there).

func TestPausedByAPersonIsRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SQLite(t), options{})
	ctx := context.Background()
	m := b.createMonitor(map[string]any{"name": "nightly", "schedule": map[string]any{"kind": "interval", "every_seconds": 3600}})

	require.Equal(t, http.StatusOK, b.do(http.MethodPost, "/api/v1/monitors/"+m.ID+"/pause", b.rw, nil).status)
	fields, err := b.store.MonitorPersonFields(ctx, b.prj.ID, []string{m.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"paused"}, fields[m.ID])

	require.Equal(t, http.StatusOK, b.do(http.MethodPost, "/api/v1/monitors/"+m.ID+"/resume", b.rw, nil).status)
	fields, err = b.store.MonitorPersonFields(ctx, b.prj.ID, []string{m.ID})
	require.NoError(t, err)
	require.Empty(t, fields[m.ID])
}

func TestSourceMonitorSlugIsTheSources(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SQLite(t), options{})
	ctx := context.Background()
	m := &monitors.Monitor{ID: keys.NewID(), ProjectID: b.prj.ID, Name: "Billing", Slug: "billing",
		PingKey: keys.NewPingKey(), Source: "app", Discovered: true, CreatedAt: t0, UpdatedAt: t0,
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}}
	m.ApplyDefaults()
	require.NoError(t, b.store.MonitorInsert(ctx, m))

	r := b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"slug": "billing-renamed"})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	e := r.errorBody(t)
	require.Equal(t, "slug", e.Field)
	require.Contains(t, e.Error, `declared by source "app" is the source's`)
	got, err := b.store.MonitorGet(ctx, b.prj.ID, m.ID)
	require.NoError(t, err)
	require.Equal(t, "billing", got.Slug)

	r = b.do(http.MethodPatch, "/api/v1/monitors/"+m.ID, b.rw, map[string]any{"name": "Billing run"})
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
}

func TestChannelNameIsCapped(t *testing.T) {
	t.Parallel()
	b := setup(t, testdb.SQLite(t), options{})
	long := strings.Repeat("n", 201)
	body := func(name string) map[string]any {
		return map[string]any{"kind": "webhook", "name": name, "config": map[string]any{"url": "https://hooks.example.com/vigil"}}
	}
	r := b.do(http.MethodPost, "/api/v1/channels", b.rw, body(long))
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	e := r.errorBody(t)
	require.Equal(t, "name", e.Field)
	require.Equal(t, "name: must be at most 200 characters", e.Error)

	r = b.do(http.MethodPost, "/api/v1/channels", b.rw, body(long[:200]))
	require.Equal(t, http.StatusCreated, r.status, "%s", r.body)
	var ch struct{ ID string }
	r.json(t, &ch)
	r = b.do(http.MethodPatch, "/api/v1/channels/"+ch.ID, b.rw, map[string]any{"name": long})
	require.Equal(t, http.StatusBadRequest, r.status, "%s", r.body)
	require.Equal(t, "name: must be at most 200 characters", r.errorBody(t).Error)
}
