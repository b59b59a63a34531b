package storetest

import (
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

// runAPI runs the conformance tests of the management API's methods.
func runAPI(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"Channel/CRUD", testChannelCRUD},
		{"Channel/CrossProject", testChannelCrossProject},
		{"Channel/DeleteInUse", testChannelDeleteInUse},
		{"MonitorPatch/PersonFields", testMonitorPatch},
		{"MonitorPatch/Errors", testMonitorPatchErrors},
		{"MonitorSync/InsertUpdate", testMonitorSync},
		{"MonitorSync/FnErrorWritesNothing", testMonitorSyncFnError},
		{"MonitorSync/Concurrent", testMonitorSyncConcurrent},
		{"MonitorCountByStatus", testMonitorCountByStatus},
		{"IncidentCountByKind", testIncidentCountByKind},
		{"ProjectBadgeKey", testProjectBadgeKey},
		{"PingCountByMonitor", testPingCountByMonitor},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
}

func mustChannel(t *testing.T, b *bundle, projectID, name string, isDefault bool) *monitors.Channel {
	t.Helper()
	c, err := b.s.ChannelCreate(b.ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: projectID,
		Kind: "webhook", Name: name, Config: json.RawMessage(`{"url":"https://example.com/hook","secret":"s3cret"}`),
		IsDefault: isDefault, Now: T0})
	require.NoError(t, err)
	return c
}

func testChannelCRUD(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	c, err := s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: "ch_1", ProjectID: b.prj.ID, Kind: "webhook",
		Name: "ops hook", Config: json.RawMessage(`{"url": "https://example.com/hook", "secret": "s3cret"}`), IsDefault: true, Now: T0})
	require.NoError(t, err)
	require.Equal(t, "ch_1", c.ID)
	require.Equal(t, b.prj.ID, c.ProjectID)
	require.Equal(t, "webhook", c.Kind)
	require.Equal(t, "ops hook", c.Name)
	require.True(t, c.IsDefault)
	require.False(t, c.NotifyLate)
	require.Zero(t, c.GroupSeconds, "the store takes no group seconds as 0")
	require.Equal(t, T0, c.CreatedAt)
	require.Equal(t, T0, c.UpdatedAt)
	require.JSONEq(t, `{"url": "https://example.com/hook", "secret": "s3cret"}`, string(c.Config), "secrets are stored")

	got, err := s.ChannelGet(ctx, b.prj.ID, "ch_1")
	require.NoError(t, err)
	require.Equal(t, c, got)

	_, err = s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: "ch_2", ProjectID: b.prj.ID, Kind: "email",
		Name: "ops hook", Config: json.RawMessage(`{"to":["a@example.com"]}`), Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict, "a name is unique in its project")
	_, err = s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: "ch_3", ProjectID: "prj_missing", Kind: "email",
		Name: "x", Config: json.RawMessage(`{}`), Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound, "unknown project")
	group := 30
	lateSlack, err := s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: b.prj.ID, Kind: "slack",
		Name: "z late", Config: json.RawMessage(`{"webhook_url":"https://hooks.slack.com/services/T/B/x"}`), NotifyLate: true,
		GroupSeconds: &group, Now: T0})
	require.NoError(t, err)
	require.True(t, lateSlack.NotifyLate)
	require.Equal(t, 30, lateSlack.GroupSeconds)
	require.NoError(t, s.ChannelDelete(ctx, b.prj.ID, lateSlack.ID))

	a := mustChannel(t, b, b.prj.ID, "a first", false)
	list, err := s.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.prj.ID})
	require.NoError(t, err)
	require.Equal(t, []*monitors.Channel{a, c}, list, "by name")
	list, err = s.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.prj.ID, Limit: 1, Offset: 1})
	require.NoError(t, err)
	require.Equal(t, []*monitors.Channel{c}, list)

	later := T0.Add(time.Hour)
	mod, err := s.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: b.prj.ID, ID: "ch_1", Fn: func(ch *monitors.Channel) error {
		ch.Name, ch.IsDefault, ch.UpdatedAt = "renamed", false, later
		ch.NotifyLate, ch.GroupSeconds = true, 45
		ch.Config = json.RawMessage(`{"url":"https://example.com/other","secret":"s3cret"}`)
		return nil
	}})
	require.NoError(t, err)
	require.Equal(t, "renamed", mod.Name)
	require.False(t, mod.IsDefault)
	require.True(t, mod.NotifyLate)
	require.Equal(t, 45, mod.GroupSeconds)
	require.Equal(t, later, mod.UpdatedAt)
	require.Equal(t, T0, mod.CreatedAt)
	require.JSONEq(t, `{"url":"https://example.com/other","secret":"s3cret"}`, string(mod.Config))

	boom := errors.New("boom")
	_, err = s.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: b.prj.ID, ID: "ch_1", Fn: func(ch *monitors.Channel) error {
		ch.Name = "not kept"
		return boom
	}})
	require.ErrorIs(t, err, boom)
	_, err = s.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: b.prj.ID, ID: "ch_1", Fn: func(ch *monitors.Channel) error {
		ch.Name = a.Name
		return nil
	}})
	require.ErrorIs(t, err, monitors.ErrConflict, "renaming onto another channel's name")
	got, err = s.ChannelGet(ctx, b.prj.ID, "ch_1")
	require.NoError(t, err)
	require.Equal(t, mod, got, "failed changes wrote nothing")

	require.NoError(t, s.ChannelDelete(ctx, b.prj.ID, "ch_1"))
	_, err = s.ChannelGet(ctx, b.prj.ID, "ch_1")
	require.ErrorIs(t, err, monitors.ErrNotFound)
	require.ErrorIs(t, s.ChannelDelete(ctx, b.prj.ID, "ch_1"), monitors.ErrNotFound)
}

