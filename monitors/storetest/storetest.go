// Package storetest is the conformance suite of [monitors.Store]: every
// implementation runs it, against a real database, so that the two stores
// cannot drift apart.
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) monitors.Store { return testdb.SQLite(t) }, storetest.Caps{})
//	}
//
// Each subtest runs in parallel on a store of its own (on PostgreSQL, a
// schema of its own), so no test sees another's rows.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// Caps says what an implementation can do beyond the common contract.
type Caps struct {
	// ConcurrentClaims: several stores on one database may call
	// MonitorEvaluateDue at once, as replicas do (PostgreSQL's SKIP LOCKED),
	// and each due monitor is still evaluated exactly once.
	ConcurrentClaims bool
	// Reopen opens another store on the database of s, which newStore
	// returned. The durability test uses it to read back what s committed.
	// Nil skips that test.
	Reopen func(t *testing.T, s monitors.Store) monitors.Store
	// WithMonitorLimit returns an empty store whose projects may have at
	// most max monitors (VIGIL_MAX_MONITORS_PER_PROJECT). Required.
	WithMonitorLimit func(t *testing.T, max int) monitors.Store
	// DeleteProject deletes a project of s by SQL (no API deletes one),
	// for the tests of what goes with it. Required.
	DeleteProject func(t *testing.T, s monitors.Store, id string)
	// Orphans runs [OrphansSQL] on the database of s. Required.
	Orphans func(t *testing.T, s monitors.Store) []string
}

// Run runs the conformance suite. newStore returns an empty store on a
// database of its own, closed when the test ends.
func Run(t *testing.T, newStore func(t *testing.T) monitors.Store, caps Caps) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"Ping", testPing},
		{"Project", testProject},
		{"APIKey", testAPIKey},
		{"Monitor/RoundTrip", testMonitorRoundTrip},
		{"Monitor/Conflicts", testMonitorConflicts},
		{"Monitor/CrossProject", testMonitorCrossProject},
		{"Monitor/Modify", testMonitorModify},
		{"Monitor/ModifyErrors", testMonitorModifyErrors},
		{"Monitor/Delete", testMonitorDelete},
		{"Monitor/ListFilters", testMonitorListFilters},
		{"Monitor/ListPaging", testMonitorListPaging},
		{"PingRecordBatch/AppliesState", testPingAppliesState},
		{"PingRecordBatch/Fields", testPingFields},
		{"PingRecordBatch/UnknownFailsAlone", testPingUnknownFailsAlone},
		{"PingRecordBatch/Create", testPingCreate},
		{"PingRecordBatch/CreateConflictFailsAlone", testPingCreateConflict},
		{"PingRecordBatch/Update", testPingUpdate},
		{"PingRecordBatch/SameMonitorKeepsOrder", testPingSameMonitorOrder},
		{"PingRecordBatch/LargeBatchOrder", testPingLargeBatchOrder},
		{"PingRecordBatch/KeysOnly", testPingKeysOnly},
		{"PingRecordBatch/ProjectRules", testPingProjectRules},
		{"PingRecordBatch/Incidents", testPingIncidents},
		{"PingRecordBatch/CleansText", testPingCleansText},
		{"PingRecordBatch/Concurrent", testPingConcurrent},
		{"PingRecordBatch/ConcurrentCreate", testPingConcurrentCreate},
		{"History/Paging", testHistoryPaging},
		{"EvaluateDue/MissedOnce", testEvaluateMissedOnce},
		{"EvaluateDue/Limit", testEvaluateLimit},
		{"EvaluateDue/IgnoresPausedAndNotDue", testEvaluateIgnores},
		{"EvaluateDue/OutagePostpones", testEvaluateOutage},
		{"Incident/OneOpenPerKind", testIncidentOneOpenPerKind},
		{"Incident/List", testIncidentList},
		{"Incident/Events", testIncidentEvents},
		{"MonitorNextDeadline", testNextDeadline},
		{"PingPrune", testPingPrune},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
	runEvaluator(t, newStore)
	runAPI(t, newStore)
	runDelivery(t, newStore)
	runWeb(t, newStore)
	runListPage(t, newStore)
	runLifecycle(t, newStore, caps)
	runCascades(t, newStore, caps)
	runHistory(t, newStore, caps)
	runUptime(t, newStore)
	runReports(t, newStore)
	runStatusPages(t, newStore)
	t.Run("PingRecordBatch/Durable", func(t *testing.T) {
		t.Parallel()
		if caps.Reopen == nil {
			t.Skip("the store cannot be reopened")
		}
		testPingDurable(t, setup(t, newStore), caps.Reopen)
	})
	t.Run("EvaluateDue/ConcurrentClaims", func(t *testing.T) {
		t.Parallel()
		if !caps.ConcurrentClaims {
			t.Skip("the store does not claim concurrently")
		}
		testEvaluateConcurrent(t, setup(t, newStore))
	})
}

// bundle is what each test starts with: an empty store with one project.
type bundle struct {
	s   monitors.Store
	ctx context.Context
	prj *monitors.Project
}

func setup(t *testing.T, newStore func(t *testing.T) monitors.Store) *bundle {
	s := newStore(t)
	return &bundle{s: s, ctx: t.Context(), prj: MustProject(t, s)}
}

func (b *bundle) monitor(t *testing.T, slug string, fn func(m *monitors.Monitor)) *monitors.Monitor {
	return MustMonitor(t, b.s, b.prj.ID, slug, fn)
}

func (b *bundle) get(t *testing.T, m *monitors.Monitor) *monitors.Monitor {
	t.Helper()
	got, err := b.s.MonitorGet(b.ctx, m.ProjectID, m.ID)
	require.NoError(t, err)
	return got
}

func (b *bundle) incidents(t *testing.T, p monitors.IncidentListParams) []*monitors.Incident {
	t.Helper()
	if p.ProjectID == "" {
		p.ProjectID = b.prj.ID
	}
	out, err := b.s.IncidentList(b.ctx, &p)
	require.NoError(t, err)
	return out
}

func (b *bundle) events(t *testing.T, incidentID string) []*monitors.IncidentEvent {
	t.Helper()
	out, err := b.s.IncidentEventList(b.ctx, &monitors.IncidentEventListParams{ProjectID: b.prj.ID, IncidentID: incidentID})
	require.NoError(t, err)
	return out
}

func (b *bundle) pings(t *testing.T, m *monitors.Monitor) []*monitors.Ping {
	t.Helper()
	out, err := b.s.PingList(b.ctx, &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID})
	require.NoError(t, err)
	return out
}

func (b *bundle) runs(t *testing.T, m *monitors.Monitor) []*monitors.Run {
	t.Helper()
	out, err := b.s.RunList(b.ctx, &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID})
	require.NoError(t, err)
	return out
}

func (b *bundle) evaluate(t *testing.T, now time.Time, limit int, opts monitors.TimeOptions) []monitors.EvaluatedMonitor {
	t.Helper()
	res, err := b.s.MonitorEvaluateDue(b.ctx, &monitors.EvaluateDueParams{Now: now, Limit: limit, Options: opts})
	require.NoError(t, err)
	return res.Evaluated
}

func eventKinds(evs []*monitors.IncidentEvent) []monitors.IncidentEventKind {
	out := make([]monitors.IncidentEventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

func slugs(ms []*monitors.Monitor) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Slug
	}
	return out
}

func testPing(t *testing.T, b *bundle) {
	require.NoError(t, b.s.Ping(b.ctx))
}

