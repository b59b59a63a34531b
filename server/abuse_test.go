package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// The abuse suite: what a stranger on the internet can send a Vigil, tried
// against a real server (real HTTP on loopback) on each store. Every case
// must get a clear 4xx or a bounded answer; /healthz must answer within a
// second all along; nothing half-written may remain (each case checks the
// database); and no secret of the server (API keys, ping keys, channel
// secrets, the setup token) may appear in any answer or log line.
//
// The rows of abuseCases run in order on one server per store, each from
// a client address of its own (the server trusts loopback as a proxy, so
// X-Forwarded-For names the client), so that one row's rate limits do not
// reach the next. A row for a new attack is one more entry: register the
// secrets it creates with e.secret, send requests with e.do or e.raw, and
// check the database through e.store.

// abuseTimeouts are the route deadlines of the suite's server: short, so
// that slow bodies are cut off quickly.
var abuseTimeouts = server.HTTPTimeouts{
	Ping: server.RouteTimeout{Read: 700 * time.Millisecond, Write: 5 * time.Second},
	Web:  server.RouteTimeout{Read: 700 * time.Millisecond, Write: 5 * time.Second},
	API:  server.RouteTimeout{Read: 700 * time.Millisecond, Write: 10 * time.Second},
}

// abuseEnv is the server under attack.
type abuseEnv struct {
	t       *testing.T
	srv     *server.Server
	store   monitors.Store
	base    string
	key     string // read-write admin key
	roKey   string // read-only key of the same project
	project *monitors.Project
	monitor *monitors.Monitor // one monitor, with its ping key
	client  string            // the client address of the current row
	dbURL   string            // the database, for reading raw rows

	mu      sync.Mutex
	secrets []string // must appear in no answer and no log line
	logSafe []string // may appear in an answer to its holder, never in a log line
}

// abuseCase is one row of the suite.
type abuseCase struct {
	name string
	run  func(t *testing.T, e *abuseEnv)
}

func (e *abuseEnv) secret(s ...string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.secrets = append(e.secrets, s...)
}

// answer is what the server answered.
type answer struct {
	status int
	header http.Header
	body   string
	took   time.Duration
}

// do sends a request from the row's client address; body is JSON for the
// API (a value) or a form (url.Values) or raw text (string). Every answer
// is checked for secrets.
func (e *abuseEnv) do(t *testing.T, method, path, key string, body any, hdr ...string) answer {
	t.Helper()
	var r io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		r, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case string:
		r, ctype = strings.NewReader(b), "text/plain"
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		r, ctype = bytes.NewReader(raw), "application/json"
	}
	req, err := http.NewRequest(method, e.base+path, r)
	require.NoError(t, err)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("X-Forwarded-For", e.client)
	req.Header.Set("Origin", e.base) // the dashboard refuses cross-origin posts
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	start := time.Now()
	resp, err := noRedirects.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, header: resp.Header, body: string(raw), took: time.Since(start)}
	e.checkNoSecret(t, fmt.Sprintf("answer to %s %s", method, path), a.body+fmt.Sprint(a.header), false)
	return a
}

var noRedirects = &http.Client{
	Timeout:       20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// raw writes head (a request line and headers, without the final blank
// line) and then body slowly, a byte every gap, and returns what the
// server sent back and how long until it answered or closed.
func (e *abuseEnv) raw(t *testing.T, head string, body []byte, gap time.Duration) (string, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = io.WriteString(conn, head+"X-Forwarded-For: "+e.client+"\r\n\r\n")
	require.NoError(t, err)
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(bufio.NewReader(conn))
		done <- string(b)
	}()
	for _, c := range body {
		select {
		case got := <-done:
			return got, time.Since(start)
		case <-time.After(gap):
		}
		if _, err := conn.Write([]byte{c}); err != nil {
			break
		}
	}
	select {
	case got := <-done:
		return got, time.Since(start)
	case <-time.After(15 * time.Second):
		t.Fatalf("no answer to a slow request after 15s")
		return "", 0
	}
}

