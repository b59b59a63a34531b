package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// Password rules. bcrypt reads at most 72 bytes, so a longer password is
// refused rather than silently cut.
const (
	PasswordMinLength = 10
	PasswordMaxBytes  = 72
)

// HashPassword checks a new password against the rules and returns its
// bcrypt hash. Its errors are sentences to show to the person.
func HashPassword(password string) (string, error) {
	if err := CheckPassword(password); err != nil {
		return "", err
	}
	b, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return string(b), nil
}

// CheckPassword says why a new password is not acceptable, or returns nil.
func CheckPassword(password string) error {
	switch {
	case len([]rune(password)) < PasswordMinLength:
		return fmt.Errorf("the password must have at least %d characters", PasswordMinLength)
	case len(password) > PasswordMaxBytes:
		return fmt.Errorf("the password must be at most %d bytes long", PasswordMaxBytes)
	}
	return nil
}

// CheckEmail says why an email address is not acceptable, or returns nil.
func CheckEmail(email string) error {
	email = strings.TrimSpace(email)
	a, err := mail.ParseAddress(email)
	if err != nil || a.Address != email || len(email) > 254 {
		return fmt.Errorf("%q is not an email address", email)
	}
	return nil
}

// dummyHash is compared against when no account has the email given, so
// that a sign-in takes as long whether the account exists or not.
var dummyHash = sync.OnceValue(func() []byte {
	b, _ := bcrypt.GenerateFromPassword([]byte("no account has this password"), bcrypt.DefaultCost)
	return b
})

// viewer is the signed-in person of a request and the project they look at.
type viewer struct {
	User     *monitors.User
	Session  *monitors.Session
	Projects []*monitors.Project
	// Project is the current project; nil when the person is a member of
	// none.
	Project *monitors.Project
	Loc     *time.Location
	Now     time.Time
	// Until is the earliest instant after Now at which something drawn
	// for this request, as noted by changesAt, is drawn differently; zero
	// when nothing noted changes with time.
	Until time.Time
}

const viewerKey = "vigil.viewer"