func testProject(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	p2, err := s.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: "prj_two", Name: "Two", PingKey: "pk_two", Now: T0.Add(time.Minute)})
	require.NoError(t, err)
	require.Equal(t, &monitors.Project{ID: "prj_two", Name: "Two", PingKey: "pk_two", CreatedAt: T0.Add(time.Minute)}, p2)

	got, err := s.ProjectGet(ctx, "prj_two")
	require.NoError(t, err)
	require.Equal(t, p2, got)
	got, err = s.ProjectGetByPingKey(ctx, "pk_two")
	require.NoError(t, err)
	require.Equal(t, p2, got)

	list, err := s.ProjectList(ctx)
	require.NoError(t, err)
	require.Equal(t, []*monitors.Project{b.prj, p2}, list, "oldest first")

	_, err = s.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: "prj_two", Name: "again", PingKey: "pk_other", Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict, "same ID")
	_, err = s.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: "prj_three", Name: "again", PingKey: "pk_two", Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict, "same ping key")

	_, err = s.ProjectGet(ctx, "prj_missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.ProjectGetByPingKey(ctx, "pk_missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testAPIKey(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	other := MustProject(t, s)
	k1, err := s.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{ID: "key1", ProjectID: b.prj.ID, Name: "ci", Prefix: "vk_ab",
		Hash: "hash1", ReadOnly: true, Now: T0})
	require.NoError(t, err)
	require.Equal(t, &monitors.APIKey{ID: "key1", ProjectID: b.prj.ID, Name: "ci", Prefix: "vk_ab", Hash: "hash1",
		ReadOnly: true, CreatedAt: T0}, k1)
	k2, err := s.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{ID: "key2", ProjectID: b.prj.ID, Name: "admin", Prefix: "vk_cd",
		Hash: "hash2", Now: T0.Add(time.Second)})
	require.NoError(t, err)

	got, err := s.APIKeyGetByHash(ctx, "hash1")
	require.NoError(t, err)
	require.Equal(t, k1, got)

	_, err = s.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{ID: "key3", ProjectID: b.prj.ID, Hash: "hash1", Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict, "same hash")
	_, err = s.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{ID: "key4", ProjectID: "prj_missing", Hash: "hash4", Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound, "unknown project")

	require.ErrorIs(t, s.APIKeyRevoke(ctx, other.ID, "key1", T0), monitors.ErrNotFound, "another project's key")
	require.ErrorIs(t, s.APIKeyRevoke(ctx, b.prj.ID, "key_missing", T0), monitors.ErrNotFound)

	revokedAt := T0.Add(time.Hour)
	require.NoError(t, s.APIKeyRevoke(ctx, b.prj.ID, "key1", revokedAt))
	require.NoError(t, s.APIKeyRevoke(ctx, b.prj.ID, "key1", revokedAt.Add(time.Hour)), "revoking twice is fine")
	_, err = s.APIKeyGetByHash(ctx, "hash1")
	require.ErrorIs(t, err, monitors.ErrNotFound, "revoked keys are not found")

	list, err := s.APIKeyList(ctx, b.prj.ID)
	require.NoError(t, err)
	k1.RevokedAt = &revokedAt
	require.Equal(t, []*monitors.APIKey{k1, k2}, list, "revoked keys are listed, with their first revocation time")

	list, err = s.APIKeyList(ctx, other.ID)
	require.NoError(t, err)
	require.Empty(t, list)
}

func testMonitorRoundTrip(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	expected := T0.Add(time.Hour)
	m := NewMonitor(b.prj.ID, "nightly-import", func(m *monitors.Monitor) {
		m.Name = "Nightly import"
		m.Description = "Imports yesterday's orders; call #data on failure"
		m.Tags = []string{"etl", "nightly"}
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin",
			Dialect: monitors.DialectRobfig}
		m.GraceSeconds, m.MaxRuntimeSeconds, m.DeadlineSeconds = 600, 3600, 10800
		m.AlertOnFailure, m.FailureThreshold, m.RecoveryThreshold = monitors.AlertEveryAttempt, 2, 3
		m.Overlap = monitors.OverlapIgnore
		m.Channels = []string{"ch_1", "ch_2"}
		m.Source, m.Discovered = "billing-service", true
		m.RetryPolicy = &monitors.RetryPolicy{Name: "hangfire", MaxRetries: 10, MaxDelaysSeconds: []int64{30, 60}}
		m.HideOutput = true
		m.MinRuntimeSeconds, m.EarlySeconds, m.TooOften = 120, 300, monitors.TooOftenAlert
		m.UpdatedAt = T0.Add(time.Minute)
		m.State = monitors.State{
			Status: monitors.StatusRunning, LastPingAt: T0, LastPingKind: monitors.PingStart, LastSuccessAt: T0.Add(-time.Hour),
			Expected: expected, DeadlineOcc: expected,
			Runs:   []monitors.OpenRun{{Seq: 7, RID: "r-7", StartedAt: T0, Attempt: 2, Retry: true}},
			Ran:    []monitors.RanOcc{{At: T0.Add(-24 * time.Hour), Runs: 2}},
			RunSeq: 7, Failures: 1,
			Open: map[monitors.IncidentKind]time.Time{monitors.IncidentOverlap: T0},
		}
	})
	require.NoError(t, m.Validate())
	// A stale deadline from the caller does not matter: the store derives it.
	m.NextDeadlineAt = ptr(T0.Add(-48 * time.Hour))
	require.NoError(t, s.MonitorInsert(ctx, m))
	require.Equal(t, m.NextDeadline(), m.NextDeadlineAt)

	want := *m
	want.NextDeadlineAt = ptr(T0.Add(time.Hour)) // the open run's max runtime
	for _, get := range []func() (*monitors.Monitor, error){
		func() (*monitors.Monitor, error) { return s.MonitorGet(ctx, b.prj.ID, m.ID) },
		func() (*monitors.Monitor, error) { return s.MonitorGetBySlug(ctx, b.prj.ID, "nightly-import") },
		func() (*monitors.Monitor, error) { return s.MonitorGetByPingKey(ctx, m.PingKey) },
	} {
		got, err := get()
		require.NoError(t, err)
		require.Equal(t, &want, got)
	}

	_, err := s.MonitorGetByPingKey(ctx, "key_missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.MonitorGetBySlug(ctx, b.prj.ID, "missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)

	// A minimal monitor: no tags, no channels, no retry policy, new.
	plain := b.monitor(t, "plain", nil)
	got := b.get(t, plain)
	require.Equal(t, plain, got)
	require.Equal(t, []string{}, got.Tags)
	require.Nil(t, got.RetryPolicy)
	require.Nil(t, got.NextDeadlineAt)
}

func testMonitorConflicts(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	other := MustProject(t, s)

	err := s.MonitorInsert(ctx, NewMonitor(b.prj.ID, "job", nil))
	require.ErrorIs(t, err, monitors.ErrConflict, "same slug in one project")
	MustMonitor(t, s, other.ID, "job", nil) // same slug in another project is fine

	err = s.MonitorInsert(ctx, NewMonitor(other.ID, "job-2", func(n *monitors.Monitor) { n.PingKey = m.PingKey }))
	require.ErrorIs(t, err, monitors.ErrConflict, "same ping key")
	err = s.MonitorInsert(ctx, NewMonitor(b.prj.ID, "job-3", func(n *monitors.Monitor) { n.ID = m.ID }))
	require.ErrorIs(t, err, monitors.ErrConflict, "same ID")
	err = s.MonitorInsert(ctx, NewMonitor("prj_missing", "job", nil))
	require.ErrorIs(t, err, monitors.ErrNotFound, "unknown project")
}

func testMonitorCrossProject(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	res := MustRecord(t, s, Ping(m, monitors.PingFail, T0))
	require.Len(t, res[0].Transition.Incidents, 1)
	in := b.incidents(t, monitors.IncidentListParams{})[0]

	other := MustProject(t, s)
	_, err := s.MonitorGet(ctx, other.ID, m.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.MonitorGetBySlug(ctx, other.ID, m.Slug)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	called := false
	_, err = s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: other.ID, ID: m.ID, Fn: func(*monitors.Monitor) (*monitors.Transition, error) {
		called = true
		return nil, nil
	}})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	require.False(t, called, "Fn is not called for another project's monitor")
	require.ErrorIs(t, s.MonitorDelete(ctx, other.ID, m.ID), monitors.ErrNotFound)

	hist := &monitors.HistoryListParams{ProjectID: other.ID, MonitorID: m.ID}
	_, err = s.PingList(ctx, hist)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.RunList(ctx, hist)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.IncidentGet(ctx, other.ID, in.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: other.ID, MonitorID: m.ID})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: other.ID, IncidentID: in.ID})
	require.ErrorIs(t, err, monitors.ErrNotFound)

	list, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: other.ID})
	require.NoError(t, err)
	require.Empty(t, list)
	ins, err := s.IncidentList(ctx, &monitors.IncidentListParams{ProjectID: other.ID})
	require.NoError(t, err)
	require.Empty(t, ins)
	evs, err := s.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: other.ID})
	require.NoError(t, err)
	require.Empty(t, evs)

	// A ping by slug with another project's ping key does not find it.
	res2, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{ProjectPingKey: other.PingKey, Slug: m.Slug, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
	}})
	require.NoError(t, err)
	require.ErrorIs(t, res2[0].Err, monitors.ErrNotFound)

	// The owner still sees everything.
	_, err = s.IncidentGet(ctx, b.prj.ID, in.ID)
	require.NoError(t, err)
}

