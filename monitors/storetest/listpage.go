package storetest

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runListPage runs the conformance tests of the monitor list's page, its
// counts and its change marker.
func runListPage(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"MonitorListPage/StatusAgreesWithGo", testListPageStatus},
		{"MonitorListPage/Filters", testListPageFilters},
		{"MonitorListPage/Paging", testListPagePaging},
		{"MonitorListPage/Known", testListPageKnown},
		{"MonitorListMarker/Changes", testListMarkerChanges},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
}

func (b *bundle) listPage(t *testing.T, p monitors.MonitorPageParams) *monitors.MonitorPage {
	t.Helper()
	p.ProjectID = b.prj.ID
	page, err := b.s.MonitorListPage(b.ctx, &p)
	require.NoError(t, err)
	require.Len(t, page.Versions, len(page.Monitors))
	return page
}

func ids(ms []*monitors.Monitor) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// testListPageStatus stores a monitor in every state, and at instants
// before, at and after their expected times requires the page's counts,
// filters, order and LateAt to be what Monitor.StatusAt and
// monitors.ListRank give in Go: the SQL (StatusAtSQL, ListRankSQL) and
// the Go rule agree.
func testListPageStatus(t *testing.T, b *bundle) {
	at := T0.Add(time.Hour)
	states := []struct {
		slug  string
		state monitors.State
	}{
		{"a-new", monitors.State{Status: monitors.StatusNew}},
		{"b-up-waiting", monitors.State{Status: monitors.StatusUp, LastPingAt: T0, Expected: at.Add(time.Minute)}},
		{"c-up-due-now", monitors.State{Status: monitors.StatusUp, LastPingAt: T0, Expected: at}},
		{"d-up-overdue", monitors.State{Status: monitors.StatusUp, LastPingAt: T0, Expected: at.Add(-time.Second)}},
		{"e-up-nothing-expected", monitors.State{Status: monitors.StatusUp, LastPingAt: T0}},
		{"f-running", monitors.State{Status: monitors.StatusRunning, LastPingAt: T0, Expected: at.Add(-time.Hour)}},
		{"g-retrying", monitors.State{Status: monitors.StatusRetrying, LastPingAt: T0, Expected: at.Add(-time.Hour)}},
		{"h-down", monitors.State{Status: monitors.StatusDown, LastPingAt: T0, Expected: at.Add(-time.Hour),
			Open: map[monitors.IncidentKind]time.Time{monitors.IncidentMissed: T0}}},
		{"i-paused", monitors.State{Status: monitors.StatusPaused, LastPingAt: T0}},
		{"j-undeclared", monitors.State{Status: monitors.StatusUndeclared, Undeclared: true}},
		{"k-up-later", monitors.State{Status: monitors.StatusUp, LastPingAt: T0, Expected: at.Add(time.Hour)}},
	}
	var all []*monitors.Monitor
	for _, st := range states {
		all = append(all, b.monitor(t, st.slug, func(m *monitors.Monitor) {
			m.State = st.state
			m.Paused = st.state.Status == monitors.StatusPaused
		}))
	}
	for _, now := range []time.Time{T0, at.Add(-time.Second), at.Add(-time.Microsecond), at, at.Add(time.Microsecond),
		at.Add(time.Minute), at.Add(2 * time.Hour)} {
		// What Go says.
		counts := map[monitors.Status]int{}
		byStatus := map[monitors.Status][]string{}
		var lateAt time.Time
		order := slices.Clone(all)
		slices.SortStableFunc(order, func(x, y *monitors.Monitor) int {
			return cmp.Or(cmp.Compare(monitors.ListRank(x.StatusAt(now)), monitors.ListRank(y.StatusAt(now))),
				cmp.Compare(x.Name, y.Name))
		})
		for _, m := range order {
			st := m.StatusAt(now)
			counts[st]++
			byStatus[st] = append(byStatus[st], m.ID)
			if m.State.Status == monitors.StatusUp && m.State.Expected.After(now) &&
				(lateAt.IsZero() || m.State.Expected.Before(lateAt)) {
				lateAt = m.State.Expected
			}
		}
		page := b.listPage(t, monitors.MonitorPageParams{Now: now})
		require.Equal(t, counts, page.Counts, "counts at %s", now)
		require.Equal(t, len(all), page.Total)
		require.Equal(t, len(all), page.Matched)
		require.Equal(t, ids(order), ids(page.Monitors), "order at %s", now)
		require.True(t, lateAt.Equal(page.LateAt), "LateAt at %s: want %s, got %s", now, lateAt, page.LateAt)
		for _, st := range monitors.ListOrder {
			page := b.listPage(t, monitors.MonitorPageParams{Now: now, Status: st})
			require.Equal(t, byStatus[st], nilIfEmpty(ids(page.Monitors)), "status %s at %s", st, now)
			require.Equal(t, len(byStatus[st]), page.Matched, "status %s at %s", st, now)
			require.Equal(t, counts, page.Counts, "counts are not filtered")
		}
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// testListPageFilters: the tag filter is exact, the text filter finds a
// part of the name (any case, Unicode), of the slug or of a tag, and the
// filters combine; counts and tags are the whole project's.
func testListPageFilters(t *testing.T, b *bundle) {
	mk := func(slug, name string, tags ...string) *monitors.Monitor {
		return b.monitor(t, slug, func(m *monitors.Monitor) { m.Name, m.Tags = name, tags })
	}
	backup := mk("nightly-backup", "Nightly Backup", "ops", "db")
	arger := mk("aerger", "Ärger Report", "Finance")
	sync := mk("sync", "sync", "ops")
	other := MustMonitor(t, b.s, MustProject(t, b.s).ID, "other-backup", func(m *monitors.Monitor) { m.Name = "Backup elsewhere" })
	_ = other
	for _, tc := range []struct {
		p    monitors.MonitorPageParams
		want []*monitors.Monitor
	}{
		{monitors.MonitorPageParams{}, []*monitors.Monitor{backup, sync, arger}},
		{monitors.MonitorPageParams{Tag: "ops"}, []*monitors.Monitor{backup, sync}},
		{monitors.MonitorPageParams{Tag: "op"}, nil},
		{monitors.MonitorPageParams{Query: "BACKUP"}, []*monitors.Monitor{backup}},
		{monitors.MonitorPageParams{Query: "ärg"}, []*monitors.Monitor{arger}},
		{monitors.MonitorPageParams{Query: "ÄRGER"}, []*monitors.Monitor{arger}},
		{monitors.MonitorPageParams{Query: "aerg"}, []*monitors.Monitor{arger}},
		{monitors.MonitorPageParams{Query: "finan"}, []*monitors.Monitor{arger}},
		{monitors.MonitorPageParams{Query: "ops"}, []*monitors.Monitor{backup, sync}},
		{monitors.MonitorPageParams{Query: "y-b"}, []*monitors.Monitor{backup}},
		{monitors.MonitorPageParams{Query: "s", Tag: "ops"}, []*monitors.Monitor{backup, sync}},
		{monitors.MonitorPageParams{Query: "nightly", Tag: "Finance"}, nil},
		{monitors.MonitorPageParams{Query: "100%"}, nil},
		{monitors.MonitorPageParams{Query: "_"}, nil},
		{monitors.MonitorPageParams{Status: monitors.StatusNew, Tag: "db"}, []*monitors.Monitor{backup}},
		{monitors.MonitorPageParams{Status: monitors.StatusDown}, nil},
	} {
		tc.p.Now = T0
		page := b.listPage(t, tc.p)
		// All new: the order is by name.
		slices.SortFunc(tc.want, func(x, y *monitors.Monitor) int { return strings.Compare(x.Name, y.Name) })
		require.Equal(t, nilIfEmpty(ids(tc.want)), nilIfEmpty(ids(page.Monitors)), "%+v", tc.p)
		require.Equal(t, len(tc.want), page.Matched, "%+v", tc.p)
		require.Equal(t, 3, page.Total)
		require.Equal(t, map[monitors.Status]int{monitors.StatusNew: 3}, page.Counts)
		require.Equal(t, []string{"Finance", "db", "ops"}, page.Tags, "distinct, sorted byte by byte")
	}
}

// testListPagePaging: Limit and Offset cut the filtered list; a page past
// the end is empty but still counts the matches.
func testListPagePaging(t *testing.T, b *bundle) {
	var want []string
	for i := range 7 {
		m := b.monitor(t, "job-"+string(rune('a'+i)), func(m *monitors.Monitor) { m.Tags = []string{"t"} })
		want = append(want, m.ID)
	}
	var got []string
	for off := 0; off < 9; off += 3 {
		page := b.listPage(t, monitors.MonitorPageParams{Now: T0, Limit: 3, Offset: off, Tag: "t"})
		require.Equal(t, 7, page.Matched)
		got = append(got, ids(page.Monitors)...)
	}
	require.Equal(t, want, got)
	page := b.listPage(t, monitors.MonitorPageParams{Now: T0, Limit: 3, Offset: 30, Query: "job"})
	require.Empty(t, page.Monitors)
	require.Equal(t, 7, page.Matched)
	require.Equal(t, 7, page.Total)
	page = b.listPage(t, monitors.MonitorPageParams{Now: T0, Limit: 3, Offset: 30, Query: "nothing"})
	require.Zero(t, page.Matched)
}

// testListMarkerChanges: the marker and the version of the monitor
// written change with every kind of write of a monitor or its runs, and
// with nothing else; unchanged, they stay.
func testListMarkerChanges(t *testing.T, b *bundle) {
	s, ctx := b.s, b.ctx
	marker := func() string {
		t.Helper()
		m, err := s.MonitorListMarker(ctx, b.prj.ID)
		require.NoError(t, err)
		require.NotEmpty(t, m)
		return m
	}
	versions := func() map[string]string {
		t.Helper()
		page := b.listPage(t, monitors.MonitorPageParams{Now: T0})
		out := map[string]string{}
		for i, m := range page.Monitors {
			out[m.ID] = page.Versions[i]
		}
		return out
	}
	empty := marker()
	require.Equal(t, empty, marker(), "nothing changed")
	m := b.monitor(t, "job", nil)
	keep := b.monitor(t, "keep", nil)
	last, lastV := marker(), versions()
	require.NotEqual(t, empty, last, "a monitor added")
	// shown is what the list draws of m: the monitor as loaded and its
	// recent runs.
	shown := func() (*monitors.Monitor, map[string][]monitors.RunBrief) {
		t.Helper()
		runs, err := s.RunBriefList(ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, MonitorIDs: []string{m.ID}, PerMonitor: 20})
		require.NoError(t, err)
		return b.get(t, m), runs
	}
	// step runs fn, which changes what the list draws of m (unless
	// quiet, when it may or may not); the marker and m's version change
	// when it did, and the other monitor's version stays.
	step := func(what string, quiet bool, fn func()) {
		t.Helper()
		m0, r0 := shown()
		fn()
		m1, r1 := shown()
		changed := !reflect.DeepEqual(m0, m1) || !reflect.DeepEqual(r0, r1)
		require.True(t, changed || quiet, "%s changes what the list draws", what)
		now, nowV := marker(), versions()
		require.Equal(t, now, marker(), "after %s, nothing changed", what)
		if changed {
			require.NotEqual(t, last, now, "%s changes the marker", what)
			require.NotEqual(t, lastV[m.ID], nowV[m.ID], "%s changes the monitor's version", what)
		}
		require.Equal(t, lastV[keep.ID], nowV[keep.ID], "%s leaves the other monitor's version", what)
		last, lastV = now, nowV
	}
	step("a start ping", false, func() { MustRecord(t, s, Ping(m, monitors.PingStart, T0)) })
	step("a success ping", false, func() { MustRecord(t, s, Ping(m, monitors.PingSuccess, T0.Add(time.Second))) })
	step("a second success at the same instant", false, func() { MustRecord(t, s, Ping(m, monitors.PingSuccess, T0.Add(time.Second))) })
	step("a log ping", true, func() { MustRecord(t, s, Ping(m, monitors.PingLog, T0.Add(2*time.Second))) })
	step("the evaluator opening an incident", false, func() {
		res := b.evaluate(t, T0.Add(3*time.Hour), 100, monitors.TimeOptions{})
		require.NotEmpty(t, res)
	})
	step("a pause", false, func() {
		_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
			return monitors.Pause(m, T0.Add(3*time.Hour))
		}})
		require.NoError(t, err)
	})
	step("a rename at the same instant", false, func() {
		_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
			m.Name = "renamed"
			return nil, nil
		}})
		require.NoError(t, err)
	})
	step("a resume", false, func() {
		_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
			return monitors.Resume(m, T0.Add(3*time.Hour))
		}})
		require.NoError(t, err)
	})
	step("a snooze", false, func() {
		_, err := s.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: b.prj.ID, ID: m.ID, Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
			return monitors.Snooze(m, T0.Add(5*time.Hour), T0.Add(3*time.Hour))
		}})
		require.NoError(t, err)
	})
	step("an edit through the API", false, func() {
		_, _, err := s.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: b.prj.ID, ID: m.ID,
			Fn: func(m *monitors.Monitor, _ []string) (*monitors.Transition, []string, error) {
				m.GraceSeconds++
				return nil, []string{"grace_seconds"}, nil
			}})
		require.NoError(t, err)
	})
	step("an edit by a declaration", false, func() {
		err := s.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "declared", Slugs: []string{m.Slug},
			Fn: func(current []*monitors.Monitor, _ map[string][]string) (*monitors.MonitorSyncPlan, error) {
				require.Len(t, current, 1)
				c := *current[0]
				c.Description = "declared"
				return &monitors.MonitorSyncPlan{Update: []monitors.MonitorSyncUpdate{{Monitor: &c}}}, nil
			}})
		require.NoError(t, err)
	})
	step("a new ping key", false, func() {
		_, err := s.MonitorRotatePingKey(ctx, &monitors.PingKeyRotateParams{ProjectID: b.prj.ID, ID: m.ID,
			PingKey: m.PingKey + "-rotated", Now: T0.Add(3 * time.Hour)})
		require.NoError(t, err)
		m.PingKey += "-rotated"
	})
	for i := range 12 {
		at := T0.Add(4*time.Hour + time.Duration(i)*time.Minute)
		MustRecord(t, s, Ping(m, monitors.PingSuccess, at))
	}
	last, lastV = marker(), versions()
	before, err := s.RunBriefList(ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, MonitorIDs: []string{m.ID}, PerMonitor: 20})
	require.NoError(t, err)
	step("a pruning of its runs", false, func() {
		n, err := s.PingPrune(ctx, &monitors.PingPruneParams{KeepRuns: 10})
		require.NoError(t, err)
		require.NotZero(t, n)
	})
	after, err := s.RunBriefList(ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, MonitorIDs: []string{m.ID}, PerMonitor: 20})
	require.NoError(t, err)
	require.NotEqual(t, before, after, "the pruning changed what the sparkline draws")
	n, err := s.PingPrune(ctx, &monitors.PingPruneParams{KeepRuns: 10})
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, last, marker(), "a pruning that deletes nothing changes nothing")

	// Another project's writes do not count.
	other := MustMonitor(t, s, MustProject(t, s).ID, "other", nil)
	MustRecord(t, s, Ping(other, monitors.PingSuccess, T0))
	require.Equal(t, last, marker(), "another project's monitor")

	require.NoError(t, s.MonitorDelete(ctx, b.prj.ID, m.ID))
	require.NotEqual(t, last, marker(), "a monitor deleted")
}