func (e *abuseEnv) checkNoSecret(t *testing.T, where, text string, log bool) {
	t.Helper()
	e.mu.Lock()
	secrets := append([]string(nil), e.secrets...)
	if log {
		secrets = append(secrets, e.logSafe...)
	}
	e.mu.Unlock()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s holds a secret (%.6s…)", where, s)
		}
	}
}

// channels counts the project's channels.
func (e *abuseEnv) channels(t *testing.T) int {
	t.Helper()
	chs, err := e.store.ChannelList(context.Background(), &monitors.ChannelListParams{ProjectID: e.project.ID, Limit: 1000})
	require.NoError(t, err)
	return len(chs)
}

func (e *abuseEnv) users(t *testing.T) int {
	t.Helper()
	n, err := e.store.UserCount(context.Background())
	require.NoError(t, err)
	return n
}

// adversarialTemplates are those of the webhook package's tests.
func adversarialTemplates(t *testing.T) []struct{ Name, Template, Refusal string } {
	t.Helper()
	raw, err := os.ReadFile("../notifiers/webhook/testdata/adversarial_templates.json")
	require.NoError(t, err)
	var out []struct{ Name, Template, Refusal string }
	require.NoError(t, json.Unmarshal(raw, &out))
	require.NotEmpty(t, out)
	return out
}

const abusePassword = "a long password 42"