func testChannelCrossProject(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	other := MustProject(t, s)
	c := mustChannel(t, b, other.ID, "theirs", true)
	_, err := s.ChannelGet(ctx, b.prj.ID, c.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = s.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: b.prj.ID, ID: c.ID, Fn: func(*monitors.Channel) error { return nil }})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	require.ErrorIs(t, s.ChannelDelete(ctx, b.prj.ID, c.ID), monitors.ErrNotFound)
	list, err := s.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.prj.ID})
	require.NoError(t, err)
	require.Empty(t, list)
	mine := mustChannel(t, b, b.prj.ID, "theirs", false)
	require.NotEqual(t, c.ID, mine.ID, "names are unique per project only")
}

func testChannelDeleteInUse(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	c := mustChannel(t, b, b.prj.ID, "pager", false)
	b.monitor(t, "zeta", func(m *monitors.Monitor) { m.Channels = []string{"other", c.ID} })
	b.monitor(t, "alpha", func(m *monitors.Monitor) { m.Channels = []string{c.ID} })
	b.monitor(t, "free", nil)
	other := MustProject(t, s)
	MustMonitor(t, s, other.ID, "elsewhere", func(m *monitors.Monitor) { m.Channels = []string{c.ID} })

	err := s.ChannelDelete(ctx, b.prj.ID, c.ID)
	require.ErrorIs(t, err, monitors.ErrConflict)
	var inUse *monitors.ChannelInUseError
	require.ErrorAs(t, err, &inUse)
	require.Equal(t, []string{"alpha", "zeta"}, inUse.Monitors, "only this project's monitors, by slug")
	_, err = s.ChannelGet(ctx, b.prj.ID, c.ID)
	require.NoError(t, err, "not deleted")
}

