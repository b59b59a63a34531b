package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pageNames are the templates under templates/, each rendered inside
// layout.html, with partials.html available to all.
var pageNames = []string{
	"setup", "setupneeded", "login", "error", "noproject",
	"monitors", "monitor", "monitor_form", "preview",
	"channels", "channel_form", "keys", "settings", "account", "maintenance", "snooze_link",
	"statuspages", "statuspage_form",
	// statuspage is a whole document of its own, not inside the layout:
	// the public status page (statuspage.go).
	"statuspage",
}

// pages holds the parsed templates and the versions of the static files.
type pages struct {
	sets     map[string]*template.Template
	versions map[string]string // static file name → short content hash
	static   http.Handler
}

func parsePages() (*pages, error) {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	p := &pages{sets: make(map[string]*template.Template), versions: make(map[string]string)}
	err = fs.WalkDir(sub, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		p.versions[name] = hex.EncodeToString(sum[:6])
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	p.static = http.StripPrefix("/static/", http.FileServerFS(sub))

	funcs := template.FuncMap{
		"static":     func(name string) string { return "/static/" + name + "?v=" + p.versions[name] },
		"join":       strings.Join,
		"query":      url.QueryEscape,
		"upper":      capitalize,
		"add":        func(a, b int) int { return a + b },
		"hasChannel": func(ids []string, id string) bool { return slices.Contains(ids, id) },
	}
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, fmt.Errorf("web: parse layout: %w", err)
	}
	for _, name := range pageNames {
		t, err := base.Clone()
		if err != nil {
			return nil, fmt.Errorf("web: clone layout: %w", err)
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, fmt.Errorf("web: parse %s: %w", name, err)
		}
		p.sets[name] = t
	}
	return p, nil
}

// static serves the embedded assets. Their URLs carry a content hash
// (?v=), so they may be cached for long.
func (h *Handler) static(c echo.Context) error {
	name := strings.TrimPrefix(path.Clean("/"+c.Param("*")), "/")
	if _, ok := h.pages.versions[name]; !ok {
		return echo.NewHTTPError(http.StatusNotFound, "not found")
	}
	hd := c.Response().Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	if c.QueryParam("v") == h.pages.versions[name] {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	h.pages.static.ServeHTTP(c.Response(), c.Request())
	return nil
}

// page is what every template gets.
type page struct {
	Title string
	// Nav names the active item of the navigation.
	Nav   string
	V     *viewer
	Flash *flash
	// Refresh is how often live parts refresh, in seconds, for htmx.
	Refresh string
	Data    any
	// size is about how many bytes the page renders, when large.
	size int
}

// CSRF returns the session's CSRF token for forms.
func (p *page) CSRF() string {
	if p.V == nil || p.V.Session == nil {
		return ""
	}
	return p.V.Session.CSRFToken
}

// HXHeaders returns the hx-headers attribute value that sends the CSRF
// token with every htmx request.
func (p *page) HXHeaders() string {
	return fmt.Sprintf(`{"X-CSRF-Token": %q}`, p.CSRF())
}

// flash is a message shown once, on the page after a redirect.
type flash struct {
	Text  string
	Error bool
}

// flash shows msg on the next page.
func (h *Handler) flash(c echo.Context, msg string) { h.setFlash(c, "ok", msg) }

// flashError shows msg on the next page, as a problem.
func (h *Handler) flashError(c echo.Context, msg string) { h.setFlash(c, "error", msg) }

func (h *Handler) setFlash(c echo.Context, kind, msg string) {
	if len(msg) > 600 {
		msg = msg[:600] + "…"
	}
	h.setCookie(c, "vigil_flash", url.QueryEscape(kind+":"+msg), 60)
}

func (h *Handler) takeFlash(c echo.Context) *flash {
	ck, err := c.Cookie("vigil_flash")
	if err != nil || ck.Value == "" {
		return nil
	}
	h.setCookie(c, "vigil_flash", "", -1)
	msg, err := url.QueryUnescape(ck.Value)
	if err != nil {
		return nil
	}
	kind, text, _ := strings.Cut(msg, ":")
	return &flash{Text: text, Error: kind == "error"}
}

// render writes the page name inside the layout. It renders into a buffer
// first, so a template error never sends half a page.
func (h *Handler) render(c echo.Context, status int, name string, p *page) error {
	return h.execute(c, status, name, "layout.html", p)
}

// renderFragment writes one template of page name without the layout, for
// htmx.
func (h *Handler) renderFragment(c echo.Context, status int, name, fragment string, p *page) error {
	return h.execute(c, status, name, fragment, p)
}

func (h *Handler) execute(c echo.Context, status int, name, tmpl string, p *page) error {
	if p.V == nil {
		if v, ok := c.Get(viewerKey).(*viewer); ok {
			p.V = v
		}
	}
	if tmpl == "layout.html" {
		p.Flash = h.takeFlash(c)
	}
	b, err := h.executeBytes(name, tmpl, p, p.size)
	if err != nil {
		return err
	}
	return c.HTMLBlob(status, b)
}

// refreshAttr is the refresh interval as htmx's "every" takes it.
func (h *Handler) refreshAttr() string { return fmt.Sprintf("%gs", h.refresh.Seconds()) }

// executeBytes renders template tmpl of page name into memory, in a
// buffer of size bytes to begin with (about what it renders, so that
// a large page is not copied as it grows; 0 for a small one).
func (h *Handler) executeBytes(name, tmpl string, p *page, size int) ([]byte, error) {
	set, ok := h.pages.sets[name]
	if !ok {
		return nil, fmt.Errorf("web: no page %q", name)
	}
	p.Refresh = h.refreshAttr()
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if err := set.ExecuteTemplate(buf, tmpl, p); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// renderError writes an error page with a sentence saying what happened.
func (h *Handler) renderError(c echo.Context, status int, msg string) error {
	if isHTMX(c) {
		// htmx swaps nothing on an error status; show the message where
		// the request asked for, through the error fragment.
		c.Response().Header().Set("HX-Reswap", "none")
	}
	p := &page{Title: http.StatusText(status), Data: struct {
		Status int
		Text   string
	}{status, msg}}
	if v, ok := c.Get(viewerKey).(*viewer); ok {
		p.V = v
	}
	return h.render(c, status, "error", p)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }
