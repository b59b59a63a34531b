package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/web"
)

func newKeyring(t *testing.T) *secrets.Keyring {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vigil.key")
	_, err := secrets.Create(path)
	require.NoError(t, err)
	kr, err := secrets.Load(path)
	require.NoError(t, err)
	return kr
}

// TestSnoozeLink: a notification's signed link, opened without a sign-in.
// GET shows what it would do and snoozes nothing (link previews fetch it);
// POST snoozes the monitor it names for its duration. A link for another
// monitor, changed in any part, of another Vigil, or expired is refused,
// and nothing is snoozed; nor does any other method do anything.
func TestSnoozeLink(t *testing.T) {
	t.Parallel()
	kr := newKeyring(t)
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		m := b.monitor(t, b.project.ID, "nightly-backup")
		other := b.monitor(t, b.project.ID, "other")
		now := b.clock.now()
		link := manage.NewSnoozeLink(kr, b.project.ID, m.ID, manage.SnoozeLinkSeconds, now.Add(manage.SnoozeLinkTTL)).Path()
		c := b.client(t)
		snoozed := func(m *monitors.Monitor) *time.Time {
			got, err := b.store.MonitorGet(ctx, b.project.ID, m.ID)
			require.NoError(t, err)
			return got.SnoozedUntil
		}

		r := c.get(link)
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, "Snooze nightly-backup?")
		require.Contains(t, r.body, `method="post" action="`+html.EscapeString(link)+`"`)
		require.Nil(t, snoozed(m), "opening the link snoozes nothing")

		refused := func(path string, status int, why string) {
			t.Helper()
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				r := c.do(method, path, url.Values{}, nil)
				require.Equal(t, status, r.status, "%s %s: %s", method, why, r.body)
			}
			require.Nil(t, snoozed(m), why)
			require.Nil(t, snoozed(other), why)
		}
		refused(strings.Replace(link, "/snooze/"+m.ID+"?", "/snooze/"+other.ID+"?", 1), http.StatusForbidden, "another monitor")
		u, err := url.Parse(link)
		require.NoError(t, err)
		for _, change := range []struct {
			key, value string
		}{{"seconds", "604800"}, {"expires", "1893456000"}, {"project", "prj_other"}, {"sig", "k0000000000.AAAA"}} {
			q := u.Query()
			q.Set(change.key, change.value)
			refused(u.Path+"?"+q.Encode(), http.StatusForbidden, "changed "+change.key)
		}
		q := u.Query()
		q.Del("sig")
		refused(u.Path+"?"+q.Encode(), http.StatusForbidden, "no signature")
		otherVigil := manage.NewSnoozeLink(newKeyring(t), b.project.ID, m.ID, 3600, now.Add(time.Hour)).Path()
		refused(otherVigil, http.StatusForbidden, "another Vigil's key")
		for _, method := range []string{http.MethodPut, http.MethodDelete, http.MethodPatch} {
			r := c.do(method, link, url.Values{}, nil)
			require.Equal(t, http.StatusMethodNotAllowed, r.status, "%s: %s", method, r.body)
		}
		require.Nil(t, snoozed(m), "no other method does anything")

		r = c.do(http.MethodPost, link, url.Values{}, nil)
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, "nightly-backup is snoozed until 2026-03-02 10:00 UTC")
		require.Equal(t, now.Add(time.Hour), *snoozed(m))
		require.Nil(t, snoozed(other))

		// Past its expiry, the same link is refused.
		_, err = manage.New(b.store, b.clock.now).MonitorUnsnooze(ctx, b.project.ID, m.ID)
		require.NoError(t, err)
		b.clock.advance(manage.SnoozeLinkTTL)
		refused(link, http.StatusGone, "expired")
	}, func(c *web.Config) { c.Signer = kr })
}

