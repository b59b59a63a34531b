package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runWeb runs the conformance tests of the dashboard's methods: users,
// memberships, sessions and recent runs.
func runWeb(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	for _, tc := range webTests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore))
		})
	}
}

var webTests = []struct {
	name string
	fn   func(t *testing.T, b *bundle)
}{
	{"User/CreateAndGet", testUserCreateAndGet},
	{"User/CreateIsAtomic", testUserCreateAtomic},
	{"User/OnlyFirst", testUserOnlyFirst},
	{"User/OnlyFirstConcurrent", testUserOnlyFirstConcurrent},
	{"Project/Members", testProjectMembers},
	{"Project/Rename", testProjectRename},
	{"Session/Lifecycle", testSessionLifecycle},
	{"Session/DeleteExpired", testSessionDeleteExpired},
	{"RunListRecent", testRunListRecent},
	{"RunBriefList", testRunBriefList},
}

func (b *bundle) user(t *testing.T, email string, projectIDs ...string) *monitors.User {
	t.Helper()
	u, err := b.s.UserCreate(b.ctx, &monitors.UserCreateParams{ID: RandomID("usr_"), Email: email,
		PasswordHash: "$2a$10$hash", ProjectIDs: projectIDs, Now: T0})
	require.NoError(t, err)
	return u
}

