package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runLifecycle runs the conformance tests of the lifecycle of accounts and
// keys, of incident pruning and of the monitor limit.
func runLifecycle(t *testing.T, newStore func(t *testing.T) monitors.Store, caps Caps) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b *bundle)
	}{
		{"User/ListDisableEnable", testUserDisable},
		{"User/Delete", testUserDelete},
		{"User/SetPassword", testUserSetPassword},
		{"Session/DeleteByUser", testSessionDeleteByUser},
		{"PingKey/RotateMonitor", testRotateMonitorPingKey},
		{"PingKey/RotateProject", testRotateProjectPingKey},
		{"APIKey/Touch", testAPIKeyTouch},
		{"IncidentPrune", testIncidentPrune},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
	t.Run("Monitor/Limit", func(t *testing.T) {
		t.Parallel()
		if caps.WithMonitorLimit == nil {
			t.Fatal("Caps.WithMonitorLimit is required")
		}
		s := caps.WithMonitorLimit(t, 2)
		testMonitorLimit(t, &bundle{s: s, ctx: t.Context(), prj: MustProject(t, s)})
	})
}

func (b *bundle) session(t *testing.T, u *monitors.User, hash string) *monitors.Session {
	t.Helper()
	se, err := b.s.SessionCreate(b.ctx, &monitors.SessionCreateParams{ID: RandomID("ses_"), UserID: u.ID,
		TokenHash: hash, CSRFToken: "csrf", Now: T0, ExpiresAt: T0.Add(time.Hour)})
	require.NoError(t, err)
	return se
}

func (b *bundle) signedIn(t *testing.T, hash string) bool {
	t.Helper()
	_, err := b.s.SessionGet(b.ctx, &monitors.SessionGetParams{TokenHash: hash, Now: T0})
	if err != nil {
		require.ErrorIs(t, err, monitors.ErrNotFound)
		return false
	}
	return true
}