func testMonitorPatch(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	MustRecord(t, s, Ping(m, monitors.PingFail, T0))

	got, fields, err := s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: m.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			require.Empty(t, pf)
			m.GraceSeconds = 900
			m.UpdatedAt = T0.Add(time.Minute)
			return nil, []string{"grace_seconds"}, nil
		}})
	require.NoError(t, err)
	require.Equal(t, []string{"grace_seconds"}, fields)
	require.EqualValues(t, 900, got.GraceSeconds)
	require.EqualValues(t, 900, b.get(t, m).GraceSeconds)

	// The transition is written with the change: pausing resolves the
	// open failed incident.
	_, fields, err = s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: m.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			require.Equal(t, []string{"grace_seconds"}, pf)
			tr, err := monitors.Pause(m, T0.Add(2*time.Minute))
			return tr, append(pf, "paused"), err
		}})
	require.NoError(t, err)
	require.Equal(t, []string{"grace_seconds", "paused"}, fields)
	require.True(t, b.get(t, m).Paused)
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{OpenOnly: true}))
	require.Len(t, b.incidents(t, monitors.IncidentListParams{}), 1)

	other := b.monitor(t, "other", nil)
	pf, err := s.MonitorPersonFields(ctx, b.prj.ID, []string{m.ID, other.ID, "missing"})
	require.NoError(t, err)
	require.Equal(t, map[string][]string{m.ID: {"grace_seconds", "paused"}}, pf)
	pf, err = s.MonitorPersonFields(ctx, "prj_other", []string{m.ID})
	require.NoError(t, err)
	require.Empty(t, pf, "another project sees none")

	_, fields, err = s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: m.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) { return nil, nil, nil }})
	require.NoError(t, err)
	require.Equal(t, []string{}, fields, "cleared")
	pf, err = s.MonitorPersonFields(ctx, b.prj.ID, []string{m.ID})
	require.NoError(t, err)
	require.Empty(t, pf)
}

func testMonitorPatchErrors(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "job", nil)
	boom := errors.New("boom")
	_, _, err := s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: m.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			m.GraceSeconds = 1
			return nil, []string{"grace_seconds"}, boom
		}})
	require.ErrorIs(t, err, boom)
	require.EqualValues(t, 300, b.get(t, m).GraceSeconds, "nothing written")
	pf, err := s.MonitorPersonFields(ctx, b.prj.ID, []string{m.ID})
	require.NoError(t, err)
	require.Empty(t, pf)

	other := MustProject(t, s)
	_, _, err = s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: other.ID, ID: m.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) { return nil, nil, nil }})
	require.ErrorIs(t, err, monitors.ErrNotFound)

	taken := b.monitor(t, "taken", nil)
	_, _, err = s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: m.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			m.Slug = taken.Slug
			return nil, nil, nil
		}})
	require.ErrorIs(t, err, monitors.ErrConflict)
}

// syncFn returns a MonitorSyncParams.Fn that creates the slugs the source
// lacks and marks its other monitors as no longer discovered.
func syncFn(projectID, source string, slugs []string, now time.Time, skipForeign bool) func([]*monitors.Monitor, map[string][]string) (*monitors.MonitorSyncPlan, error) {
	return func(current []*monitors.Monitor, _ map[string][]string) (*monitors.MonitorSyncPlan, error) {
		plan := &monitors.MonitorSyncPlan{}
		have := map[string]*monitors.Monitor{}
		for _, m := range current {
			have[m.Slug] = m
		}
		want := map[string]bool{}
		for _, slug := range slugs {
			want[slug] = true
			if m, ok := have[slug]; ok {
				if m.Source != source && !skipForeign {
					return nil, fmt.Errorf("slug %q: %w", slug, monitors.ErrConflict)
				}
				continue
			}
			plan.Insert = append(plan.Insert, NewMonitor(projectID, slug, func(m *monitors.Monitor) {
				m.Source, m.Discovered, m.CreatedAt, m.UpdatedAt = source, true, now, now
			}))
		}
		for _, m := range current {
			if m.Source == source && !want[m.Slug] && m.Discovered {
				m.Discovered, m.UpdatedAt = false, now
				tr, err := monitors.Pause(m, now)
				if err != nil {
					return nil, err
				}
				plan.Update = append(plan.Update, monitors.MonitorSyncUpdate{Monitor: m, Transition: tr})
			}
		}
		return plan, nil
	}
}