func (h *Handler) sessionCookieName() string {
	if h.secure {
		return "__Host-vigil_session"
	}
	return "vigil_session"
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

// loadViewer returns the signed-in person of the request, or nil.
func (h *Handler) loadViewer(c echo.Context) (*viewer, error) {
	if v, ok := c.Get(viewerKey).(*viewer); ok {
		return v, nil
	}
	ck, err := c.Cookie(h.sessionCookieName())
	if err != nil || ck.Value == "" {
		return nil, nil
	}
	ctx := c.Request().Context()
	now := h.now()
	se, err := h.store.SessionGet(ctx, &monitors.SessionGetParams{TokenHash: hashToken(ck.Value), Now: now})
	if errors.Is(err, monitors.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := h.store.UserGet(ctx, se.UserID)
	if err != nil {
		return nil, err
	}
	if u.DisabledAt != nil || !now.Before(se.CreatedAt.Add(SessionMaxAge)) {
		// Disabling ends the sessions already; a session past its
		// absolute lifetime ends here, however recently it was used.
		if err := h.store.SessionDelete(ctx, se.TokenHash); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if se.ExpiresAt.Sub(now) < SessionLifetime-sessionRenewAfter {
		exp := now.Add(SessionLifetime)
		if maxExp := se.CreatedAt.Add(SessionMaxAge); exp.After(maxExp) {
			exp = maxExp
		}
		if err := h.store.SessionExtend(ctx, se.ID, exp); err != nil {
			return nil, err
		}
		se.ExpiresAt = exp
		h.setSessionCookie(c, ck.Value, exp)
	}
	projects, err := h.store.ProjectListByUser(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	v := &viewer{User: u, Session: se, Projects: projects, Loc: viewerZone(c), Now: now}
	if len(projects) > 0 {
		v.Project = projects[0]
		if pc, err := c.Cookie("vigil_project"); err == nil {
			for _, p := range projects {
				if p.ID == pc.Value {
					v.Project = p
				}
			}
		}
	}
	c.Set(viewerKey, v)
	return v, nil
}

// viewerZone is the browser's time zone, which app.js puts in a cookie;
// UTC until it has.
func viewerZone(c echo.Context) *time.Location {
	ck, err := c.Cookie("vigil_tz")
	if err != nil || ck.Value == "" || ck.Value == "Local" {
		return time.UTC
	}
	name, err := url.QueryUnescape(ck.Value)
	if err != nil {
		return time.UTC
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.UTC
	}
	return loc
}

// requireViewer lets signed-in people through, and checks the CSRF token
// of every request that changes state. Others are sent to the sign-in page.
func (h *Handler) requireViewer(next echo.HandlerFunc) echo.HandlerFunc {
	return h.signedIn(next, true)
}

// requireUser is requireViewer for pages of a person's own account, which
// need no project.
func (h *Handler) requireUser(next echo.HandlerFunc) echo.HandlerFunc {
	return h.signedIn(next, false)
}

func (h *Handler) signedIn(next echo.HandlerFunc, needProject bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		v, err := h.loadViewer(c)
		if err != nil {
			return h.wrap(func(echo.Context) error { return err })(c)
		}
		if v == nil {
			target := "/login"
			if c.Request().Method == http.MethodGet && !isHTMX(c) {
				target += "?next=" + urlQueryEscape(c.Request().URL.RequestURI())
			}
			return redirect(c, target)
		}
		if !safeMethod(c.Request().Method) && !h.csrfOK(c, v) {
			return h.renderError(c, http.StatusForbidden, "This form has expired or did not come from this page. Go back, reload the page and try again.")
		}
		if v.Project == nil && needProject {
			return h.render(c, http.StatusOK, "noproject", &page{Title: "No project", V: v})
		}
		return next(c)
	}
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// csrfOK checks the session's CSRF token in the form or the X-CSRF-Token
// header (htmx).
func (h *Handler) csrfOK(c echo.Context, v *viewer) bool {
	got := c.Request().Header.Get("X-CSRF-Token")
	if got == "" {
		got = c.FormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(v.Session.CSRFToken)) == 1
}

// setSessionCookie gives the browser the session's token until the
// session expires. Max-Age rather than Expires: the browser's clock need
// not agree with ours.
func (h *Handler) setSessionCookie(c echo.Context, token string, expires time.Time) {
	c.SetCookie(&http.Cookie{
		Name: h.sessionCookieName(), Value: token, Path: "/", MaxAge: int(expires.Sub(h.now()).Seconds()),
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode,
	})
}

func (h *Handler) setCookie(c echo.Context, name, value string, maxAge int) {
	c.SetCookie(&http.Cookie{
		Name: name, Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode,
	})
}

// startSession signs user in: a new session, and its cookie.
func (h *Handler) startSession(c echo.Context, u *monitors.User) error {
	ctx := c.Request().Context()
	now := h.now()
	// Sign-ins are rare, so they also clear out the expired sessions.
	if n, err := h.store.SessionDeleteExpired(ctx, now); err != nil {
		h.log.Warn("delete expired sessions", "err", err)
	} else if n > 0 {
		h.log.Debug("deleted expired sessions", "sessions", n)
	}
	token := randomToken()
	exp := now.Add(SessionLifetime)
	if _, err := h.store.SessionCreate(ctx, &monitors.SessionCreateParams{
		ID: keys.NewID(), UserID: u.ID, TokenHash: hashToken(token), CSRFToken: randomToken(), Now: now, ExpiresAt: exp,
	}); err != nil {
		return err
	}
	h.setSessionCookie(c, token, exp)
	return nil
}

type authForm struct {
	Email    string
	Next     string
	Error    string
	Setup    bool
	Token    string // the setup token, carried by the first-account form
	Projects string // the project the first account joins
}

// home is the front page: a page that says how to open the first-account
// form on a database without users, the sign-in page for strangers, and
// the monitor list for people signed in.
func (h *Handler) home(c echo.Context) error {
	v, err := h.loadViewer(c)
	if err != nil {
		return err
	}
	if v != nil {
		return h.requireViewer(h.monitorList)(c)
	}
	n, err := h.store.UserCount(c.Request().Context())
	if err != nil {
		return err
	}
	if n == 0 {
		return h.render(c, http.StatusOK, "setupneeded", &page{Title: "Set up Vigil"})
	}
	if isHTMX(c) {
		return redirect(c, "/login")
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// setupToken is the one-time token of /setup?token=. It opens the
// first-account form until an account is made with it; the server makes a
// new one at each start on a database without accounts.
type setupToken struct {
	mu    sync.Mutex
	token string
	used  bool
}

// valid reports, in constant time, whether got is the token and unused.
func (s *setupToken) valid(got string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token != "" && !s.used && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// use spends the token.
func (s *setupToken) use() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used = true
}

const setupTokenRefused = "This setup link is not valid: it has been used, or Vigil restarted and printed a new one. " +
	"Use the link that \"vigil serve\" printed last, or make an account with \"vigil users create\"."

const setupClosed = "An account exists already, so this form is closed. Sign in, or ask whoever runs this Vigil for an account."

// setupPage shows the first-account form to whoever has the setup token.
func (h *Handler) setupPage(c echo.Context) error {
	n, err := h.store.UserCount(c.Request().Context())
	if err != nil {
		return err
	}
	if n > 0 {
		return c.Redirect(http.StatusSeeOther, "/login")
	}
	token := c.QueryParam("token")
	if !h.setup.valid(token) {
		return h.renderError(c, http.StatusForbidden, setupTokenRefused)
	}
	return h.setupForm(c, &authForm{Setup: true, Token: token}, http.StatusOK)
}

func (h *Handler) setupForm(c echo.Context, f *authForm, status int) error {
	projects, err := h.store.ProjectList(c.Request().Context())
	if err != nil {
		return err
	}
	if len(projects) > 0 {
		f.Projects = projects[0].Name
	}
	return h.render(c, status, "setup", &page{Title: "Create the first account", Data: f})
}

// setupCreate creates the first account, which joins the first project.
// The rate limit runs first (middleware), then the token, then the check
// that no account exists, all before the password is hashed; the store
// checks again that there is no user in the same transaction as the
// insert.
func (h *Handler) setupCreate(c echo.Context) error {
	ctx := c.Request().Context()
	f := &authForm{Setup: true, Email: strings.TrimSpace(c.FormValue("email")), Token: c.FormValue("token")}
	if !h.setup.valid(f.Token) {
		return h.renderError(c, http.StatusForbidden, setupTokenRefused)
	}
	n, err := h.store.UserCount(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		return h.renderError(c, http.StatusConflict, setupClosed)
	}
	password := c.FormValue("password")
	switch {
	case CheckEmail(f.Email) != nil:
		f.Error = "Enter your email address, such as ada@example.com."
	case password != c.FormValue("password2"):
		f.Error = "The two passwords differ."
	}
	if f.Error == "" {
		if err := CheckPassword(password); err != nil {
			f.Error = capitalize(err.Error()) + "."
		}
	}
	if f.Error != "" {
		return h.setupForm(c, f, http.StatusUnprocessableEntity)
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	projects, err := h.store.ProjectList(ctx)
	if err != nil {
		return err
	}
	if len(projects) == 0 {
		p, err := h.store.ProjectCreate(ctx, &monitors.ProjectCreateParams{
			ID: keys.NewID(), Name: "Default", PingKey: keys.NewProjectPingKey(), Now: h.now()})
		if err != nil {
			return err
		}
		projects = append(projects, p)
	}
	u, err := h.store.UserCreate(ctx, &monitors.UserCreateParams{
		ID: keys.NewID(), Email: f.Email, PasswordHash: hash, ProjectIDs: []string{projects[0].ID},
		OnlyFirst: true, Now: h.now(),
	})
	if errors.Is(err, monitors.ErrConflict) {
		return h.renderError(c, http.StatusConflict, setupClosed)
	}
	if err != nil {
		return err
	}
	h.setup.use()
	h.log.Info("first account created", "user_id", u.ID, "project_id", projects[0].ID)
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return redirect(c, "/")
}

func (h *Handler) loginForm(c echo.Context) error {
	v, err := h.loadViewer(c)
	if err != nil {
		return err
	}
	next := safeNext(c.QueryParam("next"))
	if v != nil {
		return c.Redirect(http.StatusSeeOther, next)
	}
	n, err := h.store.UserCount(c.Request().Context())
	if err != nil {
		return err
	}
	if n == 0 {
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return h.render(c, http.StatusOK, "login", &page{Title: "Sign in", Data: &authForm{Next: next}})
}

func (h *Handler) login(c echo.Context) error {
	ctx := c.Request().Context()
	f := &authForm{Email: strings.TrimSpace(c.FormValue("email")), Next: safeNext(c.FormValue("next"))}
	password := c.FormValue("password")
	u, err := h.store.UserGetByEmail(ctx, f.Email)
	switch {
	case errors.Is(err, monitors.ErrNotFound):
		_ = bcrypt.CompareHashAndPassword(dummyHash(), []byte(password))
	case err != nil:
		return err
	}
	if u == nil || bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(password)) != nil {
		h.log.Info("sign-in refused", "remote_addr", c.Request().RemoteAddr)
		f.Error = "That email and password do not match an account."
		return h.render(c, http.StatusUnauthorized, "login", &page{Title: "Sign in", Data: f})
	}
	if u.DisabledAt != nil {
		h.log.Info("sign-in refused: the account is disabled", "user_id", u.ID, "remote_addr", c.Request().RemoteAddr)
		f.Error = "This account is disabled: ask whoever runs this Vigil to enable it."
		return h.render(c, http.StatusForbidden, "login", &page{Title: "Sign in", Data: f})
	}
	if err := h.startSession(c, u); err != nil {
		return err
	}
	return redirect(c, f.Next)
}

func (h *Handler) logout(c echo.Context) error {
	v, err := h.loadViewer(c)
	if err != nil {
		return err
	}
	if v != nil {
		if !h.csrfOK(c, v) {
			return h.renderError(c, http.StatusForbidden, "This form has expired or did not come from this page. Go back, reload the page and try again.")
		}
		if err := h.store.SessionDelete(c.Request().Context(), v.Session.TokenHash); err != nil {
			return err
		}
	}
	c.SetCookie(&http.Cookie{Name: h.sessionCookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: h.secure, SameSite: http.SameSiteLaxMode})
	return redirect(c, "/login")
}

// switchProject makes another of the viewer's projects the current one.
func (h *Handler) switchProject(c echo.Context) error {
	v := c.Get(viewerKey).(*viewer)
	id := c.FormValue("project")
	for _, p := range v.Projects {
		if p.ID == id {
			h.setCookie(c, "vigil_project", p.ID, int((365 * 24 * time.Hour).Seconds()))
			return redirect(c, "/")
		}
	}
	return monitors.ErrNotFound
}

// safeNext keeps a post-sign-in destination on this site: a path of its
// own, "/" otherwise. Browsers drop tabs and line breaks from URLs and read
// a backslash as a slash, so "/\t/evil.com" and "/\\evil.com" lead off
// the site as "//evil.com" would: any control character or backslash, a
// second leading slash, or anything that parses with a scheme or host is
// refused.
func safeNext(next string) string {
	if next == "" || next[0] != '/' || strings.HasPrefix(next, "//") || strings.ContainsRune(next, '\\') ||
		strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || unicode.IsSpace(r) }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return "/"
	}
	return next
}