func testUserCreateAndGet(t *testing.T, b *bundle) {
	n, err := b.s.UserCount(b.ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	u := b.user(t, "  Ada@Example.COM ", b.prj.ID)
	require.Equal(t, "ada@example.com", u.Email, "emails are stored in lower case")
	require.Equal(t, T0, u.CreatedAt)

	got, err := b.s.UserGet(b.ctx, u.ID)
	require.NoError(t, err)
	require.Equal(t, u, got)
	got, err = b.s.UserGetByEmail(b.ctx, "ADA@example.com")
	require.NoError(t, err)
	require.Equal(t, u, got)

	_, err = b.s.UserGetByEmail(b.ctx, "nobody@example.com")
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = b.s.UserGet(b.ctx, "usr_missing")
	require.ErrorIs(t, err, monitors.ErrNotFound)

	_, err = b.s.UserCreate(b.ctx, &monitors.UserCreateParams{ID: RandomID("usr_"), Email: "ada@EXAMPLE.com",
		PasswordHash: "x", Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict, "one address is one account")

	n, err = b.s.UserCount(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

func testUserCreateAtomic(t *testing.T, b *bundle) {
	_, err := b.s.UserCreate(b.ctx, &monitors.UserCreateParams{ID: RandomID("usr_"), Email: "bo@example.com",
		PasswordHash: "x", ProjectIDs: []string{b.prj.ID, "prj_missing"}, Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	_, err = b.s.UserGetByEmail(b.ctx, "bo@example.com")
	require.ErrorIs(t, err, monitors.ErrNotFound, "a user whose membership failed is not half stored")
}

func testUserOnlyFirst(t *testing.T, b *bundle) {
	first, err := b.s.UserCreate(b.ctx, &monitors.UserCreateParams{ID: RandomID("usr_"), Email: "first@example.com",
		PasswordHash: "x", ProjectIDs: []string{b.prj.ID}, OnlyFirst: true, Now: T0})
	require.NoError(t, err)
	_, err = b.s.UserCreate(b.ctx, &monitors.UserCreateParams{ID: RandomID("usr_"), Email: "second@example.com",
		PasswordHash: "x", ProjectIDs: []string{b.prj.ID}, OnlyFirst: true, Now: T0})
	require.ErrorIs(t, err, monitors.ErrConflict)
	// Without OnlyFirst, more users may be made.
	b.user(t, "second@example.com")
	projects, err := b.s.ProjectListByUser(b.ctx, first.ID)
	require.NoError(t, err)
	require.Len(t, projects, 1)
}

func testUserOnlyFirstConcurrent(t *testing.T, b *bundle) {
	const n = 6
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		made int
	)
	for i := range n {
		wg.Go(func() {
			_, err := b.s.UserCreate(b.ctx, &monitors.UserCreateParams{ID: RandomID("usr_"),
				Email: RandomID("u") + "@example.com", PasswordHash: "x", OnlyFirst: true, Now: T0.Add(time.Duration(i))})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				made++
				return
			}
			require.ErrorIs(t, err, monitors.ErrConflict)
		})
	}
	wg.Wait()
	require.Equal(t, 1, made, "exactly one first account")
	count, err := b.s.UserCount(b.ctx)
	require.NoError(t, err)
	require.Equal(t, 1, count)
}

func testProjectMembers(t *testing.T, b *bundle) {
	other := MustProject(t, b.s)
	third, err := b.s.ProjectCreate(b.ctx, &monitors.ProjectCreateParams{ID: RandomID("prj_"), Name: "third",
		PingKey: RandomID("pk_"), Now: T0.Add(time.Hour)})
	require.NoError(t, err)

	u := b.user(t, "member@example.com", b.prj.ID)
	v := b.user(t, "other@example.com", other.ID)

	projects, err := b.s.ProjectListByUser(b.ctx, u.ID)
	require.NoError(t, err)
	require.Equal(t, []*monitors.Project{b.prj}, projects)

	require.NoError(t, b.s.ProjectMemberAdd(b.ctx, &monitors.ProjectMemberAddParams{ProjectID: third.ID, UserID: u.ID, Now: T0}))
	require.NoError(t, b.s.ProjectMemberAdd(b.ctx, &monitors.ProjectMemberAddParams{ProjectID: third.ID, UserID: u.ID, Now: T0}),
		"adding a member again changes nothing")
	projects, err = b.s.ProjectListByUser(b.ctx, u.ID)
	require.NoError(t, err)
	require.Equal(t, []string{b.prj.ID, third.ID}, projectIDs(projects), "oldest first")

	projects, err = b.s.ProjectListByUser(b.ctx, v.ID)
	require.NoError(t, err)
	require.Equal(t, []string{other.ID}, projectIDs(projects), "no one sees another's projects")

	projects, err = b.s.ProjectListByUser(b.ctx, "usr_missing")
	require.NoError(t, err)
	require.Empty(t, projects)

	err = b.s.ProjectMemberAdd(b.ctx, &monitors.ProjectMemberAddParams{ProjectID: "prj_missing", UserID: u.ID, Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound)
	err = b.s.ProjectMemberAdd(b.ctx, &monitors.ProjectMemberAddParams{ProjectID: b.prj.ID, UserID: "usr_missing", Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func projectIDs(ps []*monitors.Project) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

func testProjectRename(t *testing.T, b *bundle) {
	p, err := b.s.ProjectRename(b.ctx, &monitors.ProjectRenameParams{ID: b.prj.ID, Name: "Billing"})
	require.NoError(t, err)
	require.Equal(t, "Billing", p.Name)
	require.Equal(t, b.prj.PingKey, p.PingKey)
	require.Equal(t, b.prj.CreatedAt, p.CreatedAt)
	got, err := b.s.ProjectGet(b.ctx, b.prj.ID)
	require.NoError(t, err)
	require.Equal(t, p, got)

	_, err = b.s.ProjectRename(b.ctx, &monitors.ProjectRenameParams{ID: "prj_missing", Name: "x"})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testSessionLifecycle(t *testing.T, b *bundle) {
	u := b.user(t, "s@example.com", b.prj.ID)
	se, err := b.s.SessionCreate(b.ctx, &monitors.SessionCreateParams{ID: RandomID("ses_"), UserID: u.ID,
		TokenHash: "hash-1", CSRFToken: "csrf-1", Now: T0, ExpiresAt: T0.Add(time.Hour)})
	require.NoError(t, err)
	require.Equal(t, T0.Add(time.Hour), se.ExpiresAt)

	got, err := b.s.SessionGet(b.ctx, &monitors.SessionGetParams{TokenHash: "hash-1", Now: T0.Add(59 * time.Minute)})
	require.NoError(t, err)
	require.Equal(t, se, got)

	_, err = b.s.SessionGet(b.ctx, &monitors.SessionGetParams{TokenHash: "hash-1", Now: T0.Add(time.Hour)})
	require.ErrorIs(t, err, monitors.ErrNotFound, "a session is expired at its expiry")
	_, err = b.s.SessionGet(b.ctx, &monitors.SessionGetParams{TokenHash: "hash-2", Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound)

	require.NoError(t, b.s.SessionExtend(b.ctx, se.ID, T0.Add(48*time.Hour)))
	got, err = b.s.SessionGet(b.ctx, &monitors.SessionGetParams{TokenHash: "hash-1", Now: T0.Add(47 * time.Hour)})
	require.NoError(t, err)
	require.Equal(t, T0.Add(48*time.Hour), got.ExpiresAt)
	require.ErrorIs(t, b.s.SessionExtend(b.ctx, "ses_missing", T0), monitors.ErrNotFound)

	require.NoError(t, b.s.SessionDelete(b.ctx, "hash-1"))
	_, err = b.s.SessionGet(b.ctx, &monitors.SessionGetParams{TokenHash: "hash-1", Now: T0})
	require.ErrorIs(t, err, monitors.ErrNotFound, "signed out")
	require.NoError(t, b.s.SessionDelete(b.ctx, "hash-1"), "signing out twice is not an error")

	_, err = b.s.SessionCreate(b.ctx, &monitors.SessionCreateParams{ID: RandomID("ses_"), UserID: "usr_missing",
		TokenHash: "hash-3", CSRFToken: "c", Now: T0, ExpiresAt: T0.Add(time.Hour)})
	require.ErrorIs(t, err, monitors.ErrNotFound)
}

func testSessionDeleteExpired(t *testing.T, b *bundle) {
	u := b.user(t, "x@example.com")
	for i, exp := range []time.Duration{time.Minute, time.Hour, 2 * time.Hour} {
		_, err := b.s.SessionCreate(b.ctx, &monitors.SessionCreateParams{ID: RandomID("ses_"), UserID: u.ID,
			TokenHash: RandomID("h") + string(rune('a'+i)), CSRFToken: "c", Now: T0, ExpiresAt: T0.Add(exp)})
		require.NoError(t, err)
	}
	n, err := b.s.SessionDeleteExpired(b.ctx, T0.Add(time.Hour))
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "expired at or before now")
	n, err = b.s.SessionDeleteExpired(b.ctx, T0.Add(time.Hour))
	require.NoError(t, err)
	require.Zero(t, n)
}

func testRunListRecent(t *testing.T, b *bundle) {
	busy := b.monitor(t, "busy", nil)
	quiet := b.monitor(t, "quiet", nil)
	idle := b.monitor(t, "idle", nil)
	other := MustMonitor(t, b.s, MustProject(t, b.s).ID, "theirs", nil)

	at := T0
	for i := range 5 {
		at = at.Add(time.Minute)
		kind := monitors.PingSuccess
		if i == 3 {
			kind = monitors.PingFail
		}
		MustRecord(t, b.s, Ping(busy, monitors.PingStart, at), Ping(busy, kind, at.Add(time.Duration(i+1)*time.Second)),
			Ping(other, monitors.PingSuccess, at))
	}
	MustRecord(t, b.s, Ping(quiet, monitors.PingSuccess, at))

	got, err := b.s.RunListRecent(b.ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID,
		MonitorIDs: []string{busy.ID, quiet.ID, idle.ID, other.ID}, PerMonitor: 3})
	require.NoError(t, err)
	require.Len(t, got, 2, "monitors without runs, and other projects' monitors, have no entry")

	runs := got[busy.ID]
	require.Len(t, runs, 3)
	var seqs []int64
	for _, r := range runs {
		seqs = append(seqs, r.Seq)
		require.Equal(t, busy.ID, r.MonitorID)
	}
	require.Equal(t, []int64{5, 4, 3}, seqs, "newest first")
	require.Equal(t, monitors.RunSucceeded, runs[0].Outcome)
	require.EqualValues(t, 5000, *runs[0].DurationMS)
	require.Equal(t, monitors.RunFailed, runs[1].Outcome)
	require.Len(t, got[quiet.ID], 1)

	got, err = b.s.RunListRecent(b.ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID,
		MonitorIDs: []string{busy.ID}, PerMonitor: 10})
	require.NoError(t, err)
	require.Len(t, got[busy.ID], 5)

	got, err = b.s.RunListRecent(b.ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, PerMonitor: 10})
	require.NoError(t, err)
	require.Empty(t, got)
}

func testRunBriefList(t *testing.T, b *bundle) {
	busy := b.monitor(t, "busy", nil)
	quiet := b.monitor(t, "quiet", nil)
	idle := b.monitor(t, "idle", nil)
	other := MustMonitor(t, b.s, MustProject(t, b.s).ID, "theirs", nil)

	at := T0
	for i := range 5 {
		at = at.Add(time.Minute)
		kind := monitors.PingSuccess
		if i == 3 {
			kind = monitors.PingFail
		}
		MustRecord(t, b.s, Ping(busy, monitors.PingStart, at), Ping(busy, kind, at.Add(time.Duration(i+1)*time.Second)),
			Ping(other, monitors.PingSuccess, at))
	}
	// An open run: no outcome, no duration yet.
	MustRecord(t, b.s, Ping(busy, monitors.PingStart, at.Add(time.Minute)))
	MustRecord(t, b.s, Ping(quiet, monitors.PingSuccess, at))

	ids := []string{busy.ID, quiet.ID, idle.ID, other.ID}
	got, err := b.s.RunBriefList(b.ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, MonitorIDs: ids, PerMonitor: 4})
	require.NoError(t, err)
	require.Len(t, got, 2, "monitors without runs, and other projects' monitors, have no entry")
	ms := func(v int64) *int64 { return &v }
	require.Equal(t, []monitors.RunBrief{
		{Outcome: ""},
		{Outcome: monitors.RunSucceeded, DurationMS: ms(5000)},
		{Outcome: monitors.RunFailed, DurationMS: ms(4000)},
		{Outcome: monitors.RunSucceeded, DurationMS: ms(3000)},
	}, got[busy.ID], "newest first, the open run without outcome or duration")

	full, err := b.s.RunListRecent(b.ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, MonitorIDs: ids, PerMonitor: 4})
	require.NoError(t, err)
	for id, runs := range full {
		require.Len(t, got[id], len(runs), "the same runs as RunListRecent")
		for i, r := range runs {
			require.Equal(t, monitors.RunBrief{Outcome: r.Outcome, DurationMS: r.DurationMS}, got[id][i])
		}
	}

	got, err = b.s.RunBriefList(b.ctx, &monitors.RunListRecentParams{ProjectID: b.prj.ID, PerMonitor: 10})
	require.NoError(t, err)
	require.Empty(t, got)
}