func testUserDisable(t *testing.T, b *bundle) {
	bo := b.user(t, "bo@example.com", b.prj.ID)
	ada := b.user(t, "ada@example.com", b.prj.ID)
	b.session(t, bo, "bo-1")
	b.session(t, ada, "ada-1")
	list, err := b.s.UserList(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []*monitors.User{ada, bo}, list, "by email")

	at := T0.Add(time.Minute)
	u, err := b.s.UserSetDisabled(b.ctx, &monitors.UserSetDisabledParams{ID: bo.ID, DisabledAt: &at})
	require.NoError(t, err)
	require.Equal(t, &at, u.DisabledAt)
	got, err := b.s.UserGetByEmail(b.ctx, "bo@example.com")
	require.NoError(t, err)
	require.Equal(t, &at, got.DisabledAt)
	require.False(t, b.signedIn(t, "bo-1"), "disabling ends the sessions")
	require.True(t, b.signedIn(t, "ada-1"), "of that user only")

	u, err = b.s.UserSetDisabled(b.ctx, &monitors.UserSetDisabledParams{ID: bo.ID})
	require.NoError(t, err)
	require.Nil(t, u.DisabledAt)
	_, err = b.s.UserSetDisabled(b.ctx, &monitors.UserSetDisabledParams{ID: "usr_missing", DisabledAt: &at})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testUserDelete(t *testing.T, b *bundle) {
	bo := b.user(t, "bo@example.com", b.prj.ID)
	b.session(t, bo, "bo-1")
	require.NoError(t, b.s.UserDelete(b.ctx, bo.ID))
	_, err := b.s.UserGet(b.ctx, bo.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	require.False(t, b.signedIn(t, "bo-1"))
	ps, err := b.s.ProjectListByUser(b.ctx, bo.ID)
	require.NoError(t, err)
	require.Empty(t, ps)
	require.ErrorIs(t, b.s.UserDelete(b.ctx, bo.ID), monitors.ErrNotFound)
	// The address can be used again.
	b.user(t, "bo@example.com", b.prj.ID)
}

func testUserSetPassword(t *testing.T, b *bundle) {
	bo := b.user(t, "bo@example.com", b.prj.ID)
	keep := b.session(t, bo, "bo-1")
	b.session(t, bo, "bo-2")
	require.NoError(t, b.s.UserSetPassword(b.ctx, &monitors.UserSetPasswordParams{ID: bo.ID, PasswordHash: "$2a$10$new", KeepSessionID: keep.ID}))
	got, err := b.s.UserGet(b.ctx, bo.ID)
	require.NoError(t, err)
	require.Equal(t, "$2a$10$new", got.PasswordHash)
	require.True(t, b.signedIn(t, "bo-1"), "the session that changed it stays")
	require.False(t, b.signedIn(t, "bo-2"))

	require.NoError(t, b.s.UserSetPassword(b.ctx, &monitors.UserSetPasswordParams{ID: bo.ID, PasswordHash: "$2a$10$cli"}))
	require.False(t, b.signedIn(t, "bo-1"), "no session kept")
	require.ErrorIs(t, b.s.UserSetPassword(b.ctx, &monitors.UserSetPasswordParams{ID: "usr_missing", PasswordHash: "x"}), monitors.ErrNotFound)
}

func testSessionDeleteByUser(t *testing.T, b *bundle) {
	bo := b.user(t, "bo@example.com", b.prj.ID)
	ada := b.user(t, "ada@example.com", b.prj.ID)
	here := b.session(t, bo, "bo-1")
	b.session(t, bo, "bo-2")
	b.session(t, bo, "bo-3")
	b.session(t, ada, "ada-1")
	n, err := b.s.SessionDeleteByUser(b.ctx, &monitors.SessionDeleteByUserParams{UserID: bo.ID, ExceptID: here.ID})
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.True(t, b.signedIn(t, "bo-1"))
	require.False(t, b.signedIn(t, "bo-2"))
	require.True(t, b.signedIn(t, "ada-1"))
	n, err = b.s.SessionDeleteByUser(b.ctx, &monitors.SessionDeleteByUserParams{UserID: bo.ID})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	require.False(t, b.signedIn(t, "bo-1"))
}

func testRotateMonitorPingKey(t *testing.T, b *bundle) {
	m := b.monitor(t, "job", nil)
	other := b.monitor(t, "other", nil)
	old := m.PingKey
	newKey := NewMonitor("", "x", nil).PingKey
	got, err := b.s.MonitorRotatePingKey(b.ctx, &monitors.PingKeyRotateParams{ProjectID: b.prj.ID, ID: m.ID, PingKey: newKey, Now: T0.Add(time.Hour)})
	require.NoError(t, err)
	require.Equal(t, newKey, got.PingKey)
	require.Equal(t, T0.Add(time.Hour), got.UpdatedAt)
	_, err = b.s.MonitorGetByPingKey(b.ctx, old)
	require.ErrorIs(t, err, monitors.ErrNotFound, "the old key finds nothing at once")
	res, err := b.s.PingRecordBatch(b.ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{PingKey: old, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0.Add(2 * time.Hour)}},
		{PingKey: newKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0.Add(2 * time.Hour)}},
	}})
	require.NoError(t, err)
	require.ErrorIs(t, res[0].Err, monitors.ErrNotFound)
	require.NoError(t, res[1].Err)
	require.Equal(t, m.ID, res[1].MonitorID)

	_, err = b.s.MonitorRotatePingKey(b.ctx, &monitors.PingKeyRotateParams{ProjectID: b.prj.ID, ID: m.ID, PingKey: other.PingKey, Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict)
	stranger := MustProject(t, b.s)
	_, err = b.s.MonitorRotatePingKey(b.ctx, &monitors.PingKeyRotateParams{ProjectID: stranger.ID, ID: m.ID, PingKey: old, Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound, "another project's monitor")
}

func testRotateProjectPingKey(t *testing.T, b *bundle) {
	b.monitor(t, "job", nil)
	old := b.prj.PingKey
	p, err := b.s.ProjectRotatePingKey(b.ctx, &monitors.PingKeyRotateParams{ProjectID: b.prj.ID, PingKey: "new-project-ping-key-0123456789"})
	require.NoError(t, err)
	require.Equal(t, "new-project-ping-key-0123456789", p.PingKey)
	_, err = b.s.ProjectGetByPingKey(b.ctx, old)
	require.ErrorIs(t, err, monitors.ErrNotFound)
	res, err := b.s.PingRecordBatch(b.ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{ProjectPingKey: old, Slug: "job", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
		{ProjectPingKey: p.PingKey, Slug: "job", Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}},
	}})
	require.NoError(t, err)
	require.ErrorIs(t, res[0].Err, monitors.ErrNotFound)
	require.NoError(t, res[1].Err)
	other := MustProject(t, b.s)
	_, err = b.s.ProjectRotatePingKey(b.ctx, &monitors.PingKeyRotateParams{ProjectID: b.prj.ID, PingKey: other.PingKey})
	require.ErrorIs(t, err, monitors.ErrConflict)
	_, err = b.s.ProjectRotatePingKey(b.ctx, &monitors.PingKeyRotateParams{ProjectID: "prj_missing", PingKey: "k-0123456789012345678901"})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testAPIKeyTouch(t *testing.T, b *bundle) {
	k, err := b.s.APIKeyCreate(b.ctx, &monitors.APIKeyCreateParams{ID: RandomID("key_"), ProjectID: b.prj.ID, Name: "ci",
		Prefix: "vk_abc", Hash: RandomID("hash_"), Now: T0})
	require.NoError(t, err)
	lastUsed := func() *time.Time {
		got, err := b.s.APIKeyGetByHash(b.ctx, k.Hash)
		require.NoError(t, err)
		return got.LastUsedAt
	}
	require.Nil(t, lastUsed())
	require.NoError(t, b.s.APIKeyTouch(b.ctx, &monitors.APIKeyTouchParams{ID: k.ID, At: T0.Add(time.Hour)}))
	require.Equal(t, ptr(T0.Add(time.Hour)), lastUsed())
	require.NoError(t, b.s.APIKeyTouch(b.ctx, &monitors.APIKeyTouchParams{ID: k.ID, At: T0.Add(time.Minute)}))
	require.Equal(t, ptr(T0.Add(time.Hour)), lastUsed(), "a late write does not move it back")
	require.NoError(t, b.s.APIKeyTouch(b.ctx, &monitors.APIKeyTouchParams{ID: "key_missing", At: T0}))
}

