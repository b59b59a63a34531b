package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
)

// The test binary doubles as the command that vigil run wraps: with
// VIGIL_TEST_CHILD set it acts as that command and never runs the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("VIGIL_TEST_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	goleak.VerifyTestMain(m)
}

func child(mode string) int {
	switch mode {
	case "ok":
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		return 0
	case "exit3":
		fmt.Println("failing")
		return 3
	case "big":
		for i := range 1000 {
			fmt.Printf("line %04d\n", i)
		}
		return 1
	case "echo":
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(os.Stdin)
		fmt.Print("got: " + buf.String())
		return 0
	case "kill9":
		fmt.Println("about to die")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute) // never reached: SIGKILL cannot be caught
		return 0
	case "trap", "trap0", "plain":
		// Announce readiness, then wait for SIGTERM.
		sigs := make(chan os.Signal, 1)
		if mode != "plain" {
			signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
		}
		fmt.Println("ready")
		select {
		case s := <-sigs:
			fmt.Println("got", s)
			if mode == "trap0" {
				return 0
			}
			return 1
		case <-time.After(time.Minute):
			return 9
		}
	}
	return 99
}

type testBundle struct {
	srv            *vigiltest.Server
	key            string
	stdout, stderr *bytes.Buffer
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	b := &testBundle{srv: vigiltest.New(t), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
	b.key = b.srv.AddMonitor()
	return b
}

// env makes vigil run's environment from vars.
func (b *testBundle) env(vars map[string]string) func(string) string {
	return func(name string) string {
		if v, ok := vars[name]; ok {
			return v
		}
		return ""
	}
}

func (b *testBundle) args(flags ...string) []string {
	t := append([]string{"--url", b.srv.URL(), "--key", b.key}, flags...)
	return append(t, "--", os.Args[0], "-test.run=^$")
}

func (b *testBundle) main(t *testing.T, mode string, args []string, env map[string]string, stdin string) int {
	t.Helper()
	t.Setenv("VIGIL_TEST_CHILD", mode) // inherited by the command only
	cfgEnv := b.env(env)
	cfg, err := parse(args, cfgEnv, b.stderr)
	require.NoError(t, err)
	return run(context.Background(), cfg, nil, strings.NewReader(stdin), b.stdout, b.stderr)
}

func TestRunSuccessPassesOutputThrough(t *testing.T) {
	b := setup(t)
	code := b.main(t, "ok", b.args(), nil, "")
	require.Equal(t, 0, code)
	require.Equal(t, "to stdout\n", b.stdout.String())
	require.Equal(t, "to stderr\n", b.stderr.String())

	pings := b.srv.Pings()
	require.Len(t, pings, 2)
	require.Equal(t, "/ping/"+b.key+"/start", pings[0].Path)
	require.Equal(t, "/ping/"+b.key+"/0", pings[1].Path)
	require.Regexp(t, `^[0-9a-f-]{36}$`, pings[0].RID())
	require.Equal(t, pings[0].RID(), pings[1].RID())
	require.Equal(t, []string{"rid"}, keys(pings[0].Query))
	require.Equal(t, []string{"duration_ms", "rid"}, keys(pings[1].Query))
	ms, err := strconv.Atoi(pings[1].DurationMS())
	require.NoError(t, err)
	require.Positive(t, ms)
	require.Contains(t, pings[1].Body, "to stdout\n")
	require.Contains(t, pings[1].Body, "to stderr\n")
}

func keys(q map[string][]string) []string {
	var out []string
	for k := range q {
		out = append(out, k)
	}
	if len(out) == 2 && out[0] > out[1] {
		out[0], out[1] = out[1], out[0]
	}
	return out
}

func TestRunSendsScheduledAt(t *testing.T) {
	b := setup(t)
	require.Equal(t, 3, b.main(t, "exit3", b.args("--scheduled-at", "2026-03-02T03:00:00+01:00"), nil, ""))
	pings := b.srv.Pings()
	require.Len(t, pings, 2)
	for _, p := range pings {
		require.Equal(t, "2026-03-02T02:00:00Z", p.Query.Get("scheduled_at"), p.Path)
	}
	b = setup(t)
	require.Equal(t, 0, b.main(t, "ok", b.args(), map[string]string{"VIGIL_SCHEDULED_AT": "2026-03-02T02:00:00Z"}, ""))
	require.Equal(t, "2026-03-02T02:00:00Z", b.srv.Pings()[0].Query.Get("scheduled_at"))
}

func TestRunReportsExitCodeAndTail(t *testing.T) {
	b := setup(t)
	require.Equal(t, 3, b.main(t, "exit3", b.args(), nil, ""))
	pings := b.srv.Pings()
	require.Equal(t, "/ping/"+b.key+"/3", pings[1].Path)
	require.Equal(t, "failing\n", pings[1].Body)

	b = setup(t)
	require.Equal(t, 1, b.main(t, "big", b.args("--tail", "20"), nil, ""))
	pings = b.srv.Pings()
	require.Equal(t, "/ping/"+b.key+"/1", pings[1].Path)
	require.Equal(t, "line 0998\nline 0999\n", pings[1].Body, "the end of the output")
	require.Len(t, b.stdout.String(), 10000, "all of it still goes to stdout")
}

func TestRunPassesStdin(t *testing.T) {
	b := setup(t)
	require.Equal(t, 0, b.main(t, "echo", b.args(), nil, "hello\n"))
	require.Equal(t, "got: hello\n", b.stdout.String())
}

func TestRunKilledBySignal(t *testing.T) {
	b := setup(t)
	require.Equal(t, 128+9, b.main(t, "kill9", b.args(), nil, ""))
	pings := b.srv.Pings()
	require.Equal(t, "/ping/"+b.key+"/137", pings[1].Path, "a killed command failed")
	require.Equal(t, "fail", pings[1].Kind)
	require.Equal(t, "about to die\n", pings[1].Body)
}

func TestRunCommandNotFound(t *testing.T) {
	b := setup(t)
	cfg, err := parse([]string{"--url", b.srv.URL(), "--key", b.key, "--", "/nonexistent/vigil-test-command"}, b.env(nil), b.stderr)
	require.NoError(t, err)
	require.Equal(t, 127, run(context.Background(), cfg, nil, strings.NewReader(""), b.stdout, b.stderr))
	pings := b.srv.Pings()
	require.Equal(t, "/ping/"+b.key+"/127", pings[1].Path)
	require.Contains(t, pings[1].Body, "vigil-test-command")
	require.Contains(t, b.stderr.String(), "vigil run:")
}

// readyWriter is the child's stdout: it closes ready when the child says
// "ready", so tests wait for the child itself, not for a deadline.
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
}