func testMonitorModify(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	MustRecord(t, s,
		&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail, At: T0}},
		&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: T0.Add(time.Minute), RID: "r2"}},
	)
	before := b.get(t, m)
	require.Equal(t, monitors.StatusDown, before.State.Status)

	now := T0.Add(2 * time.Minute)
	got, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		m.Name, m.Tags, m.UpdatedAt = "Renamed", []string{"new-tag"}, now
		return monitors.Pause(m, now)
	}})
	require.NoError(t, err)
	require.True(t, got.Paused)
	require.Equal(t, monitors.StatusPaused, got.State.Status)
	require.Nil(t, got.NextDeadlineAt)

	stored := b.get(t, m)
	require.Equal(t, got, stored)
	require.Equal(t, "Renamed", stored.Name)
	require.Equal(t, []string{"new-tag"}, stored.Tags)
	require.Equal(t, now, stored.UpdatedAt)

	// The transition was written: the open run abandoned, the incident
	// resolved with its event.
	runs := b.runs(t, m)
	require.Len(t, runs, 2)
	require.Equal(t, monitors.RunAbandoned, runs[0].Outcome)
	require.Equal(t, "r2", runs[0].RID)
	require.Equal(t, now, *runs[0].FinishedAt)
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1)
	require.Equal(t, now, *ins[0].ResolvedAt)
	require.Equal(t, "the monitor was paused", ins[0].ResolveSummary)
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventResolved}, eventKinds(b.events(t, ins[0].ID)))

	// A nil transition writes the monitor alone.
	got, err = s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		m.Slug = "job-renamed"
		return nil, nil
	}})
	require.NoError(t, err)
	require.Equal(t, "job-renamed", b.get(t, m).Slug)
	require.Equal(t, got, b.get(t, m))
}

func testMonitorModifyErrors(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	b.monitor(t, "taken", nil)

	errBoom := errors.New("boom")
	_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		m.Name = "changed"
		return &monitors.Transition{Incidents: []monitors.IncidentChange{{Op: monitors.IncidentOpen, Kind: monitors.IncidentMissed, At: T0}}}, errBoom
	}})
	require.ErrorIs(t, err, errBoom, "Fn's error is returned")
	require.Equal(t, m, b.get(t, m), "and nothing is written")
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{}))

	_, err = s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		m.Slug = "taken"
		return nil, nil
	}})
	require.ErrorIs(t, err, monitors.ErrConflict, "a slug in use")
	require.Equal(t, m, b.get(t, m))

	_, err = s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		m.ID = "mon_other"
		return nil, nil
	}})
	require.Error(t, err, "the ID cannot change")
	require.Equal(t, m, b.get(t, m))

	_, err = s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: "mon_missing", Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		return nil, nil
	}})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testMonitorDelete(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	keep := b.monitor(t, "keep", nil)
	MustRecord(t, s, Ping(m, monitors.PingStart, T0), Ping(m, monitors.PingFail, T0.Add(time.Second)), Ping(keep, monitors.PingFail, T0))
	require.Len(t, b.incidents(t, monitors.IncidentListParams{}), 2)

	require.NoError(t, s.MonitorDelete(ctx, b.prj.ID, m.ID))
	_, err := s.MonitorGet(ctx, b.prj.ID, m.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.PingList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1, "its incidents went with it")
	require.Equal(t, keep.ID, ins[0].MonitorID)
	evs := b.events(t, "")
	require.Len(t, evs, 1, "and their events")
	require.Len(t, b.pings(t, keep), 1, "other monitors keep their history")

	require.ErrorIs(t, s.MonitorDelete(ctx, b.prj.ID, m.ID), monitors.ErrNotFound)

	// The slug and ping key are free again.
	require.NoError(t, s.MonitorInsert(ctx, NewMonitor(b.prj.ID, "job", func(n *monitors.Monitor) { n.PingKey = m.PingKey })))
}

func testMonitorListFilters(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	newOne := b.monitor(t, "new-one", func(m *monitors.Monitor) { m.Tags = []string{"x-etl"} })
	up := b.monitor(t, "up-one", func(m *monitors.Monitor) { m.Tags = []string{"etl", "nightly"} })
	late := b.monitor(t, "late-one", func(m *monitors.Monitor) { m.Tags = []string{"etl2"} })
	down := b.monitor(t, "down-one", func(m *monitors.Monitor) { m.Source = "billing" })
	paused := b.monitor(t, "paused-one", func(m *monitors.Monitor) { m.Source = "billing-2" })
	running := b.monitor(t, "running-one", nil)
	MustRecord(t, s,
		Ping(late, monitors.PingSuccess, T0),
		Ping(down, monitors.PingFail, T0),
		Ping(up, monitors.PingSuccess, T0.Add(30*time.Minute)),
		Ping(running, monitors.PingStart, T0.Add(65*time.Minute)),
	)
	_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: paused.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		return monitors.Pause(m, T0)
	}})
	require.NoError(t, err)
	_ = newOne

	// At now, late-one's expected time (T0+1h) has passed and up-one's
	// (T0+1h30m) has not; both are stored up.
	now := T0.Add(70 * time.Minute)
	list := func(p monitors.MonitorListParams) []string {
		t.Helper()
		p.ProjectID, p.Now = b.prj.ID, now
		ms, err := s.MonitorList(ctx, &p)
		require.NoError(t, err)
		for _, m := range ms {
			if len(p.Statuses) > 0 {
				require.Contains(t, p.Statuses, m.StatusAt(now), "the filter agrees with StatusAt")
			}
		}
		return slugs(ms)
	}
	require.Equal(t, []string{"down-one", "late-one", "new-one", "paused-one", "running-one", "up-one"}, list(monitors.MonitorListParams{}))
	st := func(s ...monitors.Status) monitors.MonitorListParams { return monitors.MonitorListParams{Statuses: s} }
	require.Equal(t, []string{"up-one"}, list(st(monitors.StatusUp)))
	require.Equal(t, []string{"late-one"}, list(st(monitors.StatusLate)))
	require.Equal(t, []string{"late-one", "up-one"}, list(st(monitors.StatusUp, monitors.StatusLate)))
	require.Equal(t, []string{"new-one"}, list(st(monitors.StatusNew)))
	require.Equal(t, []string{"down-one", "paused-one"}, list(st(monitors.StatusDown, monitors.StatusPaused)))
	require.Equal(t, []string{"running-one"}, list(st(monitors.StatusRunning)))
	require.Equal(t, []string{"late-one", "running-one"}, list(st(monitors.StatusLate, monitors.StatusRunning)))
	require.Empty(t, list(st(monitors.StatusRetrying)))

	require.Equal(t, []string{"up-one"}, list(monitors.MonitorListParams{Tag: "etl"}), "tags match exactly")
	require.Equal(t, []string{"up-one"}, list(monitors.MonitorListParams{Tag: "nightly"}))
	require.Empty(t, list(monitors.MonitorListParams{Tag: "et"}))
	require.Equal(t, []string{"down-one"}, list(monitors.MonitorListParams{Source: "billing"}), "sources match exactly")
	require.Equal(t, []string{"up-one"}, list(monitors.MonitorListParams{Tag: "etl", Statuses: []monitors.Status{monitors.StatusUp}}))
	require.Empty(t, list(monitors.MonitorListParams{Tag: "etl", Statuses: []monitors.Status{monitors.StatusLate}}))

	// At the expected time itself, the monitor is late.
	ms, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: T0.Add(time.Hour), Statuses: []monitors.Status{monitors.StatusLate}})
	require.NoError(t, err)
	require.Equal(t, []string{"late-one"}, slugs(ms))
}

func testMonitorListPaging(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	var ids []string
	for _, slug := range []string{"c", "a", "b"} {
		b.monitor(t, slug, nil)
	}
	// Two monitors with one name are ordered by ID.
	for _, slug := range []string{"same-2", "same-1"} {
		m := b.monitor(t, slug, func(m *monitors.Monitor) { m.Name = "same" })
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	all, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: T0})
	require.NoError(t, err)
	require.Len(t, all, 5)
	require.Equal(t, []string{"a", "b", "c"}, slugs(all[:3]))
	require.Equal(t, ids, []string{all[3].ID, all[4].ID})

	page, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: T0, Limit: 2, Offset: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"b", "c"}, slugs(page))
	page, err = s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: T0, Offset: 4})
	require.NoError(t, err)
	require.Equal(t, []string{all[4].ID}, []string{page[0].ID})
	page, err = s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: T0, Limit: 10, Offset: 5})
	require.NoError(t, err)
	require.Empty(t, page)
}