func testIncidentPrune(t *testing.T, b *bundle) {
	mustChannel(t, b, b.prj.ID, "hook", true)
	old := b.monitor(t, "old", nil)
	open := b.monitor(t, "open", nil)
	recent := b.monitor(t, "recent", nil)
	pending := b.monitor(t, "pending", nil)
	day := 24 * time.Hour
	MustRecord(t, b.s, Ping(old, monitors.PingFail, T0), Ping(old, monitors.PingSuccess, T0.Add(time.Hour)))
	MustRecord(t, b.s, Ping(old, monitors.PingFail, T0.Add(2*time.Hour)), Ping(old, monitors.PingSuccess, T0.Add(3*time.Hour)))
	MustRecord(t, b.s, Ping(open, monitors.PingFail, T0))
	MustRecord(t, b.s, Ping(recent, monitors.PingFail, T0), Ping(recent, monitors.PingSuccess, T0.Add(10*day)))
	MustRecord(t, b.s, Ping(pending, monitors.PingFail, T0), Ping(pending, monitors.PingSuccess, T0.Add(time.Hour)))
	var ids []string
	for _, in := range b.incidents(t, monitors.IncidentListParams{}) {
		ids = append(ids, in.ID)
	}
	all := b.deliveries(t, ids...)
	require.Len(t, all, 9, "opened and resolved but the open one")
	// Every delivery is sent, but one of the pending monitor's.
	var pendingID int64
	for _, d := range all {
		if d.MonitorID == pending.ID && d.Event == monitors.EventResolved {
			pendingID = d.ID
			continue
		}
		_, err := b.s.DeliveryAttemptRecord(b.ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
			StartedAt: T0.Add(11 * day), FinishedAt: T0.Add(11 * day), Outcome: monitors.AttemptSuccess, StatusCode: 200})
		require.NoError(t, err)
	}
	require.NotZero(t, pendingID)

	n, err := b.s.IncidentPrune(b.ctx, &monitors.IncidentPruneParams{ResolvedBefore: T0.Add(5 * day), BatchSize: 1})
	require.NoError(t, err)
	require.Equal(t, int64(2), n, "the two old incidents, one per batch")
	kept := map[string]bool{}
	for _, in := range b.incidents(t, monitors.IncidentListParams{}) {
		kept[in.MonitorID] = true
	}
	require.Equal(t, map[string]bool{open.ID: true, recent.ID: true, pending.ID: true}, kept)
	left := b.deliveries(t, ids...)
	require.Len(t, left, 5)
	for _, d := range left {
		require.NotEqual(t, old.ID, d.MonitorID, "deliveries go with their incident")
	}
	for _, ev := range b.events(t, "") {
		require.NotEqual(t, old.ID, ev.MonitorID, "events go with their incident")
	}

	// Once sent, the pending one goes too.
	_, err = b.s.DeliveryAttemptRecord(b.ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: pendingID,
		StartedAt: T0.Add(11 * day), FinishedAt: T0.Add(11 * day), Outcome: monitors.AttemptSuccess, StatusCode: 200})
	require.NoError(t, err)
	n, err = b.s.IncidentPrune(b.ctx, &monitors.IncidentPruneParams{ResolvedBefore: T0.Add(5 * day)})
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	// An open incident is never pruned, however old.
	n, err = b.s.IncidentPrune(b.ctx, &monitors.IncidentPruneParams{ResolvedBefore: T0.Add(1000 * day)})
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the recent one only")
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1)
	require.Equal(t, open.ID, ins[0].MonitorID)
	require.Nil(t, ins[0].ResolvedAt)
}