// testListPageKnown: a page given the monitors the caller holds (Known)
// is the page read whole, but for the monitors known at their row's
// version, which are the ones given; a monitor known at another version
// (written since, or a version made up) is read again, and a known
// monitor no longer on the page is not on it.
func testListPageKnown(t *testing.T, b *bundle) {
	var all []*monitors.Monitor
	for i := range 5 {
		all = append(all, b.monitor(t, "job-"+string(rune('a'+i)), nil))
	}
	known := func(page *monitors.MonitorPage) map[string]monitors.KnownMonitor {
		out := map[string]monitors.KnownMonitor{}
		for i, m := range page.Monitors {
			out[m.ID] = monitors.KnownMonitor{Version: page.Versions[i], Monitor: m}
		}
		return out
	}
	// same requires got to be want, known monitors aside: the same IDs,
	// versions, counts and monitors.
	same := func(want, got *monitors.MonitorPage) {
		t.Helper()
		require.Equal(t, ids(want.Monitors), ids(got.Monitors))
		require.Equal(t, want.Versions, got.Versions)
		require.Equal(t, want.Matched, got.Matched)
		require.Equal(t, want.Counts, got.Counts)
		require.Equal(t, want.Tags, got.Tags)
		for i := range want.Monitors {
			require.Equal(t, want.Monitors[i], got.Monitors[i], "monitor %s", want.Monitors[i].ID)
		}
	}
	first := b.listPage(t, monitors.MonitorPageParams{Now: T0})
	again := b.listPage(t, monitors.MonitorPageParams{Now: T0, Known: known(first)})
	same(first, again)
	for i := range first.Monitors {
		require.Same(t, first.Monitors[i], again.Monitors[i], "known at its version: not read again")
	}

	// One pinged, one known at a made-up version, one deleted.
	MustRecord(t, b.s, Ping(all[1], monitors.PingSuccess, T0))
	k := known(first)
	k[all[2].ID] = monitors.KnownMonitor{Version: "made-up", Monitor: first.Monitors[0]}
	require.NoError(t, b.s.MonitorDelete(b.ctx, b.prj.ID, all[3].ID))
	want := b.listPage(t, monitors.MonitorPageParams{Now: T0.Add(time.Second)})
	got := b.listPage(t, monitors.MonitorPageParams{Now: T0.Add(time.Second), Known: k})
	same(want, got)
	require.Len(t, got.Monitors, 4)
	for i, m := range got.Monitors {
		switch m.ID {
		case all[1].ID, all[2].ID:
			require.NotSame(t, k[m.ID].Monitor, m, "%s is read again", m.ID)
		default:
			require.Same(t, k[m.ID].Monitor, m, "%s is known", m.ID)
		}
		require.Equal(t, want.Versions[i], got.Versions[i])
	}
	require.Equal(t, monitors.StatusUp, got.Monitors[slices.IndexFunc(got.Monitors, func(m *monitors.Monitor) bool { return m.ID == all[1].ID })].State.Status,
		"the pinged monitor as it is now")

	// Paged and filtered, with every monitor known.
	page := b.listPage(t, monitors.MonitorPageParams{Now: T0, Limit: 2, Offset: 1, Known: known(want)})
	same(b.listPage(t, monitors.MonitorPageParams{Now: T0, Limit: 2, Offset: 1}), page)
	empty := b.listPage(t, monitors.MonitorPageParams{Now: T0, Query: "nothing", Known: known(want)})
	require.Empty(t, empty.Monitors)
	require.Zero(t, empty.Matched)
}
