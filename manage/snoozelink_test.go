package manage_test

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/secrets"
)

func keyring(t *testing.T) *secrets.Keyring {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vigil.key")
	_, err := secrets.Create(path)
	require.NoError(t, err)
	kr, err := secrets.Load(path)
	require.NoError(t, err)
	return kr
}

// parse reads a link's path and query back, as the dashboard does.
func parse(t *testing.T, link string) *manage.SnoozeLink {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	l, err := manage.ParseSnoozeLink(strings.TrimPrefix(u.Path, "/snooze/"), u.Query())
	require.NoError(t, err)
	return l
}

func TestSnoozeLink(t *testing.T) {
	t.Parallel()
	kr := keyring(t)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	link := manage.NewSnoozeLink(kr, "prj_1", "mon_a", 3600, now.Add(manage.SnoozeLinkTTL)).Path()
	require.True(t, strings.HasPrefix(link, "/snooze/mon_a?"), link)

	valid := parse(t, link)
	require.NoError(t, valid.Check(kr, now))
	require.NoError(t, valid.Check(kr, now.Add(manage.SnoozeLinkTTL-time.Second)))
	require.ErrorIs(t, valid.Check(kr, now.Add(manage.SnoozeLinkTTL)), manage.ErrLinkExpired, "refused at its expiry")

	wrongMonitor := parse(t, strings.Replace(link, "/snooze/mon_a?", "/snooze/mon_b?", 1))
	require.ErrorIs(t, wrongMonitor.Check(kr, now), manage.ErrLinkInvalid)
	for _, change := range []func(q url.Values){
		func(q url.Values) { q.Set("seconds", "604800") },
		func(q url.Values) { q.Set("expires", "1893456000") },
		func(q url.Values) { q.Set("project", "prj_2") },
		func(q url.Values) { q.Set("sig", respell(q.Get("sig"))) },
	} {
		u, _ := url.Parse(link)
		q := u.Query()
		change(q)
		l, err := manage.ParseSnoozeLink("mon_a", q)
		require.NoError(t, err)
		require.ErrorIs(t, l.Check(kr, now), manage.ErrLinkInvalid, "%v", q)
	}
	require.ErrorIs(t, valid.Check(keyring(t), now), manage.ErrLinkInvalid, "another Vigil's key")
	require.ErrorIs(t, valid.Check(nil, now), manage.ErrLinkInvalid, "no key: no link is valid")
	_, err := manage.ParseSnoozeLink("mon_a", url.Values{"seconds": {"x"}})
	require.ErrorIs(t, err, manage.ErrLinkInvalid)
}

// respell changes a signature's last character to another one, so the
// link differs whatever the signature happened to end with.
func respell(sig string) string {
	last := "A"
	if strings.HasSuffix(sig, last) {
		last = "B"
	}
	return sig[:len(sig)-1] + last
}