func newReadyWriter() *readyWriter { return &readyWriter{ready: make(chan struct{})} }

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), "ready")
	w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), "ready") {
		close(w.ready)
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestForwardedSignalReportsCancel(t *testing.T) {
	for _, c := range []struct {
		mode string
		code int
		path string
	}{
		{"trap", 1, "/cancel"},                           // handled SIGTERM, exited 1: interrupted
		{"plain", 128 + int(syscall.SIGTERM), "/cancel"}, // killed by the forwarded SIGTERM
		{"trap0", 0, "/0"},                               // finished cleanly after the signal
	} {
		t.Run(c.mode, func(t *testing.T) {
			b := setup(t)
			t.Setenv("VIGIL_TEST_CHILD", c.mode)
			cfg, err := parse(b.args(), b.env(nil), b.stderr)
			require.NoError(t, err)
			signals := make(chan os.Signal, 1)
			done := make(chan int)
			stdout := newReadyWriter()
			go func() { done <- run(context.Background(), cfg, signals, strings.NewReader(""), stdout, b.stderr) }()
			<-stdout.ready
			signals <- syscall.SIGTERM
			require.Equal(t, c.code, <-done)
			pings := b.srv.Pings()
			require.Len(t, pings, 2)
			require.Equal(t, "/ping/"+b.key+c.path, pings[1].Path)
			require.Equal(t, pings[0].RID(), pings[1].RID())
		})
	}
}

func TestContextCancelIsAShutdown(t *testing.T) {
	b := setup(t)
	t.Setenv("VIGIL_TEST_CHILD", "trap")
	cfg, err := parse(b.args(), b.env(nil), b.stderr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	stdout := newReadyWriter()
	go func() { done <- run(ctx, cfg, nil, strings.NewReader(""), stdout, b.stderr) }()
	<-stdout.ready
	cancel()
	require.Equal(t, 1, <-done)
	require.Equal(t, "cancel", b.srv.Pings()[1].Kind)
	require.Contains(t, b.srv.Pings()[1].Body, "got terminated")
}

func TestMainForwardsRealSIGTERM(t *testing.T) {
	// Not parallel: the signal goes to this whole test process.
	b := setup(t)
	t.Setenv("VIGIL_TEST_CHILD", "trap")
	done := make(chan int)
	stdout := newReadyWriter()
	go func() {
		done <- Main(context.Background(), b.args(), func(string) string { return "" }, strings.NewReader(""), stdout, b.stderr)
	}()
	<-stdout.ready
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGTERM))
	require.Equal(t, 1, <-done)
	require.Contains(t, stdout.String(), "got terminated")
	require.Equal(t, "cancel", b.srv.Pings()[1].Kind)
}