func testPingAppliesState(t *testing.T, b *bundle) {
	s := b.s
	m := b.monitor(t, "job", nil)
	pings := []*monitors.PingRecordParams{
		{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: T0, RID: "r1"}},
		{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0.Add(90 * time.Second), RID: "r1"}},
	}
	// The reference: the pure state machine on the same monitor.
	want := *m
	var wantTr []*monitors.Transition
	for _, p := range pings {
		ping := p.Ping
		tr, err := monitors.ApplyPing(&want, &ping)
		require.NoError(t, err)
		wantTr = append(wantTr, tr)
	}

	res := MustRecord(t, s, pings...)
	got := b.get(t, m)
	require.JSONEq(t, stateJSON(t, want.State), stateJSON(t, got.State))
	require.Equal(t, want.NextDeadlineAt, got.NextDeadlineAt)
	require.Equal(t, ptr(T0.Add(90*time.Second+time.Hour+5*time.Minute)), got.NextDeadlineAt)
	require.Equal(t, monitors.StatusUp, got.State.Status)

	stored := b.pings(t, m)
	require.Len(t, stored, 2)
	for i, r := range res {
		require.Equal(t, m.ID, r.MonitorID)
		require.NotNil(t, r.Monitor, "the result carries the monitor")
		require.Equal(t, m.ID, r.Monitor.ID)
		require.Equal(t, m.Schedule, r.Monitor.Schedule)
		require.NotZero(t, r.PingID)
		require.False(t, r.Created)
		require.Equal(t, wantTr[i], r.Transition)
		require.Equal(t, r.PingID, pings[i].Ping.ID, "the ID is set in the params")
		require.Equal(t, m.ID, pings[i].Ping.MonitorID)
		require.Equal(t, r.PingID, stored[len(stored)-1-i].ID, "newest first")
	}
	require.Less(t, res[0].PingID, res[1].PingID)

	runs := b.runs(t, m)
	require.Len(t, runs, 1, "start and success of one run are one row")
	require.Equal(t, &monitors.Run{MonitorID: m.ID, Seq: 1, RID: "r1", StartedAt: ptr(T0), FinishedAt: ptr(T0.Add(90 * time.Second)),
		Outcome: monitors.RunSucceeded, DurationMS: ptr(int64(90000))}, runs[0])

	// A log ping is stored and changes nothing.
	MustRecord(t, s, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingLog, At: T0.Add(time.Hour), Body: "hello"}})
	after := b.get(t, m)
	require.JSONEq(t, stateJSON(t, got.State), stateJSON(t, after.State))
	require.Len(t, b.pings(t, m), 3)
}

func testPingFields(t *testing.T, b *bundle) {
	s := b.s
	m := b.monitor(t, "job", nil)
	retryAt := T0.Add(10 * time.Minute)
	// The occurrence the attempt belongs to (scheduled_at), in another zone
	// and finer than a microsecond: stored in UTC, to the microsecond.
	scheduledAt := T0.Add(-time.Hour + 7*time.Nanosecond + 2*time.Microsecond).In(time.FixedZone("UTC+2", 2*3600))
	p := monitors.Ping{Kind: monitors.PingFail, At: T0.Add(123456789 * time.Nanosecond), RID: "run-1", Attempt: 2, RetryAt: &retryAt,
		ScheduledAt: &scheduledAt, ExitCode: ptr(3), DurationMS: ptr(int64(1500)), Body: "line 1\nline 2", BodyTruncated: true,
		RemoteAddr: "192.0.2.1", UserAgent: "curl/8.5"}
	res := MustRecord(t, s, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: p})
	// Times are kept to the microsecond, as PostgreSQL keeps them.
	p.ID, p.MonitorID, p.At = res[0].PingID, m.ID, T0.Add(123456*time.Microsecond)
	p.ScheduledAt = ptr(T0.Add(-time.Hour + 2*time.Microsecond).UTC())
	got := b.pings(t, m)
	require.Equal(t, []*monitors.Ping{&p}, got)

	// The announced retry: retrying, with the run marked as retried.
	mon := b.get(t, m)
	require.Equal(t, monitors.StatusRetrying, mon.State.Status)
	require.Equal(t, p.At, mon.State.LastPingAt, "the state saw the ping as stored")
	runs := b.runs(t, m)
	require.Len(t, runs, 1)
	require.True(t, runs[0].WillRetry)
	require.Equal(t, ptr(3), runs[0].ExitCode)
	require.Equal(t, 2, runs[0].Attempt)
	require.Equal(t, ptr(int64(1500)), runs[0].DurationMS)
	require.Equal(t, ptr(p.At.Add(-1500*time.Millisecond)), runs[0].StartedAt)
}

func testPingUnknownFailsAlone(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		Ping(m, monitors.PingStart, T0),
		{PingKey: "key_unknown", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: "pk_unknown", Slug: "job", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: b.prj.PingKey, Slug: "unknown", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: "pk_unknown", Slug: "new", Create: true, NewMonitor: NewMonitor("", "new", nil),
			Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: b.prj.PingKey, Slug: "job", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0.Add(time.Minute)}},
	}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	for i := 1; i <= 5; i++ {
		require.ErrorIs(t, res[i].Err, monitors.ErrNotFound, "ping %d", i)
		require.Zero(t, res[i].PingID)
	}
	require.NoError(t, res[6].Err)
	require.Equal(t, m.ID, res[6].MonitorID, "found by project ping key and slug")

	require.Len(t, b.pings(t, m), 2)
	got := b.get(t, m)
	require.Equal(t, monitors.StatusUp, got.State.Status)
	list, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID})
	require.NoError(t, err)
	require.Len(t, list, 1, "nothing was created")
}

// testPingUpdate records pings with Update (update=1): the change and the
// ping are written together, the monitor's whole row and its person fields;
// the other monitors of the batch keep every setting; an Update that
// fails fails its ping alone, which is not stored, and changes nothing.
func testPingUpdate(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	a := b.monitor(t, "a", nil)
	other := b.monitor(t, "other", func(m *monitors.Monitor) {
		m.Tags, m.GraceSeconds = []string{"etl", "nightly"}, 77
		m.RetryPolicy = &monitors.RetryPolicy{Name: "hangfire", MaxRetries: 3, MaxDelaysSeconds: []int64{60, 120}}
	})
	cron := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin", Dialect: monitors.DialectCronie}
	var gotFields []string
	update := func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
		gotFields = pf
		m.Schedule, m.UpdatedAt = cron, T0.Add(time.Minute)
		tr, err := monitors.Reconfigure(m, T0.Add(time.Minute))
		return tr, append(slices.Clone(pf), "schedule"), err
	}
	refused := errors.New("refused")
	at := T0.Add(time.Minute)
	res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{PingKey: a.PingKey, Update: update, Ping: monitors.Ping{Kind: monitors.PingStart, At: at, RID: "r1"}},
		{PingKey: other.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at}},
		{ProjectPingKey: b.prj.PingKey, Slug: "a", Ping: monitors.Ping{Kind: monitors.PingLog, At: at},
			Update: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
				m.GraceSeconds = 1 // must not stay
				return nil, nil, refused
			}},
	}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.NoError(t, res[1].Err)
	require.ErrorIs(t, res[2].Err, refused)
	require.Zero(t, res[2].PingID)
	require.Empty(t, gotFields, "no person fields yet")

	got := b.get(t, a)
	require.Equal(t, cron, got.Schedule)
	require.Equal(t, a.GraceSeconds, got.GraceSeconds, "the refused change left nothing")
	require.True(t, got.UpdatedAt.Equal(at))
	require.Equal(t, monitors.StatusRunning, got.State.Status, "the ping applied after the change")
	require.Len(t, b.pings(t, a), 1)
	pf, err := s.MonitorPersonFields(ctx, b.prj.ID, []string{a.ID, other.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"schedule"}, pf[a.ID])
	require.Empty(t, pf[other.ID])

	o := b.get(t, other)
	require.Equal(t, []string{"etl", "nightly"}, o.Tags)
	require.Equal(t, int64(77), o.GraceSeconds)
	require.Equal(t, other.RetryPolicy, o.RetryPolicy)
	require.Equal(t, monitors.StatusUp, o.State.Status)

	// The next Update sees the stored person fields.
	MustRecord(t, s, &monitors.PingRecordParams{PingKey: a.PingKey, Update: update,
		Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at.Add(time.Second), RID: "r1"}})
	require.Equal(t, []string{"schedule"}, gotFields)
}