func testMonitorSync(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	person := b.monitor(t, "by-hand", nil)
	other := b.monitor(t, "other-source", func(m *monitors.Monitor) { m.Source, m.Discovered = "cron-box", true })
	_, _, err := s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: other.ID,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			return nil, []string{"tags"}, nil
		}})
	require.NoError(t, err)

	var seen []string
	var seenFields map[string][]string
	err = s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "billing",
		Slugs: []string{"invoices", "by-hand", "other-source"},
		Fn: func(current []*monitors.Monitor, pf map[string][]string) (*monitors.MonitorSyncPlan, error) {
			seen, seenFields = slugs(current), pf
			return nil, nil
		}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"by-hand", "other-source"}, seen, "monitors with a declared slug, whatever their source")
	require.Equal(t, map[string][]string{other.ID: {"tags"}}, seenFields)

	err = s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "billing",
		Slugs: []string{"invoices", "reports"}, Fn: syncFn(b.prj.ID, "billing", []string{"invoices", "reports"}, T0, false)})
	require.NoError(t, err)
	list, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Source: "billing"})
	require.NoError(t, err)
	require.Equal(t, []string{"invoices", "reports"}, slugs(list))
	MustRecord(t, s, Ping(list[1], monitors.PingFail, T0.Add(time.Minute)))

	// Dropping "reports": the sync sees the source's monitors even when
	// their slugs are not declared, and pauses it with its incident.
	err = s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "billing",
		Slugs: []string{"invoices"}, Fn: syncFn(b.prj.ID, "billing", []string{"invoices"}, T0.Add(time.Hour), false)})
	require.NoError(t, err)
	reports := b.get(t, list[1])
	require.False(t, reports.Discovered)
	require.True(t, reports.Paused)
	require.Equal(t, T0.Add(time.Hour), reports.UpdatedAt)
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{OpenOnly: true}), "the pause resolved it")
	require.Len(t, b.pings(t, reports), 1, "history kept")
	require.Equal(t, T0, b.get(t, list[0]).UpdatedAt, "unchanged monitors are not written")
	require.Equal(t, person.UpdatedAt, b.get(t, person).UpdatedAt)

	err = s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "billing",
		Slugs: []string{"by-hand"}, Fn: syncFn(b.prj.ID, "billing", []string{"by-hand"}, T0, false)})
	require.ErrorIs(t, err, monitors.ErrConflict, "an error from Fn is returned")
}

func testMonitorSyncFnError(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	boom := errors.New("boom")
	err := s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "billing", Slugs: []string{"a"},
		Fn: func([]*monitors.Monitor, map[string][]string) (*monitors.MonitorSyncPlan, error) { return nil, boom }})
	require.ErrorIs(t, err, boom)

	// An insert that fails (a ping key in use) fails the whole plan.
	taken := b.monitor(t, "taken", nil)
	err = s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "billing", Slugs: []string{"a", "b"},
		Fn: func([]*monitors.Monitor, map[string][]string) (*monitors.MonitorSyncPlan, error) {
			return &monitors.MonitorSyncPlan{Insert: []*monitors.Monitor{
				NewMonitor(b.prj.ID, "a", func(m *monitors.Monitor) { m.Source = "billing" }),
				NewMonitor(b.prj.ID, "b", func(m *monitors.Monitor) { m.Source, m.PingKey = "billing", taken.PingKey }),
			}}, nil
		}})
	require.ErrorIs(t, err, monitors.ErrConflict)
	list, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Source: "billing"})
	require.NoError(t, err)
	require.Empty(t, list, "nothing half written")
}

// testMonitorSyncConcurrent declares one source from many goroutines at
// once, as replicas of one application do at start-up, while a person
// creates one of the new slugs: each slug is created once, and no call
// fails (a sync that loses the race for a slug starts over and sees the
// winner). Each round adds slugs, released to every caller at once.
func testMonitorSyncConcurrent(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	const (
		callers = 4
		rounds  = 8
	)
	var declared []string
	for round := range rounds {
		a, p := fmt.Sprintf("a%d", round), fmt.Sprintf("p%d", round)
		declared = append(declared, a, p)
		slugsNow := slices.Clone(declared)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				<-start
				errs[i] = s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "app", Slugs: slugsNow,
					Fn: syncFn(b.prj.ID, "app", slugsNow, T0, true)})
			})
		}
		wg.Go(func() {
			<-start
			err := s.MonitorInsert(ctx, NewMonitor(b.prj.ID, p, nil))
			if err != nil && !errors.Is(err, monitors.ErrConflict) {
				t.Errorf("person's insert: %v", err)
			}
		})
		close(start)
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, caller %d", round, i)
		}
		list, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID})
		require.NoError(t, err)
		got := slugs(list)
		slices.Sort(got)
		want := slices.Clone(declared)
		slices.Sort(want)
		require.Equal(t, want, got, "one monitor per slug")
	}
}