func TestVigilUnreachable(t *testing.T) {
	b := setup(t)
	args := []string{"--url", vigiltest.ClosedURL(t), "--key", b.key, "--", os.Args[0], "-test.run=^$"}
	start := time.Now()
	require.Equal(t, 3, b.main(t, "exit3", args, nil, ""))
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, "failing\n", b.stdout.String())
	require.Contains(t, b.stderr.String(), "level=WARN")
	require.Contains(t, b.stderr.String(), "vigil: unavailable")
	require.NotContains(t, b.stderr.String(), b.key, "the ping key is not printed")
}

func TestConfigFromEnvironmentBySlug(t *testing.T) {
	b := setup(t)
	env := map[string]string{
		"VIGIL_URL": b.srv.URL(), "VIGIL_PROJECT_PING_KEY": b.srv.ProjectKey(),
		"VIGIL_SLUG": "nightly-backup", "VIGIL_CREATE": "true", "VIGIL_TIMEOUT": "3s", "VIGIL_TAIL": "10",
	}
	require.Equal(t, 1, b.main(t, "big", []string{"--", os.Args[0], "-test.run=^$"}, env, ""))
	pings := b.srv.Pings()
	prefix := "/ping/" + b.srv.ProjectKey() + "/nightly-backup"
	require.Equal(t, prefix+"/start", pings[0].Path)
	require.Equal(t, "1", pings[0].Query.Get("create"))
	require.Equal(t, prefix+"/1", pings[1].Path)
	require.Equal(t, "1", pings[1].Query.Get("create"))
	require.Equal(t, "line 0999\n", pings[1].Body)

	// Flags win over the environment.
	cfg, err := parse([]string{"--timeout", "1s", "--", "true"}, b.env(env), b.stderr)
	require.NoError(t, err)
	require.Equal(t, time.Second, cfg.timeout)
}

func TestSettingsFromEnvironment(t *testing.T) {
	b := setup(t)
	env := map[string]string{
		"VIGIL_URL": b.srv.URL(), "VIGIL_PROJECT_PING_KEY": b.srv.ProjectKey(), "VIGIL_SLUG": "report",
		"VIGIL_CREATE": "true", "VIGIL_SCHEDULE": "30 4 * * 1-5", "VIGIL_TZ": "America/New_York",
		"VIGIL_DIALECT": "robfig", "VIGIL_GRACE": "90", "VIGIL_MAX_RUNTIME": "1h30m",
	}
	require.Equal(t, 0, b.main(t, "ok", []string{"--", os.Args[0], "-test.run=^$"}, env, ""))
	for _, p := range b.srv.Pings() {
		q := p.Query
		require.Equal(t, "1", q.Get("create"))
		require.Empty(t, q.Get("update"))
		require.Equal(t, "30 4 * * 1-5", q.Get("schedule"))
		require.Equal(t, "America/New_York", q.Get("tz"))
		require.Equal(t, "robfig", q.Get("dialect"))
		require.Equal(t, "90", q.Get("grace"))
		require.Equal(t, "5400", q.Get("max_runtime"))
		require.False(t, q.Has("every"))
	}

	// By ping key, --update sends the settings without create=1.
	cfg, err := parse([]string{"--url", b.srv.URL(), "--key", b.key, "--update", "--every", "2h", "--", "true"}, b.env(nil), b.stderr)
	require.NoError(t, err)
	require.Equal(t, sdk.Settings{Every: 2 * time.Hour}, cfg.settings)
	require.True(t, cfg.update)
}