func testPingCreate(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	nm := NewMonitor("", "backup", func(m *monitors.Monitor) { m.GraceSeconds = 120 })
	nm2 := NewMonitor("", "backup", nil) // another caller's candidate for the same slug
	create := func(nm *monitors.Monitor, kind monitors.PingKind, at time.Time) *monitors.PingRecordParams {
		return &monitors.PingRecordParams{ProjectPingKey: b.prj.PingKey, Slug: "backup", Create: true, NewMonitor: nm,
			Ping: monitors.Ping{Kind: kind, At: at}}
	}
	res := MustRecord(t, s, create(nm, monitors.PingStart, T0), create(nm2, monitors.PingSuccess, T0.Add(time.Minute)))
	require.True(t, res[0].Created)
	require.False(t, res[1].Created, "the second ping finds the monitor the first created")
	require.Equal(t, nm.ID, res[0].MonitorID)
	require.Equal(t, nm.ID, res[1].MonitorID)

	got, err := s.MonitorGetBySlug(ctx, b.prj.ID, "backup")
	require.NoError(t, err)
	require.Equal(t, nm.ID, got.ID)
	require.Equal(t, b.prj.ID, got.ProjectID)
	require.Equal(t, nm.PingKey, got.PingKey)
	require.Equal(t, int64(120), got.GraceSeconds)
	require.Equal(t, monitors.StatusUp, got.State.Status)
	require.Equal(t, int64(1), got.State.RunSeq)
	require.Len(t, b.runs(t, got), 1, "both pings went to the one monitor")

	// Later, create=1 finds the existing monitor.
	res = MustRecord(t, s, create(NewMonitor("", "backup", nil), monitors.PingSuccess, T0.Add(time.Hour)))
	require.False(t, res[0].Created)
	require.Equal(t, nm.ID, res[0].MonitorID)

	// Without create, an unknown slug is not found.
	res2, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{ProjectPingKey: b.prj.PingKey, Slug: "other", NewMonitor: NewMonitor("", "other", nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
	}})
	require.NoError(t, err)
	require.ErrorIs(t, res2[0].Err, monitors.ErrNotFound)
}

func testPingCreateConflict(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	clash := NewMonitor("", "new-job", func(n *monitors.Monitor) { n.PingKey = m.PingKey })
	fine := NewMonitor("", "fine-job", nil)
	res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		Ping(m, monitors.PingSuccess, T0),
		{ProjectPingKey: b.prj.PingKey, Slug: "new-job", Create: true, NewMonitor: clash, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: b.prj.PingKey, Slug: "fine-job", Create: true, NewMonitor: fine, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: b.prj.PingKey, Slug: "new-job", Create: true, NewMonitor: clash, Ping: monitors.Ping{Kind: monitors.PingFail, At: T0}},
		{ProjectPingKey: b.prj.PingKey, Slug: "bad", Create: true, NewMonitor: NewMonitor("", "bad", func(n *monitors.Monitor) { n.GraceSeconds = -1 }),
			Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: b.prj.PingKey, Slug: "no-template", Create: true, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
	}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.ErrorIs(t, res[1].Err, monitors.ErrConflict, "the new monitor's ping key is taken")
	require.NoError(t, res[2].Err)
	require.True(t, res[2].Created)
	require.ErrorIs(t, res[3].Err, monitors.ErrConflict, "every ping for it fails")
	var verr *monitors.ValidationError
	require.ErrorAs(t, res[4].Err, &verr, "an invalid new monitor is refused")
	require.Error(t, res[5].Err, "create needs a NewMonitor")

	_, err = s.MonitorGetBySlug(ctx, b.prj.ID, "new-job")
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.MonitorGetBySlug(ctx, b.prj.ID, "fine-job")
	require.NoError(t, err)
	require.Len(t, b.pings(t, m), 1)
}

func testPingSameMonitorOrder(t *testing.T, b *bundle) {
	s := b.s
	m := b.monitor(t, "job", nil)
	at := func(min int) time.Time { return T0.Add(time.Duration(min) * time.Minute) }
	pings := []*monitors.PingRecordParams{
		{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: at(0), RID: "a"}},
		{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail, At: at(1), RID: "a"}},
		{ProjectPingKey: b.prj.PingKey, Slug: "job", Ping: monitors.Ping{Kind: monitors.PingStart, At: at(2), RID: "b"}},
		{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at(3), RID: "b"}},
	}
	want := *m
	for _, p := range pings {
		ping := p.Ping
		_, err := monitors.ApplyPing(&want, &ping)
		require.NoError(t, err)
	}
	res := MustRecord(t, s, pings...)
	for i := 1; i < len(res); i++ {
		require.Less(t, res[i-1].PingID, res[i].PingID, "IDs follow the batch order")
	}
	got := b.get(t, m)
	require.JSONEq(t, stateJSON(t, want.State), stateJSON(t, got.State))
	require.Equal(t, monitors.PingSuccess, got.State.LastPingKind)

	runs := b.runs(t, m)
	require.Len(t, runs, 2)
	require.Equal(t, "b", runs[0].RID)
	require.Equal(t, monitors.RunSucceeded, runs[0].Outcome)
	require.Equal(t, "a", runs[1].RID)
	require.Equal(t, monitors.RunFailed, runs[1].Outcome)

	// The failure opened an incident and the success resolved it, in order.
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1)
	require.Equal(t, monitors.IncidentFailed, ins[0].Kind)
	require.Equal(t, at(1), ins[0].OpenedAt)
	require.Equal(t, at(3), *ins[0].ResolvedAt)
	require.Equal(t, res[1].PingID, ins[0].PingID, "the incident names the ping that opened it")
	require.Equal(t, int64(1), ins[0].RunSeq)
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventResolved}, eventKinds(b.events(t, ins[0].ID)))
}

// testPingKeysOnly records a batch that names every monitor by its ping
// key (the usual batch, which a store may load in a way of its own): a
// monitor pinged several times, unknown keys between good ones, and a
// monitor named twice in a row. Each good ping gets its own ID in batch
// order, each monitor sees its pings in order, and an unknown key fails
// alone.
func testPingKeysOnly(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	a := b.monitor(t, "a", nil)
	c := b.monitor(t, "c", nil)
	at := func(sec int) time.Time { return T0.Add(time.Duration(sec) * time.Second) }
	unknown := func(sec int) *monitors.PingRecordParams {
		return &monitors.PingRecordParams{PingKey: "key_unknown", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at(sec)}}
	}
	pings := []*monitors.PingRecordParams{
		{PingKey: a.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: at(1), RID: "r1"}},
		unknown(2),
		{PingKey: c.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail, At: at(3)}},
		{PingKey: a.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at(4), RID: "r1"}},
		{PingKey: a.PingKey, Ping: monitors.Ping{Kind: monitors.PingLog, At: at(5), Body: "after"}},
		unknown(6),
		{PingKey: c.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at(7)}},
	}
	res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: pings})
	require.NoError(t, err)
	require.Len(t, res, len(pings))
	var ids []int64
	for i, r := range res {
		if pings[i].PingKey == "key_unknown" {
			require.ErrorIs(t, r.Err, monitors.ErrNotFound, "ping %d", i)
			require.Zero(t, r.PingID)
			continue
		}
		require.NoError(t, r.Err, "ping %d", i)
		ids = append(ids, r.PingID)
	}
	require.True(t, slices.IsSorted(ids), "IDs follow the batch order: %v", ids)
	require.Len(t, slices.Compact(slices.Clone(ids)), len(ids), "one ID each")

	stored := b.pings(t, a)
	require.Len(t, stored, 3)
	require.Equal(t, []int64{res[4].PingID, res[3].PingID, res[0].PingID}, []int64{stored[0].ID, stored[1].ID, stored[2].ID})
	require.Equal(t, "after", stored[0].Body)
	stored = b.pings(t, c)
	require.Equal(t, []int64{res[6].PingID, res[2].PingID}, []int64{stored[0].ID, stored[1].ID})

	runs := b.runs(t, a)
	require.Len(t, runs, 1, "the start and the success are one run")
	require.Equal(t, monitors.RunSucceeded, runs[0].Outcome)
	require.Equal(t, ptr(int64(3000)), runs[0].DurationMS)
	for _, m := range []*monitors.Monitor{a, c} {
		want := *m
		for _, p := range pings {
			if p.PingKey == m.PingKey {
				ping := p.Ping
				_, err := monitors.ApplyPing(&want, &ping)
				require.NoError(t, err)
			}
		}
		got := b.get(t, m)
		require.JSONEq(t, stateJSON(t, want.State), stateJSON(t, got.State), "the state saw %s's pings in order", m.Slug)
	}
	require.Equal(t, monitors.StatusUp, b.get(t, c).State.Status, "the success came after the failure")
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1)
	require.Equal(t, res[2].PingID, ins[0].PingID, "the incident names the ping that opened it")
	require.NotNil(t, ins[0].ResolvedAt)
}

// testPingProjectRules: one batch over two projects, by ping key, by slug
// and by create=1. Each ping is judged under its own project's maintenance
// windows and late channels, and the other project's do not leak into it.
func testPingProjectRules(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	other := MustProject(t, s)
	w := &monitors.MaintenanceWindow{ID: RandomID("mw_"), ProjectID: b.prj.ID, Name: "upgrade", All: true,
		StartsAt: T0.Add(-time.Hour), EndsAt: T0.Add(time.Hour), CreatedAt: T0, UpdatedAt: T0}
	require.NoError(t, s.MaintenanceWindowCreate(ctx, w))
	_, err := s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: b.prj.ID, Kind: "webhook",
		Name: "late hook", Config: json.RawMessage(`{"url":"https://example.com/hook","secret":"s3cret"}`),
		IsDefault: true, NotifyLate: true, Now: T0})
	require.NoError(t, err)
	_, err = s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: other.ID, Kind: "webhook",
		Name: "hook", Config: json.RawMessage(`{"url":"https://example.com/hook","secret":"s3cret"}`),
		IsDefault: true, Now: T0})
	require.NoError(t, err)
	byKey := b.monitor(t, "by-key", nil)
	bySlug := MustMonitor(t, s, other.ID, "by-slug", nil)
	otherByKey := MustMonitor(t, s, other.ID, "other-by-key", nil)
	at := T0.Add(time.Minute)
	res := MustRecord(t, s,
		&monitors.PingRecordParams{PingKey: byKey.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at}},
		&monitors.PingRecordParams{ProjectPingKey: other.PingKey, Slug: bySlug.Slug, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at}},
		&monitors.PingRecordParams{ProjectPingKey: b.prj.PingKey, Slug: "created", Create: true,
			NewMonitor: NewMonitor("", "created", nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at}},
		&monitors.PingRecordParams{PingKey: otherByKey.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at}},
	)
	for i, want := range []struct {
		id          string
		maintenance bool
		notifyLate  bool
	}{{byKey.ID, true, true}, {bySlug.ID, false, false}, {res[2].MonitorID, true, true}, {otherByKey.ID, false, false}} {
		r := res[i]
		require.Equal(t, want.id, r.MonitorID, "ping %d", i)
		require.NotNil(t, r.Monitor, "ping %d", i)
		require.Equal(t, want.maintenance, len(r.Monitor.Maintenance) > 0, "ping %d: under its project's window", i)
		require.Equal(t, want.notifyLate, r.Monitor.NotifyLate, "ping %d: told of lateness by its project's channel", i)
	}
	require.True(t, res[2].Created)
}

func testPingLargeBatchOrder(t *testing.T, b *bundle) {
	ms := []*monitors.Monitor{b.monitor(t, "a", nil), b.monitor(t, "b", nil), b.monitor(t, "c", nil)}
	var pings []*monitors.PingRecordParams
	for i := range 101 {
		m := ms[(i*7)%len(ms)]
		pings = append(pings, &monitors.PingRecordParams{PingKey: m.PingKey,
			Ping: monitors.Ping{Kind: monitors.PingLog, At: T0.Add(time.Duration(i) * time.Second), Body: fmt.Sprint(i)}})
	}
	res := MustRecord(t, b.s, pings...)
	for i := 1; i < len(res); i++ {
		require.Less(t, res[i-1].PingID, res[i].PingID, "IDs follow the batch order")
	}
	for _, m := range ms {
		stored := b.pings(t, m)
		for _, p := range stored {
			var i int
			_, err := fmt.Sscan(p.Body, &i)
			require.NoError(t, err)
			require.Equal(t, res[i].PingID, p.ID, "ping %d has its own ID", i)
			require.Equal(t, m.ID, res[i].MonitorID)
		}
	}
}

func testPingIncidents(t *testing.T, b *bundle) {
	s := b.s
	m := b.monitor(t, "job", func(m *monitors.Monitor) { m.AlertOnFailure = monitors.AlertEveryAttempt })
	at := func(min int) time.Time { return T0.Add(time.Duration(min) * time.Minute) }
	fail := func(min int) *monitors.PingRecordParams {
		return &monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail, At: at(min), ExitCode: ptr(min)}}
	}
	res := MustRecord(t, s, fail(1))
	require.Equal(t, monitors.IncidentOpen, res[0].Transition.Incidents[0].Op)
	MustRecord(t, s, fail(2), fail(3))

	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1, "later failures update the open incident")
	in := ins[0]
	require.Equal(t, m.ID, in.MonitorID)
	require.Equal(t, b.prj.ID, in.ProjectID)
	require.Nil(t, in.ResolvedAt)
	require.Equal(t, res[0].Transition.Incidents[0].Summary, in.Summary, "the incident keeps its opening summary")
	require.Equal(t, res[0].PingID, in.PingID)
	got, err := s.IncidentGet(b.ctx, b.prj.ID, in.ID)
	require.NoError(t, err)
	require.Equal(t, in, got)

	evs := b.events(t, in.ID)
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventUpdated, monitors.EventUpdated}, eventKinds(evs))
	require.Equal(t, at(2), evs[1].At)
	require.Contains(t, evs[2].Summary, "exit status 3", "an update carries its own summary")
	for _, e := range evs {
		require.Equal(t, in.ID, e.IncidentID)
		require.Equal(t, m.ID, e.MonitorID)
		require.Equal(t, b.prj.ID, e.ProjectID)
	}
	require.Equal(t, monitors.StatusDown, b.get(t, m).State.Status)

	res = MustRecord(t, s, Ping(m, monitors.PingSuccess, at(4)))
	require.Equal(t, monitors.IncidentResolve, res[0].Transition.Incidents[0].Op)
	in2, err := s.IncidentGet(b.ctx, b.prj.ID, in.ID)
	require.NoError(t, err)
	require.Equal(t, at(4), *in2.ResolvedAt)
	require.NotEmpty(t, in2.ResolveSummary)
	require.Equal(t, monitors.EventResolved, b.events(t, in.ID)[3].Kind)
	require.Equal(t, monitors.StatusUp, b.get(t, m).State.Status)
}

func testPingCleansText(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)
	MustRecord(t, b.s, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingLog, At: T0,
		Body: "a\x00b\xffc", UserAgent: "ua\x00", RID: "r\xfe"}})
	p := b.pings(t, m)[0]
	require.Equal(t, "a\uFFFDb\uFFFDc", p.Body, "NUL and invalid UTF-8 are replaced, never a failed batch")
	require.Equal(t, "ua\uFFFD", p.UserAgent)
	require.Equal(t, "r\uFFFD", p.RID)
}