func testMonitorLimit(t *testing.T, b *bundle) {
	b.monitor(t, "one", nil)
	// A ping that would create a third monitor fails alone, and so does
	// the insert; the others are stored. (A batch creates in slug order.)
	create := func(slug string) *monitors.PingRecordParams {
		return &monitors.PingRecordParams{ProjectPingKey: b.prj.PingKey, Slug: slug, Create: true,
			NewMonitor: NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}}
	}
	res, err := b.s.PingRecordBatch(b.ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		create("second"), create("third"), create("one")}})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.True(t, res[0].Created)
	var le *monitors.LimitError
	require.ErrorAs(t, res[1].Err, &le)
	require.Equal(t, 2, le.Limit)
	require.ErrorIs(t, res[1].Err, monitors.ErrLimit)
	require.NoError(t, res[2].Err, "an existing monitor still takes pings")

	err = b.s.MonitorInsert(b.ctx, NewMonitor(b.prj.ID, "four", nil))
	require.ErrorIs(t, err, monitors.ErrLimit)
	_, err = b.s.MonitorGetBySlug(b.ctx, b.prj.ID, "four")
	require.ErrorIs(t, err, monitors.ErrNotFound, "nothing half-created")

	// A declaration that would pass the limit stores nothing.
	err = b.s.MonitorSync(b.ctx, &monitors.MonitorSyncParams{ProjectID: b.prj.ID, Source: "app", Slugs: []string{"five"},
		Fn: func([]*monitors.Monitor, map[string][]string) (*monitors.MonitorSyncPlan, error) {
			return &monitors.MonitorSyncPlan{Insert: []*monitors.Monitor{NewMonitor(b.prj.ID, "five", func(m *monitors.Monitor) { m.Source = "app" })}}, nil
		}})
	require.ErrorIs(t, err, monitors.ErrLimit)
	ms, err := b.s.MonitorList(b.ctx, &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: T0})
	require.NoError(t, err)
	require.Equal(t, []string{"one", "second"}, slugs(ms))

	// Another project has its own room.
	other := MustProject(t, b.s)
	require.NoError(t, b.s.MonitorInsert(b.ctx, NewMonitor(other.ID, "one", nil)))
	require.NoError(t, b.s.MonitorDelete(b.ctx, b.prj.ID, ms[0].ID))
	require.NoError(t, b.s.MonitorInsert(b.ctx, NewMonitor(b.prj.ID, "four", nil)), "room again after a delete")
}