func TestHelpHidesTheKeys(t *testing.T) {
	t.Parallel()
	env := map[string]string{"VIGIL_PING_KEY": "5b5c8a34-8f0e-4b5e-9a40-2a1f1f2bc0b4", "VIGIL_PROJECT_PING_KEY": "pk_secret_project_key"}
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"-h"}, func(k string) string { return env[k] }, strings.NewReader(""), &bytes.Buffer{}, &stderr)
	require.Equal(t, 0, code)
	require.Contains(t, stderr.String(), "--project-key")
	require.NotContains(t, stderr.String(), env["VIGIL_PING_KEY"])
	require.NotContains(t, stderr.String(), env["VIGIL_PROJECT_PING_KEY"])
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	cases := map[string][]string{
		"no Vigil URL":              {"--key", "k", "--", "true"},
		"no monitor":                {"--url", "http://x", "--", "true"},
		"--key excludes":            {"--url", "http://x", "--key", "k", "--slug", "s", "--", "true"},
		"no command":                {"--url", "http://x", "--key", "k"},
		"--create needs --slug":     {"--url", "http://x", "--key", "k", "--create", "--", "true"},
		"--tail must be":            {"--url", "http://x", "--key", "k", "--tail", "999999", "--", "true"},
		"--scheduled-at \"02:00\"":  {"--url", "http://x", "--key", "k", "--scheduled-at", "02:00", "--", "true"},
		"flag provided but not def": {"--nope", "--", "true"},
		"need --create or --update": {"--url", "http://x", "--key", "k", "--schedule", "0 2 * * *", "--", "true"},
		"--schedule excludes --every": {"--url", "http://x", "--key", "k", "--update", "--schedule", "0 2 * * *",
			"--every", "1h", "--", "true"},
		"--tz and --dialect need --schedule": {"--url", "http://x", "--key", "k", "--update", "--tz", "UTC", "--", "true"},
		"want a period":                      {"--url", "http://x", "--key", "k", "--update", "--grace", "soon", "--", "true"},
	}
	for want, args := range cases {
		var stderr bytes.Buffer
		code := Main(context.Background(), args, env, strings.NewReader(""), &bytes.Buffer{}, &stderr)
		require.Equal(t, 2, code, want)
		require.Contains(t, stderr.String(), want)
	}
	var stderr bytes.Buffer
	require.Equal(t, 0, Main(context.Background(), []string{"-h"}, env, nil, nil, &stderr))
	require.Contains(t, stderr.String(), "Usage: vigil run")
	require.Equal(t, 2, Main(context.Background(), []string{"--url", "x", "--key", "k", "--", "true"}, func(n string) string {
		if n == "VIGIL_TIMEOUT" {
			return "soon"
		}
		return ""
	}, nil, nil, &stderr))
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tb := &tailBuffer{max: 5}
	for _, s := range []string{"hello ", "wörld", "!"} {
		_, _ = tb.Write([]byte(s))
	}
	require.Equal(t, "rld!", string(tb.Bytes()), "cut at a whole character")
	none := &tailBuffer{}
	_, _ = none.Write([]byte("x"))
	require.Empty(t, none.Bytes())
}

func TestSignalThatCancelledContextIsPassedOnItself(t *testing.T) {
	b := setup(t)
	t.Setenv("VIGIL_TEST_CHILD", "trap")
	cfg, err := parse(b.args(), b.env(nil), b.stderr)
	require.NoError(t, err)
	// As with signal.NotifyContext in cmd/vigil: Ctrl-C both cancels ctx
	// and arrives on the signal channel.
	ctx, cancel := context.WithCancel(context.Background())
	signals := make(chan os.Signal, 1)
	done := make(chan int)
	stdout := newReadyWriter()
	go func() { done <- run(ctx, cfg, signals, strings.NewReader(""), stdout, b.stderr) }()
	<-stdout.ready
	signals <- syscall.SIGINT
	cancel()
	require.Equal(t, 1, <-done)
	require.Contains(t, stdout.String(), "got interrupt", "the command got SIGINT, not a SIGTERM of vigil run's own")
	require.Equal(t, "cancel", b.srv.Pings()[1].Kind)
}