func testPingConcurrent(t *testing.T, b *bundle) {
	const (
		workers  = 4
		batches  = 10
		perBatch = 20
		nMon     = 10
	)
	ms := make([]*monitors.Monitor, nMon)
	for i := range ms {
		ms[i] = b.monitor(t, fmt.Sprintf("job-%d", i), nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*batches)
	for w := range workers {
		wg.Go(func() {
			for k := range batches {
				var pings []*monitors.PingRecordParams
				for j := range perBatch {
					// Each worker visits the monitors in its own order, so
					// batches lock overlapping sets in different orders.
					m := ms[(j*(w+1)+k)%nMon]
					pings = append(pings, Ping(m, monitors.PingSuccess, T0))
				}
				res, err := b.s.PingRecordBatch(b.ctx, &monitors.PingRecordBatchParams{Pings: pings})
				if err == nil {
					for _, r := range res {
						err = errors.Join(err, r.Err)
					}
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	total := 0
	for _, m := range ms {
		n := len(b.pings(t, m))
		total += n
		// Every success is a run numbered from the monitor's state: a lost
		// update would reuse a number and lose a run.
		require.Len(t, b.runs(t, m), n, "monitor %s", m.Slug)
		require.Equal(t, int64(n), b.get(t, m).State.RunSeq)
	}
	require.Equal(t, workers*batches*perBatch, total)
}

func testPingConcurrentCreate(t *testing.T, b *bundle) {
	const workers = 6
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		results []monitors.PingRecordResult
		errs    []error
	)
	for range workers {
		wg.Go(func() {
			res, err := b.s.PingRecordBatch(b.ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
				{ProjectPingKey: b.prj.PingKey, Slug: "shared", Create: true, NewMonitor: NewMonitor("", "shared", nil),
					Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
			}})
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, err)
			results = append(results, res...)
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	created := 0
	for _, r := range results {
		require.NoError(t, r.Err)
		require.Equal(t, results[0].MonitorID, r.MonitorID)
		if r.Created {
			created++
		}
	}
	require.Equal(t, 1, created, "one ping created the monitor, the others found it")
	m, err := b.s.MonitorGetBySlug(b.ctx, b.prj.ID, "shared")
	require.NoError(t, err)
	require.Len(t, b.pings(t, m), workers)
}

func testPingDurable(t *testing.T, b *bundle, reopen func(t *testing.T, s monitors.Store) monitors.Store) {
	m := b.monitor(t, "job", nil)
	res := MustRecord(t, b.s, Ping(m, monitors.PingStart, T0), Ping(m, monitors.PingFail, T0.Add(time.Minute)))
	want := b.get(t, m)

	// Another store on the same database, while the first is still open,
	// reads what the first committed.
	s2 := reopen(t, b.s)
	check := func() {
		t.Helper()
		got, err := s2.MonitorGet(b.ctx, b.prj.ID, m.ID)
		require.NoError(t, err)
		require.Equal(t, want, got)
		pings, err := s2.PingList(b.ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID})
		require.NoError(t, err)
		require.Len(t, pings, 2)
		require.Equal(t, res[1].PingID, pings[0].ID)
		ins, err := s2.IncidentList(b.ctx, &monitors.IncidentListParams{ProjectID: b.prj.ID})
		require.NoError(t, err)
		require.Len(t, ins, 1)
	}
	check()
	require.NoError(t, b.s.Close())
	check()
	// And it goes on from there.
	MustRecord(t, s2, Ping(m, monitors.PingSuccess, T0.Add(2*time.Minute)))
}

func testHistoryPaging(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	var pings []*monitors.PingRecordParams
	for i := range 5 {
		pings = append(pings, Ping(m, monitors.PingSuccess, T0.Add(time.Duration(i)*time.Minute)))
	}
	res := MustRecord(t, s, pings...)
	ids := func(ps []*monitors.Ping) []int64 {
		out := make([]int64, len(ps))
		for i, p := range ps {
			out[i] = p.ID
		}
		return out
	}
	page, err := s.PingList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []int64{res[4].PingID, res[3].PingID}, ids(page))
	page, err = s.PingList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID, Limit: 2, Before: page[1].ID})
	require.NoError(t, err)
	require.Equal(t, []int64{res[2].PingID, res[1].PingID}, ids(page))
	page, err = s.PingList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID, Before: page[1].ID})
	require.NoError(t, err)
	require.Equal(t, []int64{res[0].PingID}, ids(page))

	runs, err := s.RunList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID, Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []int64{5, 4, 3}, []int64{runs[0].Seq, runs[1].Seq, runs[2].Seq})
	runs, err = s.RunList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: m.ID, Before: 3})
	require.NoError(t, err)
	require.Len(t, runs, 2)
	require.Equal(t, []int64{2, 1}, []int64{runs[0].Seq, runs[1].Seq})

	empty := b.monitor(t, "empty", nil)
	none, err := s.PingList(ctx, &monitors.HistoryListParams{ProjectID: b.prj.ID, MonitorID: empty.ID})
	require.NoError(t, err)
	require.Empty(t, none)
}

func testEvaluateMissedOnce(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)
	other := b.monitor(t, "other", nil)
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, T0), Ping(other, monitors.PingSuccess, T0.Add(time.Hour)))
	due := T0.Add(time.Hour + 5*time.Minute)

	require.Empty(t, b.evaluate(t, due.Add(-time.Second), 10, monitors.TimeOptions{}), "not due yet")

	ev := b.evaluate(t, due, 10, monitors.TimeOptions{})
	require.Len(t, ev, 1)
	require.Equal(t, m.ID, ev[0].MonitorID)
	require.Equal(t, due, ev[0].DueAt)
	require.Len(t, ev[0].Transition.Incidents, 1)
	require.Equal(t, monitors.IncidentOpen, ev[0].Transition.Incidents[0].Op)
	got := b.get(t, m)
	require.Equal(t, monitors.StatusDown, got.State.Status)
	require.Nil(t, got.NextDeadlineAt, "nothing more is due until a ping comes")

	for _, now := range []time.Time{due, due.Add(time.Minute), due.Add(time.Hour)} {
		for _, e := range b.evaluate(t, now, 10, monitors.TimeOptions{}) {
			require.NotEqual(t, m.ID, e.MonitorID, "evaluated once")
		}
	}
	ins := b.incidents(t, monitors.IncidentListParams{MonitorID: m.ID})
	require.Len(t, ins, 1, "one missed incident")
	require.Equal(t, monitors.IncidentMissed, ins[0].Kind)
	require.Equal(t, due, ins[0].OpenedAt)
	require.Zero(t, ins[0].PingID, "time opened it")
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened}, eventKinds(b.events(t, ins[0].ID)))

	// A ping resolves it, once.
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, due.Add(2*time.Hour)), Ping(m, monitors.PingSuccess, due.Add(3*time.Hour)))
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventResolved}, eventKinds(b.events(t, ins[0].ID)))
}

func testEvaluateLimit(t *testing.T, b *bundle) {
	var ms []*monitors.Monitor
	var pings []*monitors.PingRecordParams
	for i := range 5 {
		m := b.monitor(t, fmt.Sprintf("job-%d", 4-i), nil)
		ms = append(ms, m)
		pings = append(pings, Ping(m, monitors.PingSuccess, T0.Add(time.Duration(i)*time.Minute)))
	}
	MustRecord(t, b.s, pings...)
	now := T0.Add(2 * time.Hour)
	var order []string
	for _, want := range []int{2, 2, 1, 0} {
		ev := b.evaluate(t, now, 2, monitors.TimeOptions{})
		require.Len(t, ev, want)
		for _, e := range ev {
			order = append(order, e.MonitorID)
		}
	}
	want := make([]string, len(ms))
	for i, m := range ms {
		want[i] = m.ID
	}
	require.Equal(t, want, order, "earliest deadline first")

	_, err := b.s.MonitorEvaluateDue(b.ctx, &monitors.EvaluateDueParams{Now: now})
	require.Error(t, err, "a limit is required")
}

func testEvaluateIgnores(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	paused := b.monitor(t, "paused", nil)
	later := b.monitor(t, "later", nil)
	fresh := b.monitor(t, "fresh", nil) // never pinged: nothing is expected of it
	MustRecord(t, s, Ping(paused, monitors.PingSuccess, T0), Ping(later, monitors.PingSuccess, T0.Add(3*time.Hour)))
	_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: paused.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		return monitors.Pause(m, T0.Add(time.Minute))
	}})
	require.NoError(t, err)

	require.Empty(t, b.evaluate(t, T0.Add(3*time.Hour), 10, monitors.TimeOptions{}))
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{}))
	require.Equal(t, monitors.StatusNew, b.get(t, fresh).State.Status)
	require.Equal(t, monitors.StatusPaused, b.get(t, paused).State.Status)

	// A monitor paused by hand, its state left as it was, is not claimed
	// either.
	_, err = s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: later.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		m.Paused = true
		return nil, nil
	}})
	require.NoError(t, err)
	require.Empty(t, b.evaluate(t, T0.Add(10*time.Hour), 10, monitors.TimeOptions{}))
}

func testEvaluateOutage(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)
	MustRecord(t, b.s, Ping(m, monitors.PingSuccess, T0))
	// Vigil was down from T0+50m to just after T0+2h: the deadline
	// (T0+1h5m) fell in the gap, so the monitor gets a fresh grace window
	// from the end of the outage.
	end := T0.Add(2*time.Hour + 500*time.Nanosecond)
	opts := monitors.TimeOptions{OutageStart: T0.Add(50 * time.Minute), OutageEnd: end}
	ev := b.evaluate(t, end, 10, opts)
	require.Len(t, ev, 1)
	require.Empty(t, ev[0].Transition.Incidents)
	got := b.get(t, m)
	require.NotNil(t, got.State.Hold)
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{}))

	// The deadline, end + grace, is stored rounded up to the microsecond:
	// never early, so evaluating at the stored deadline finds it due.
	next, err := b.s.MonitorNextDeadline(b.ctx)
	require.NoError(t, err)
	require.Equal(t, ptr(T0.Add(2*time.Hour+5*time.Minute+time.Microsecond)), next)
	require.Equal(t, next, got.NextDeadlineAt)

	require.Empty(t, b.evaluate(t, T0.Add(2*time.Hour+5*time.Minute), 10, monitors.TimeOptions{}))
	ev = b.evaluate(t, *next, 10, monitors.TimeOptions{})
	require.Len(t, ev, 1)
	require.Len(t, ev[0].Transition.Incidents, 1)
	require.Len(t, b.incidents(t, monitors.IncidentListParams{}), 1, "missed once the fresh grace ran out")
}