// TestSnoozeLinkWithoutKey: a dashboard without the server's key file
// refuses every link.
func TestSnoozeLinkWithoutKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.monitor(t, b.project.ID, "job")
	link := manage.NewSnoozeLink(newKeyring(t), b.project.ID, m.ID, 3600, b.clock.now().Add(time.Hour)).Path()
	r := b.client(t).do(http.MethodPost, link, url.Values{}, nil)
	require.Equal(t, http.StatusForbidden, r.status)
}

// TestSnoozeFromMonitorPage: snooze 1 h, a custom duration, a bad one,
// and ending the snooze, through the monitor page's forms; the monitor
// page and the list say "snoozed until".
func TestSnoozeFromMonitorPage(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		m := b.monitor(t, b.project.ID, "job")
		c := b.signIn(t, "ada@example.com", b.project.ID)
		r := c.get("/monitors/" + m.ID)
		require.Contains(t, r.body, "Snooze 1 h")
		r = c.postForm("/monitors/"+m.ID+"/snooze", url.Values{"for": {"1h"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := b.store.MonitorGet(ctx, b.project.ID, m.ID)
		require.NoError(t, err)
		require.Equal(t, b.clock.now().Add(time.Hour), *got.SnoozedUntil)
		r = c.get("/monitors/" + m.ID)
		require.Contains(t, r.body, "Snoozed until")
		require.Contains(t, r.body, "End snooze")
		require.Contains(t, c.get("/").body, "snoozed until")

		for _, bad := range []string{"", "soon", "8d"} {
			r = c.postForm("/monitors/"+m.ID+"/snooze", url.Values{"for": {bad}})
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			got, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
			require.NoError(t, err)
			require.Equal(t, b.clock.now().Add(time.Hour), *got.SnoozedUntil, "%q changes nothing", bad)
		}
		r = c.postForm("/monitors/"+m.ID+"/snooze", url.Values{"for": {"30m"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
		require.NoError(t, err)
		require.Equal(t, b.clock.now().Add(30*time.Minute), *got.SnoozedUntil)

		r = c.postForm("/monitors/"+m.ID+"/unsnooze", nil)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
		require.NoError(t, err)
		require.Nil(t, got.SnoozedUntil)
		require.NotContains(t, c.get("/monitors/"+m.ID).body, "Snoozed until")
	})
}

// TestDependsOnInForm: the monitor form sets depends_on; a cycle is
// refused in the form's words, naming it, and nothing is stored.
func TestDependsOnInForm(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		db := b.monitor(t, b.project.ID, "db")
		job := b.monitor(t, b.project.ID, "job")
		c := b.signIn(t, "ada@example.com", b.project.ID)
		r := c.get("/monitors/" + job.ID + "/edit")
		require.Contains(t, r.body, `name="depends_on" value="`+db.ID+`"`)
		require.NotContains(t, r.body, `name="depends_on" value="`+job.ID+`"`, "not itself")

		form := func(m *monitors.Monitor, deps ...string) url.Values {
			return url.Values{"name": {m.Name}, "slug": {m.Slug}, "schedule_kind": {"interval"}, "every": {"1h"},
				"grace": {"5m"}, "alert_on_failure": {"final"}, "overlap": {"alert"}, "failure_threshold": {"1"},
				"recovery_threshold": {"1"}, "depends_on": deps}
		}
		r = c.postForm("/monitors/"+job.ID, form(job, db.ID))
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		got, err := b.store.MonitorGet(ctx, b.project.ID, job.ID)
		require.NoError(t, err)
		require.Equal(t, []string{db.ID}, got.DependsOn)
		r = c.get("/monitors/" + job.ID)
		require.Contains(t, r.body, "Depends on")
		require.Contains(t, r.body, `<a href="/monitors/`+db.ID+`">db</a>`)

		r = c.postForm("/monitors/"+db.ID, form(db, job.ID))
		require.Equal(t, http.StatusUnprocessableEntity, r.status, r.body)
		require.Contains(t, html.UnescapeString(r.body), "Depends on: cycle db → job → db.")
		got, err = b.store.MonitorGet(ctx, b.project.ID, db.ID)
		require.NoError(t, err)
		require.Empty(t, got.DependsOn, "nothing stored")
	})
}
