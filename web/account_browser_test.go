package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/server"
)

// otherSession is a second sign-in of the same person, from another
// "device": a plain HTTP client with its own cookies.
type otherSession struct {
	t      *testing.T
	base   string
	client *http.Client
}

func newOtherSession(t *testing.T, base string) *otherSession {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &otherSession{t: t, base: base, client: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// signIn posts the sign-in form and reports whether it was accepted.
func (o *otherSession) signIn(email, password string) bool {
	o.t.Helper()
	resp, err := o.client.PostForm(o.base+"/login", url.Values{"email": {email}, "password": {password}})
	require.NoError(o.t, err)
	resp.Body.Close()
	return resp.StatusCode == http.StatusSeeOther
}

// signedIn reports whether the session still opens the account page.
func (o *otherSession) signedIn() bool {
	o.t.Helper()
	resp, err := o.client.Get(o.base + "/account")
	require.NoError(o.t, err)
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true
	}
	require.Equal(o.t, http.StatusSeeOther, resp.StatusCode)
	require.True(o.t, strings.HasPrefix(resp.Header.Get("Location"), "/login"))
	return false
}

func pingStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestBrowserAccountAndKeys drives, in headless Chromium, a person's own
// account (changing the password, which needs the current one and signs
// out the other sessions; signing out everywhere) and the rotation of a
// monitor's ping key and of the project ping key, after which the old
// URLs answer 404 at once.
func TestBrowserAccountAndKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	srv, base := startDashboard(t, ctx, func(c *server.Config) { c.Ingest = ingest.Config{RateLimit: -1} })
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	const email, oldPassword, newPassword = "ada@example.com", "first-password-1", "second-password-2"
	addPerson(t, store, prj.ID, email, oldPassword)
	m := insertMonitor(t, store, prj.ID, "nightly-backup", nil)

	b := openBrowser(t, ctx, base, "UTC")
	// data-confirm asks with window.confirm; the person says yes.
	acceptConfirm := func() { b.eval(`window.confirm = () => true; ""`) }

	other := newOtherSession(t, base)
	require.True(t, other.signIn(email, oldPassword))
	require.True(t, other.signedIn())

	b.open("/", "Sign in to Vigil")
	b.fill("#email", email)
	b.fill("#password", oldPassword)
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="nightly-backup"]')`, 10*time.Second)

	// The account page, from the e-mail address in the top bar.
	b.click(`a.user[href="/account"]`)
	b.waitFor("the account page", `[...document.querySelectorAll("h1")].some(h => h.textContent.trim() === "Your account")`, 10*time.Second)
	b.checkLabels("the account page")
	b.screenshot("account")

	// A wrong current password changes nothing.
	b.fill("#current-password", "not-my-password")
	b.fill("#new-password", newPassword)
	b.fill("#new-password2", newPassword)
	b.click(`form[action="/account/password"] button[type="submit"]`)
	b.waitFor("the refusal", b.hasText("Current password: that is not your password."), 10*time.Second)
	require.True(t, other.signedIn(), "a refused change ends no session")

	// The new password twice, but differently.
	b.fill("#current-password", oldPassword)
	b.fill("#new-password", newPassword)
	b.fill("#new-password2", newPassword+"x")
	b.click(`form[action="/account/password"] button[type="submit"]`)
	b.waitFor("the mismatch", b.hasText("New password: the two entries differ."), 10*time.Second)

	b.fill("#current-password", oldPassword)
	b.fill("#new-password", newPassword)
	b.fill("#new-password2", newPassword)
	b.click(`form[action="/account/password"] button[type="submit"]`)
	b.waitFor("the change", b.hasText("Password changed. Every other session of your account is signed out."), 10*time.Second)
	require.False(t, other.signedIn(), "the other session ended")
	b.open("/", "Monitors") // this one stays
	require.False(t, newOtherSession(t, base).signIn(email, oldPassword), "the old password no longer signs in")
	require.True(t, other.signIn(email, newPassword), "the new one does")
	require.True(t, other.signedIn())

	// Rotating the monitor's ping key: the page warns, and the old URL
	// stops working at once.
	b.open("/monitors/"+m.ID, "nightly-backup")
	oldURL := b.eval(`document.querySelector("#ping-url").value`)
	require.Equal(t, base+"/ping/"+m.PingKey, oldURL)
	require.Equal(t, http.StatusOK, pingStatus(t, oldURL))
	require.Contains(t, b.eval(`document.querySelector('form[action$="/rotate-ping-key"]').textContent`), "stop working at once")
	acceptConfirm()
	b.click(`form[action="/monitors/` + m.ID + `/rotate-ping-key"] button[type="submit"]`)
	b.waitFor("the new ping URL", b.hasText("New ping URL. The old one now answers 404"), 10*time.Second)
	newURL := b.eval(`document.querySelector("#ping-url").value`)
	require.NotEqual(t, oldURL, newURL)
	require.Equal(t, http.StatusNotFound, pingStatus(t, oldURL))
	require.Equal(t, http.StatusOK, pingStatus(t, newURL))

	// Rotating the project ping key.
	b.open("/settings", "Project settings")
	oldKey := b.eval(`document.querySelector("#ping-key").value`)
	require.Equal(t, prj.PingKey, oldKey)
	require.Equal(t, http.StatusOK, pingStatus(t, base+"/ping/"+oldKey+"/nightly-backup"))
	acceptConfirm()
	b.click(`form[action="/settings/rotate-ping-key"] button[type="submit"]`)
	b.waitFor("the new key", b.hasText("New project ping key. Ping URLs with the old key now answer 404"), 10*time.Second)
	newKey := b.eval(`document.querySelector("#ping-key").value`)
	require.NotEqual(t, oldKey, newKey)
	require.Equal(t, http.StatusNotFound, pingStatus(t, base+"/ping/"+oldKey+"/nightly-backup"))
	require.Equal(t, http.StatusOK, pingStatus(t, base+"/ping/"+newKey+"/nightly-backup"))

	// Sign out everywhere ends this session and the other one.
	b.open("/account", "Your account")
	acceptConfirm()
	b.click(`form[action="/account/sign-out-everywhere"] button[type="submit"]`)
	b.waitFor("the sign-in page", `[...document.querySelectorAll("h1")].some(h => h.textContent.trim() === "Sign in to Vigil")`, 10*time.Second)
	require.False(t, other.signedIn(), "the other session ended too")
	b.run("reopen the account page", chromedp.Navigate(base+"/account"))
	b.waitFor("sent to sign in", `[...document.querySelectorAll("h1")].some(h => h.textContent.trim() === "Sign in to Vigil")`, 10*time.Second)
}