var abuseCases = []abuseCase{
	{"setup without the token", func(t *testing.T, e *abuseEnv) {
		r := e.do(t, http.MethodGet, "/", "", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, r.body, `name="password"`, "the front page offers no form")
		for _, path := range []string{"/setup", "/setup?token=", "/setup?token=guess", "/setup?token=" + url.QueryEscape(e.srv.SetupToken[:20])} {
			require.Equal(t, http.StatusForbidden, e.do(t, http.MethodGet, path, "", nil).status, path)
		}
		for _, token := range []string{"", "guess", e.srv.SetupToken + "x"} {
			r := e.do(t, http.MethodPost, "/setup", "", url.Values{"token": {token}, "email": {"eve@example.com"},
				"password": {abusePassword}, "password2": {abusePassword}})
			require.Equal(t, http.StatusForbidden, r.status)
		}
		require.Zero(t, e.users(t), "no account was made")
	}},
	{"setup attempts are limited before hashing", func(t *testing.T, e *abuseEnv) {
		form := url.Values{"token": {"guess"}, "email": {"eve@example.com"}, "password": {abusePassword}, "password2": {abusePassword}}
		start := time.Now()
		limited := 0
		for range 40 {
			if e.do(t, http.MethodPost, "/setup", "", form).status == http.StatusTooManyRequests {
				limited++
			}
		}
		require.GreaterOrEqual(t, limited, 25, "past the burst, every attempt is refused")
		// 40 bcrypt hashes would take seconds; refusals take none.
		require.Less(t, time.Since(start), 3*time.Second)
		form.Set("token", e.srv.SetupToken)
		r := e.do(t, http.MethodPost, "/setup", "", form)
		require.Equal(t, http.StatusTooManyRequests, r.status, "even the right token waits")
		require.NotEmpty(t, r.header.Get("Retry-After"))
		require.Zero(t, e.users(t))
	}},
	{"oversized and slow setup forms", func(t *testing.T, e *abuseEnv) {
		big := url.Values{"token": {e.srv.SetupToken}, "email": {strings.Repeat("a", web.FormBodyLimit)}}
		require.Equal(t, http.StatusRequestEntityTooLarge, e.do(t, http.MethodPost, "/setup", "", big).status)
		got, took := e.raw(t, "POST /setup HTTP/1.1\r\nHost: vigil\r\nOrigin: "+e.base+
			"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 400\r\n", bytes.Repeat([]byte("a"), 400), 200*time.Millisecond)
		require.Less(t, took, abuseTimeouts.Web.Read+3*time.Second, "a slow body is cut off")
		require.NotContains(t, got, "HTTP/1.1 303", "no account from a body that never arrived")
		require.Zero(t, e.users(t))
	}},
	{"setup with the token makes one account", func(t *testing.T, e *abuseEnv) {
		r := e.do(t, http.MethodGet, "/setup?token="+url.QueryEscape(e.srv.SetupToken), "", nil)
		require.Equal(t, http.StatusOK, r.status)
		form := url.Values{"token": {e.srv.SetupToken}, "email": {"ada@example.com"}, "password": {abusePassword}, "password2": {abusePassword}}
		r = e.do(t, http.MethodPost, "/setup", "", form)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		require.Equal(t, 1, e.users(t))
		form.Set("email", "eve@example.com")
		require.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/setup", "", form).status, "the token is spent")
		require.Equal(t, 1, e.users(t))
		// vigil users create keeps working: it writes through the store.
		hash, err := web.HashPassword(abusePassword)
		require.NoError(t, err)
		_, err = e.store.UserCreate(context.Background(), &monitors.UserCreateParams{ID: keys.NewID(), Email: "bo@example.com",
			PasswordHash: hash, ProjectIDs: []string{e.project.ID}, Now: time.Now()})
		require.NoError(t, err)
	}},
	{"sign-in next leads only to this site", func(t *testing.T, e *abuseEnv) {
		for _, next := range []string{"/\t/evil.com", "//evil.com", "/\\evil.com", "https://evil.com", "/\n/evil.com", "/%09/evil.com"} {
			r := e.do(t, http.MethodPost, "/login", "", url.Values{"email": {"ada@example.com"}, "password": {abusePassword}, "next": {next}})
			require.Equal(t, http.StatusSeeOther, r.status, r.body)
			// As a browser reads it: tabs and line breaks dropped,
			// backslashes as slashes.
			loc := strings.NewReplacer("\t", "", "\n", "", "\r", "", "\\", "/").Replace(r.header.Get("Location"))
			u, err := url.Parse(loc)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(loc, "/") && !strings.HasPrefix(loc, "//") && u.Host == "", "next %q led to %q", next, loc)
		}
		r := e.do(t, http.MethodGet, "/login?next=/%09/evil.com", "", nil)
		require.Equal(t, http.StatusOK, r.status)
		require.NotContains(t, r.body, "evil.com", "the sign-in form does not carry it")
	}},
	{"oversized and slow dashboard forms", func(t *testing.T, e *abuseEnv) {
		big := url.Values{"email": {"ada@example.com"}, "password": {strings.Repeat("p", 2*web.FormBodyLimit)}}
		r := e.do(t, http.MethodPost, "/login", "", big)
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		got, took := e.raw(t, "POST /login HTTP/1.1\r\nHost: vigil\r\nOrigin: "+e.base+
			"\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 300\r\n", bytes.Repeat([]byte("a"), 300), 200*time.Millisecond)
		require.Less(t, took, abuseTimeouts.Web.Read+3*time.Second)
		require.NotContains(t, got, "Set-Cookie: vigil_session")
	}},
	{"adversarial webhook templates", func(t *testing.T, e *abuseEnv) {
		before := e.channels(t)
		for _, c := range adversarialTemplates(t) {
			r := e.do(t, http.MethodPost, "/api/v1/channels", e.key, map[string]any{"kind": "webhook", "name": "evil",
				"config": map[string]any{"url": "https://hooks.example.com/in", "template": c.Template}})
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", c.Name, r.body)
			var apiErr struct{ Error, Field string }
			require.NoError(t, json.Unmarshal([]byte(r.body), &apiErr))
			require.Regexp(t, c.Refusal, apiErr.Error, c.Name)
			require.Equal(t, "config.template", apiErr.Field, c.Name)
			require.Less(t, r.took, 3*time.Second, c.Name)
		}
		require.Equal(t, before, e.channels(t), "no channel was stored")
	}},
	{"a template quiet on the sample is bounded on test and send", func(t *testing.T, e *abuseEnv) {
		// The samples tried on save are of a monitor named "sample"; a
		// test notification is named after its channel.
		grow := `{{$a := .Headline}}` + strings.Repeat(`{{$a = print $a $a}}`, 40) + `{{$a}}`
		r := e.do(t, http.MethodPost, "/api/v1/channels", e.key, map[string]any{"kind": "webhook", "name": "quiet",
			"config": map[string]any{"url": "https://hooks.example.com/in", "template": `{{if ne .Monitor.Name "sample"}}` + grow + `{{end}}ok`}})
		require.Equal(t, http.StatusCreated, r.status, r.body)
		var ch struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(r.body), &ch))
		r = e.do(t, http.MethodPost, "/api/v1/channels/"+ch.ID+"/test", e.key, nil)
		require.Equal(t, http.StatusBadGateway, r.status, r.body)
		require.Contains(t, r.body, "its functions produce more than")
		require.Less(t, r.took, 3*time.Second)
		require.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/api/v1/channels/"+ch.ID, e.key, nil).status)
	}},
	{"read-only keys see no ping key", func(t *testing.T, e *abuseEnv) {
		r := e.do(t, http.MethodPost, "/api/v1/channels", e.key, map[string]any{"kind": "webhook", "name": "with token",
			"config": map[string]any{"url": "https://hooks.example.com/in/path-token-8c1f?key=query-token-77d2",
				"secret": "webhook-signing-secret-5e0a", "headers": map[string]string{"Authorization": "Bearer header-token-a41b"}}})
		require.Equal(t, http.StatusCreated, r.status, r.body)
		e.secret("webhook-signing-secret-5e0a", "header-token-a41b")
		readOnly := []string{e.monitor.PingKey, e.project.PingKey, "path-token-8c1f", "query-token-77d2"}
		for _, path := range []string{"/api/v1/monitors", "/api/v1/monitors/" + e.monitor.ID, "/api/v1/project", "/api/v1/channels"} {
			r := e.do(t, http.MethodGet, path, e.roKey, nil)
			require.Equal(t, http.StatusOK, r.status, path)
			for _, s := range readOnly {
				require.NotContains(t, r.body, s, path)
			}
		}
		r = e.do(t, http.MethodGet, "/api/v1/monitors/"+e.monitor.ID, e.roKey, nil)
		require.Contains(t, r.body, keys.UniqueKey(e.monitor.ID))
		r = e.do(t, http.MethodPost, "/api/v1/monitors", e.roKey, map[string]any{"name": "by-ro"})
		require.Equal(t, http.StatusForbidden, r.status)
	}},
	{"channels cannot reach internal addresses, and errors do not name them", func(t *testing.T, e *abuseEnv) {
		recv := notifiertest.NewReceiver(t, nil)
		_, port, _ := net.SplitHostPort(recv.Listener.Addr().String())
		for _, target := range []string{recv.URL + "/hook", "http://localhost:" + port + "/hook", "http://169.254.169.254/latest/meta-data/",
			"http://[::1]:" + port + "/", "http://198.18.0.1/", "http://[fd00:ec2::254]/"} {
			r := e.do(t, http.MethodPost, "/api/v1/channels", e.key, map[string]any{"kind": "webhook", "name": "internal",
				"config": map[string]any{"url": target}})
			if r.status == http.StatusBadRequest {
				continue
			}
			require.Equal(t, http.StatusCreated, r.status, r.body)
			var ch struct{ ID string }
			require.NoError(t, json.Unmarshal([]byte(r.body), &ch))
			r = e.do(t, http.MethodPost, "/api/v1/channels/"+ch.ID+"/test", e.key, nil)
			require.GreaterOrEqual(t, r.status, 400, "%s: %d %s", target, r.status, r.body)
			require.Less(t, r.took, 5*time.Second, target)
			for _, addr := range []string{"127.0.0.1", "169.254.169.254", "::1", "198.18.0.1", "fd00:ec2::254"} {
				require.NotContains(t, r.body, addr, target)
			}
			require.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/api/v1/channels/"+ch.ID, e.key, nil).status)
		}
		require.Empty(t, recv.Requests(), "no request reached the internal receiver")
	}},
	{"made-up ping keys from one address", func(t *testing.T, e *abuseEnv) {
		limited := 0
		for range 30 {
			r := e.do(t, http.MethodGet, "/ping/"+keys.NewPingKey(), "", nil)
			switch r.status {
			case http.StatusNotFound:
			case http.StatusTooManyRequests:
				limited++
				require.NotEmpty(t, r.header.Get("Retry-After"))
			default:
				t.Fatalf("made-up key: %d %s", r.status, r.body)
			}
		}
		require.GreaterOrEqual(t, limited, 20)
		require.Equal(t, http.StatusTooManyRequests, e.do(t, http.MethodGet, "/ping/"+e.monitor.PingKey, "", nil).status,
			"the address is refused whole, before any lookup")
		e.client = "203.0.113.250"
		require.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/ping/"+e.monitor.PingKey, "", nil).status, "another address is not")
	}},
	{"bad ping URLs and queries", func(t *testing.T, e *abuseEnv) {
		for _, path := range []string{"/ping/x/y/z/w", "/ping/" + e.monitor.PingKey + "?rid=" + strings.Repeat("r", 5000),
			"/ping/" + e.monitor.PingKey + "/99999", "/ping/" + e.project.PingKey + "/" + strings.Repeat("s", 300) + "?create=1"} {
			r := e.do(t, http.MethodGet, path, "", nil)
			require.True(t, r.status >= 400 && r.status < 500, "%s: %d", path, r.status)
		}
	}},
	{"oversized and slow ping bodies", func(t *testing.T, e *abuseEnv) {
		before, err := e.store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: e.project.ID, MonitorID: e.monitor.ID, Limit: 1000})
		require.NoError(t, err)
		got, _ := e.raw(t, "POST /ping/"+e.monitor.PingKey+" HTTP/1.1\r\nHost: vigil\r\nConnection: close\r\nContent-Length: 104857600\r\n", nil, 0)
		require.Contains(t, got, "413")
		got, took := e.raw(t, "POST /ping/"+e.monitor.PingKey+" HTTP/1.1\r\nHost: vigil\r\nContent-Length: 500\r\n",
			bytes.Repeat([]byte("b"), 500), 200*time.Millisecond)
		require.Less(t, took, abuseTimeouts.Ping.Read+3*time.Second, "a slow body is cut off")
		require.NotContains(t, got, "200 OK")
		after, err := e.store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: e.project.ID, MonitorID: e.monitor.ID, Limit: 1000})
		require.NoError(t, err)
		require.Equal(t, len(before), len(after), "no ping from a body that never arrived")
	}},
	{"oversized and slow API bodies", func(t *testing.T, e *abuseEnv) {
		r := e.do(t, http.MethodPost, "/api/v1/monitors", e.key, `{"name": "`+strings.Repeat("n", 2<<20)+`"}`,
			"Content-Type", "application/json")
		require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
		_, took := e.raw(t, "POST /api/v1/monitors HTTP/1.1\r\nHost: vigil\r\nAuthorization: Bearer "+e.key+
			"\r\nContent-Type: application/json\r\nContent-Length: 300\r\n", bytes.Repeat([]byte(" "), 300), 200*time.Millisecond)
		require.Less(t, took, abuseTimeouts.API.Read+3*time.Second)
		ms, err := e.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: e.project.ID, Now: time.Now()})
		require.NoError(t, err)
		require.Len(t, ms, 1, "only the suite's own monitor")
	}},
	{"moving a channel forgets its secrets", func(t *testing.T, e *abuseEnv) {
		const secret, header = "moved-signing-secret-3f9c", "Bearer moved-header-token-b27e"
		e.secret(secret, header)
		r := e.do(t, http.MethodPost, "/api/v1/channels", e.key, map[string]any{"kind": "webhook", "name": "to be moved",
			"config": map[string]any{"url": "https://hooks.example.com/owner", "secret": secret, "headers": map[string]string{"Authorization": header}}})
		require.Equal(t, http.StatusCreated, r.status, r.body)
		var ch struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(r.body), &ch))
		r = e.do(t, http.MethodPatch, "/api/v1/channels/"+ch.ID, e.key, map[string]any{"config": map[string]any{"url": "https://evil.example.com/steal"}})
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `"secrets_forgotten":["secret","headers"]`)
		stored, err := e.store.ChannelGet(context.Background(), e.project.ID, ch.ID)
		require.NoError(t, err)
		require.NotContains(t, string(stored.Config), "moved-", "nothing of the old secrets follows the channel")
	}},
	{"channel secrets are encrypted in the database", func(t *testing.T, e *abuseEnv) {
		const secret, header, token = "at-rest-signing-secret-71d2", "Bearer at-rest-header-5c0e", "at-rest-ntfy-token-9a4b"
		e.secret(secret, header, token)
		for _, body := range []map[string]any{
			{"kind": "webhook", "name": "at rest", "config": map[string]any{"url": "https://hooks.example.com/rest", "secret": secret,
				"headers": map[string]string{"Authorization": header}}},
			{"kind": "ntfy", "name": "at rest ntfy", "config": map[string]any{"url": "https://ntfy.example.com/topic-at-rest", "token": token}},
		} {
			r := e.do(t, http.MethodPost, "/api/v1/channels", e.key, body)
			require.Equal(t, http.StatusCreated, r.status, r.body)
		}
		raw := rawConfigs(t, e.dbURL)
		for _, s := range []string{secret, header, token, "topic-at-rest", "hooks.example.com"} {
			require.NotContains(t, raw, s, "the database holds no channel secret or URL in plain text")
		}
		require.Contains(t, raw, `"$sealed"`)
	}},
	{"password changes are limited before hashing", func(t *testing.T, e *abuseEnv) {
		r := e.do(t, http.MethodPost, "/login", "", url.Values{"email": {"ada@example.com"}, "password": {abusePassword}})
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		var cookie string
		for _, c := range (&http.Response{Header: r.header}).Cookies() {
			if c.Name == "vigil_session" {
				cookie = c.Name + "=" + c.Value
			}
		}
		require.NotEmpty(t, cookie)
		e.secret(strings.TrimPrefix(cookie, "vigil_session="))
		page := e.do(t, http.MethodGet, "/account", "", nil, "Cookie", cookie)
		require.Equal(t, http.StatusOK, page.status)
		m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page.body)
		require.NotNil(t, m)
		form := url.Values{"csrf": {m[1]}, "current_password": {"a guess at it 1"}, "new_password": {"taken over 12345"},
			"new_password2": {"taken over 12345"}}
		noCSRF := url.Values{"current_password": {abusePassword}, "new_password": {"taken over 12345"}, "new_password2": {"taken over 12345"}}
		require.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/account/password", "", noCSRF, "Cookie", cookie).status,
			"a form without the session's CSRF token")
		require.Equal(t, http.StatusSeeOther, e.do(t, http.MethodPost, "/account/password", "", form).status, "without a session: to sign in")
		start := time.Now()
		limited := 0
		for range 40 {
			switch got := e.do(t, http.MethodPost, "/account/password", "", form, "Cookie", cookie).status; got {
			case http.StatusTooManyRequests:
				limited++
			case http.StatusUnauthorized:
			default:
				t.Fatalf("a wrong current password answered %d", got)
			}
		}
		require.GreaterOrEqual(t, limited, 25, "past the burst, every guess is refused")
		require.Less(t, time.Since(start), 15*time.Second)
		u, err := e.store.UserGetByEmail(context.Background(), "ada@example.com")
		require.NoError(t, err)
		require.NoError(t, bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte(abusePassword)), "the password is unchanged")
	}},
}