func testMonitorCountByStatus(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	counts, err := s.MonitorCountByStatus(ctx, T0)
	require.NoError(t, err)
	require.Empty(t, counts)

	b.monitor(t, "new", nil)
	up := b.monitor(t, "up", nil)
	late := b.monitor(t, "late", nil)
	down := b.monitor(t, "down", nil)
	b.monitor(t, "paused", func(m *monitors.Monitor) { m.Paused = true })
	MustRecord(t, s, Ping(up, monitors.PingSuccess, T0.Add(30*time.Minute)), Ping(late, monitors.PingSuccess, T0),
		Ping(down, monitors.PingFail, T0))
	other := MustProject(t, s)
	MustMonitor(t, s, other.ID, "elsewhere", nil)

	counts, err = s.MonitorCountByStatus(ctx, T0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, map[monitors.Status]int64{monitors.StatusNew: 2, monitors.StatusUp: 1, monitors.StatusLate: 1,
		monitors.StatusDown: 1, monitors.StatusPaused: 1}, counts, "every project; late derived at now")
}

func testIncidentCountByKind(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	counts, err := s.IncidentCountByKind(ctx)
	require.NoError(t, err)
	require.Empty(t, counts)
	m1 := b.monitor(t, "one", nil)
	m2 := b.monitor(t, "two", nil)
	MustRecord(t, s, Ping(m1, monitors.PingFail, T0), Ping(m1, monitors.PingSuccess, T0.Add(time.Minute)),
		Ping(m1, monitors.PingFail, T0.Add(2*time.Minute)), Ping(m2, monitors.PingStart, T0), Ping(m2, monitors.PingStart, T0.Add(time.Second)))
	counts, err = s.IncidentCountByKind(ctx)
	require.NoError(t, err)
	require.Equal(t, []monitors.IncidentCount{
		{Kind: monitors.IncidentFailed, Opened: 2, Open: 1},
		{Kind: monitors.IncidentOverlap, Opened: 1, Open: 1},
	}, counts)
}

func testProjectBadgeKey(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	k1, err := s.ProjectBadgeKey(ctx, b.prj.ID)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(k1), 32)
	again, err := s.ProjectBadgeKey(ctx, b.prj.ID)
	require.NoError(t, err)
	require.Equal(t, k1, again, "made once")
	other := MustProject(t, s)
	k2, err := s.ProjectBadgeKey(ctx, other.ID)
	require.NoError(t, err)
	require.NotEqual(t, k1, k2)
	_, err = s.ProjectBadgeKey(ctx, "prj_missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testPingCountByMonitor(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	m := b.monitor(t, "counted", nil)
	quiet := b.monitor(t, "quiet", nil)
	for i, kind := range []monitors.PingKind{monitors.PingStart, monitors.PingSuccess, monitors.PingLog} {
		res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
			{PingKey: m.PingKey, Ping: monitors.Ping{Kind: kind, At: T0.Add(time.Duration(i) * time.Second)}}}})
		require.NoError(t, err)
		require.NoError(t, res[0].Err)
	}
	n, err := s.PingCountByMonitor(ctx, b.prj.ID, []string{m.ID, quiet.ID, "missing"})
	require.NoError(t, err)
	require.Equal(t, map[string]int64{m.ID: 3}, n)
	n, err = s.PingCountByMonitor(ctx, "prj_other", []string{m.ID})
	require.NoError(t, err)
	require.Empty(t, n, "another project counts none")
}