func testIncidentOneOpenPerKind(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	apply := func(changes ...monitors.IncidentChange) {
		t.Helper()
		_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(*monitors.Monitor) (*monitors.Transition, error) {
			return &monitors.Transition{Incidents: changes}, nil
		}})
		require.NoError(t, err, "a second open is a no-op, never an error")
	}
	open := func(summary string) monitors.IncidentChange {
		return monitors.IncidentChange{Op: monitors.IncidentOpen, Kind: monitors.IncidentMissed, At: T0, Summary: summary}
	}
	resolve := monitors.IncidentChange{Op: monitors.IncidentResolve, Kind: monitors.IncidentMissed, At: T0.Add(time.Hour), Summary: "back"}

	// Two opens of one kind in one transition, then another in a second:
	// the database keeps one open incident, opened once.
	apply(open("first"), open("second"))
	apply(open("third"))
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1)
	require.Equal(t, "first", ins[0].Summary)
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened}, eventKinds(b.events(t, ins[0].ID)))

	// Another kind is another incident.
	apply(monitors.IncidentChange{Op: monitors.IncidentOpen, Kind: monitors.IncidentStuck, At: T0, Summary: "stuck"})
	require.Len(t, b.incidents(t, monitors.IncidentListParams{OpenOnly: true}), 2)

	// Resolving twice records one resolution.
	apply(resolve, resolve)
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventResolved}, eventKinds(b.events(t, ins[0].ID)))
	first, err := s.IncidentGet(ctx, b.prj.ID, ins[0].ID)
	require.NoError(t, err)
	require.Equal(t, "back", first.ResolveSummary)

	// After a resolution, the kind may open again: a new incident.
	apply(open("again"))
	missed := b.incidents(t, monitors.IncidentListParams{OpenOnly: true})
	require.Len(t, missed, 2)
	all := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, all, 3)

	// An update or a resolution with nothing open writes nothing.
	apply(monitors.IncidentChange{Op: monitors.IncidentUpdate, Kind: monitors.IncidentDeadline, At: T0, Summary: "x"},
		monitors.IncidentChange{Op: monitors.IncidentResolve, Kind: monitors.IncidentDeadline, At: T0, Summary: "x"})
	require.Len(t, b.events(t, ""), 4)
}

func testIncidentList(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m1 := b.monitor(t, "one", nil)
	m2 := b.monitor(t, "two", nil)
	MustRecord(t, s, Ping(m1, monitors.PingFail, T0), Ping(m1, monitors.PingSuccess, T0.Add(time.Hour)))
	MustRecord(t, s, Ping(m2, monitors.PingFail, T0.Add(2*time.Hour)))
	all := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, all, 2)
	require.Equal(t, m2.ID, all[0].MonitorID, "newest first")
	require.Equal(t, m1.ID, all[1].MonitorID)

	require.Equal(t, []*monitors.Incident{all[0]}, b.incidents(t, monitors.IncidentListParams{OpenOnly: true}))
	require.Equal(t, []*monitors.Incident{all[1]}, b.incidents(t, monitors.IncidentListParams{MonitorID: m1.ID}))
	require.Equal(t, []*monitors.Incident{all[0]}, b.incidents(t, monitors.IncidentListParams{Since: ptr(T0.Add(90 * time.Minute))}))
	require.Equal(t, all, b.incidents(t, monitors.IncidentListParams{Since: ptr(T0.Add(time.Hour))}), "resolved at Since: still listed")
	require.Equal(t, []*monitors.Incident{all[1]}, b.incidents(t, monitors.IncidentListParams{Limit: 1, Offset: 1}))
	require.Equal(t, []*monitors.Incident{all[0]}, b.incidents(t, monitors.IncidentListParams{Limit: 1}))

	_, err := s.IncidentGet(ctx, b.prj.ID, "missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testIncidentEvents(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	MustRecord(t, s, Ping(m, monitors.PingFail, T0), Ping(m, monitors.PingSuccess, T0.Add(time.Minute)), Ping(m, monitors.PingFail, T0.Add(2*time.Minute)))
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 2)
	all := b.events(t, "")
	require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventResolved, monitors.EventOpened}, eventKinds(all))
	require.Equal(t, ins[1].ID, all[0].IncidentID, "oldest first")
	require.Equal(t, ins[0].ID, all[2].IncidentID)
	require.Equal(t, []time.Time{T0, T0.Add(time.Minute), T0.Add(2 * time.Minute)}, []time.Time{all[0].At, all[1].At, all[2].At})
	require.Equal(t, ins[1].Summary, all[0].Summary)
	require.Less(t, all[0].ID, all[1].ID)

	limited, err := s.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: b.prj.ID, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, all[:2], limited)
	one := b.events(t, ins[0].ID)
	require.Equal(t, all[2:], one)
	_, err = s.IncidentEventList(ctx, &monitors.IncidentEventListParams{ProjectID: b.prj.ID, IncidentID: "missing"})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testNextDeadline(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	next := func() *time.Time {
		t.Helper()
		d, err := s.MonitorNextDeadline(ctx)
		require.NoError(t, err)
		return d
	}
	require.Nil(t, next(), "no monitors")
	a := b.monitor(t, "a", nil)
	require.Nil(t, next(), "a new monitor has no deadline")
	MustRecord(t, s, Ping(a, monitors.PingSuccess, T0))
	require.Equal(t, ptr(T0.Add(time.Hour+5*time.Minute)), next())

	c := b.monitor(t, "c", nil)
	MustRecord(t, s, Ping(c, monitors.PingStart, T0.Add(10*time.Minute)))
	require.Equal(t, ptr(T0.Add(15*time.Minute)), next(), "the open run's max runtime is earlier")

	_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: c.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
		return monitors.Pause(m, T0.Add(11*time.Minute))
	}})
	require.NoError(t, err)
	require.Equal(t, ptr(T0.Add(time.Hour+5*time.Minute)), next(), "paused monitors do not count")
}

func testPingPrune(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	small := b.monitor(t, "small", nil)
	var pings []*monitors.PingRecordParams
	for i := range 10 {
		pings = append(pings, Ping(m, monitors.PingSuccess, T0.Add(time.Duration(i)*time.Minute)))
	}
	res := MustRecord(t, s, append(pings, Ping(small, monitors.PingSuccess, T0), Ping(small, monitors.PingLog, T0))...)

	n, err := s.PingPrune(ctx, &monitors.PingPruneParams{})
	require.NoError(t, err)
	require.Zero(t, n, "zero keeps everything")

	n, err = s.PingPrune(ctx, &monitors.PingPruneParams{KeepPings: 3, KeepRuns: 4})
	require.NoError(t, err)
	require.Equal(t, int64(7+6), n)
	kept := b.pings(t, m)
	require.Len(t, kept, 3)
	require.Equal(t, []int64{res[9].PingID, res[8].PingID, res[7].PingID}, []int64{kept[0].ID, kept[1].ID, kept[2].ID}, "the newest are kept")
	runs := b.runs(t, m)
	require.Len(t, runs, 4)
	require.Equal(t, int64(10), runs[0].Seq)
	require.Equal(t, int64(7), runs[3].Seq)
	require.Len(t, b.pings(t, small), 2)

	n, err = s.PingPrune(ctx, &monitors.PingPruneParams{KeepPings: 3, KeepRuns: 4})
	require.NoError(t, err)
	require.Zero(t, n)

	n, err = s.PingPrune(ctx, &monitors.PingPruneParams{KeepRuns: 1})
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "runs alone")
	require.Len(t, b.pings(t, m), 3)
	require.Len(t, b.runs(t, m), 1)
}

func testEvaluateConcurrent(t *testing.T, b *bundle) {
	const (
		nMon    = 1000
		workers = 4
		limit   = 20
	)
	for start := 0; start < nMon; start += 500 {
		var pings []*monitors.PingRecordParams
		for i := start; i < start+500 && i < nMon; i++ {
			slug := fmt.Sprintf("job-%04d", i)
			pings = append(pings, &monitors.PingRecordParams{ProjectPingKey: b.prj.PingKey, Slug: slug, Create: true,
				NewMonitor: NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}})
		}
		MustRecord(t, b.s, pings...)
	}
	now := T0.Add(2 * time.Hour)
	var (
		mu    sync.Mutex
		count = make(map[string]int)
		errs  []error
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				res, err := b.s.MonitorEvaluateDue(b.ctx, &monitors.EvaluateDueParams{Now: now, Limit: limit})
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				for _, e := range res.Evaluated {
					count[e.MonitorID]++
				}
				mu.Unlock()
				if len(res.Evaluated) == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Empty(t, b.evaluate(t, now, limit, monitors.TimeOptions{}), "nothing left")
	require.Len(t, count, nMon)
	for id, n := range count {
		require.Equal(t, 1, n, "monitor %s evaluated once", id)
	}
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, nMon)
	per := make(map[string]int)
	for _, in := range ins {
		per[in.MonitorID]++
	}
	require.Len(t, per, nMon, "one incident each")
	require.Len(t, b.events(t, ""), nMon, "one opened event each")
}
