package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/web"
)

// TestDisabledUser: a disabled account's sessions end, and it cannot sign
// in again until enabled.
func TestDisabledUser(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		c := b.signIn(t, "ada@example.com", b.project.ID)
		require.Equal(t, http.StatusOK, c.get("/keys").status)
		u, err := b.store.UserGetByEmail(context.Background(), "ada@example.com")
		require.NoError(t, err)
		at := b.clock.now()
		_, err = b.store.UserSetDisabled(context.Background(), &monitors.UserSetDisabledParams{ID: u.ID, DisabledAt: &at})
		require.NoError(t, err)
		require.Equal(t, http.StatusSeeOther, c.get("/keys").status, "signed out")

		r := c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"password-of-ada@example.com"}})
		require.Equal(t, http.StatusForbidden, r.status)
		require.Contains(t, r.body, "This account is disabled")
		r = c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"wrong password"}})
		require.Equal(t, http.StatusUnauthorized, r.status, "a wrong password says nothing of the account")

		_, err = b.store.UserSetDisabled(context.Background(), &monitors.UserSetDisabledParams{ID: u.ID})
		require.NoError(t, err)
		r = c.post("/login", url.Values{"email": {"ada@example.com"}, "password": {"password-of-ada@example.com"}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	})
}

// TestSessionMaxAge: a session used every day still ends SessionMaxAge
// after it began.
func TestSessionMaxAge(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		c := b.signIn(t, "ada@example.com", b.project.ID)
		for elapsed := time.Duration(0); elapsed < web.SessionMaxAge-24*time.Hour; elapsed += 24 * time.Hour {
			require.Equal(t, http.StatusOK, c.get("/keys").status, "after %s", elapsed)
			b.clock.advance(24 * time.Hour)
		}
		b.clock.advance(24 * time.Hour)
		require.Equal(t, http.StatusSeeOther, c.get("/keys").status, "past the absolute lifetime")
	})
}