// syncBuffer collects log lines from every goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAbuse(t *testing.T) {
	t.Parallel()
	for name, dbURL := range map[string]func(testing.TB) string{
		"sqlite":   func(tb testing.TB) string { return testdb.SQLitePath(tb) },
		"postgres": testdb.PostgresURL,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runAbuse(t, dbURL(t))
		})
	}
}

func runAbuse(t *testing.T, dbURL string) {
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	cfg := testConfig(dbURL)
	cfg.HTTPTimeouts = abuseTimeouts
	cfg.Ingest.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	cfg.Ingest.FailureLimit, cfg.Ingest.FailureBurst = 0.1, 5
	cfg.LogLevel = "debug"
	srv, err := server.New(ctx, cfg, slog.New(slog.NewTextHandler(io.MultiWriter(logs, t.Output()), &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()

	e := &abuseEnv{t: t, srv: srv, store: srv.Store(), base: "http://" + srv.Addr(), key: srv.Bootstrapped.APIKey,
		project: srv.Bootstrapped.Project, dbURL: dbURL}
	e.roKey = readOnlyKey(t, e.store, e.project.ID)
	e.monitor = storeMonitor(t, e.store, e.project.ID)
	e.secret(e.key, e.roKey)
	// The keys of the secret key file never appear either.
	keyFile, err := server.SecretKeyFile(dbURL, cfg.SecretKeyFile)
	require.NoError(t, err)
	keyText, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	for _, line := range strings.Split(string(keyText), "\n") {
		if f := strings.Fields(line); len(f) == 2 && !strings.HasPrefix(line, "#") {
			e.secret(f[1])
		}
	}
	e.logSafe = append(e.logSafe, srv.SetupToken, e.project.PingKey, e.monitor.PingKey)

	// /healthz must answer within a second all along.
	watchCtx, stopWatch := context.WithCancel(ctx)
	var slowest time.Duration
	var healthErr error
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		client := &http.Client{Timeout: 2 * time.Second}
		for watchCtx.Err() == nil {
			start := time.Now()
			resp, err := client.Get(e.base + "/healthz")
			took := time.Since(start)
			if err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil && watchCtx.Err() == nil && healthErr == nil {
				healthErr = err
			}
			slowest = max(slowest, took)
			select {
			case <-watchCtx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()

	for i, c := range abuseCases {
		e.client = fmt.Sprintf("198.51.100.%d", i+1)
		t.Run(c.name, func(t *testing.T) { c.run(t, e) })
	}
	stopWatch()
	<-watched
	require.NoError(t, healthErr, "/healthz failed during the suite")
	require.Less(t, slowest, time.Second, "/healthz answered within a second throughout")
	e.checkNoSecret(t, "the server's log", logs.String(), true)
}

// readOnlyKey makes a read-only API key of the project, as vigil keys
// create --read-only does.
func readOnlyKey(t *testing.T, store monitors.Store, projectID string) string {
	t.Helper()
	key, prefix, hash := keys.NewAPIKey()
	_, err := store.APIKeyCreate(context.Background(), &monitors.APIKeyCreateParams{ID: keys.NewID(), ProjectID: projectID,
		Name: "read-only", Prefix: prefix, Hash: hash, ReadOnly: true, Now: time.Now()})
	require.NoError(t, err)
	return key
}

// storeMonitor makes one monitor with a ping key, as the API would.
func storeMonitor(t *testing.T, store monitors.Store, projectID string) *monitors.Monitor {
	t.Helper()
	return storetest.MustMonitor(t, store, projectID, "nightly", func(m *monitors.Monitor) { m.PingKey = keys.NewPingKey() })
}
