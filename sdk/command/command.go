package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/vigilhq/vigil/sdk"
)

// TailDefault is how much of the command's combined output is sent with
// the finishing ping, by default.
const TailDefault = 10 << 10

// Exit codes of vigil run itself, as a shell uses them.
const (
	exitUsage       = 2
	exitCannotRun   = 126
	exitNotFound    = 127
	exitSignalsBase = 128
)

// config is vigil run's configuration, from flags and the environment.
type config struct {
	url        string
	key        string
	projectKey string
	slug       string
	create     bool
	// update sends update=1: the settings change an existing monitor.
	update bool
	// settings go with create=1 or update=1.
	settings sdk.Settings
	timeout  time.Duration
	retries  int
	tail     int
	// scheduledAt names the occurrence the run belongs to (zero: none).
	scheduledAt time.Time
	args        []string
}

// Main runs `vigil run [flags] -- COMMAND [ARGS...]`: args are the
// arguments after "run", env reads the environment (os.Getenv), and stdin,
// stdout and stderr are passed through to the command. It returns the exit
// code for vigil to exit with: the command's own, 128+N when a signal N
// killed it, 126 or 127 when it could not be started, 2 for a usage error.
//
// It sends start with a fresh run id, runs the command, and sends its exit
// status (/ping/{key}/{code}?rid=…&duration_ms=…) with the tail of its
// combined output as the body. SIGINT and SIGTERM sent to vigil run are
// passed on to the command; a command that then exits non-zero, or is
// killed, was interrupted by its host and is reported as cancel, not
// fail. Vigil being unreachable never stops the command: vigil run warns on
// stderr and still exits with the command's code.
func Main(ctx context.Context, args []string, env func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parse(args, env, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "vigil run: %v\n", err)
		return exitUsage
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	return run(ctx, cfg, signals, stdin, stdout, stderr)
}

const usage = `Usage: vigil run [flags] -- COMMAND [ARGS...]

Runs COMMAND and reports it to Vigil: start, then its exit status with the
end of its output. Exits with COMMAND's exit code.

Flags (and environment variables):
`

func parse(args []string, env func(string) string, stderr io.Writer) (*config, error) {
	cfg := &config{timeout: sdk.TimeoutDefault, retries: sdk.RetriesDefault, tail: TailDefault}
	var problems []error
	envDuration := func(name string, into *time.Duration) {
		if v := env(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", name, err))
				return
			}
			*into = d
		}
	}
	envInt := func(name string, into *int) {
		if v := env(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: want a whole number", name))
				return
			}
			*into = n
		}
	}
	cfg.url = env("VIGIL_URL")
	cfg.key = env("VIGIL_PING_KEY")
	cfg.projectKey = env("VIGIL_PROJECT_PING_KEY")
	cfg.slug = env("VIGIL_SLUG")
	if v := env("VIGIL_CREATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			problems = append(problems, fmt.Errorf("VIGIL_CREATE: want true or false"))
		}
		cfg.create = b
	}
	if v := env("VIGIL_UPDATE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			problems = append(problems, fmt.Errorf("VIGIL_UPDATE: want true or false"))
		}
		cfg.update = b
	}
	st := &cfg.settings
	st.Schedule, st.TZ, st.Dialect = env("VIGIL_SCHEDULE"), env("VIGIL_TZ"), env("VIGIL_DIALECT")
	seconds := map[string]*time.Duration{"every": &st.Every, "grace": &st.Grace, "max-runtime": &st.MaxRuntime}
	for _, name := range []string{"every", "grace", "max-runtime"} {
		envName := "VIGIL_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if v := env(envName); v != "" {
			d, err := parseSeconds(v)
			if err != nil {
				problems = append(problems, fmt.Errorf("%s: %w", envName, err))
			}
			*seconds[name] = d
		}
	}
	envDuration("VIGIL_TIMEOUT", &cfg.timeout)
	envInt("VIGIL_RETRIES", &cfg.retries)
	envInt("VIGIL_TAIL", &cfg.tail)

	fs := flag.NewFlagSet("vigil run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		// The keys from the environment are secrets: not shown as defaults.
		for _, name := range []string{"key", "project-key"} {
			if f := fs.Lookup(name); f != nil {
				f.DefValue = ""
			}
		}
		fs.PrintDefaults()
	}
	fs.StringVar(&cfg.url, "url", cfg.url, "Vigil's base URL, such as https://vigil.example.com (VIGIL_URL)")
	fs.StringVar(&cfg.key, "key", cfg.key, "the monitor's ping key (VIGIL_PING_KEY)")
	fs.StringVar(&cfg.projectKey, "project-key", cfg.projectKey, "the project ping key, with --slug (VIGIL_PROJECT_PING_KEY)")
	fs.StringVar(&cfg.slug, "slug", cfg.slug, "the monitor's slug, with --project-key (VIGIL_SLUG)")
	fs.BoolVar(&cfg.create, "create", cfg.create, "create the monitor on its first ping, with --slug (VIGIL_CREATE)")
	fs.BoolVar(&cfg.update, "update", cfg.update, "change the monitor to the settings below when it exists already (VIGIL_UPDATE)")
	fs.StringVar(&st.Schedule, "schedule", st.Schedule, "with --create or --update: the monitor's cron expression, such as '0 2 * * *' (VIGIL_SCHEDULE)")
	fs.StringVar(&st.TZ, "tz", st.TZ, "the time zone of --schedule, such as Europe/Berlin; default UTC (VIGIL_TZ)")
	fs.StringVar(&st.Dialect, "dialect", st.Dialect, "how --schedule is read: cronie (default), robfig or quartz (VIGIL_DIALECT)")
	for _, f := range []struct{ name, usage string }{
		{"every", "with --create or --update: an interval schedule's period, such as 1h or 3600 (seconds) (VIGIL_EVERY)"},
		{"grace", "with --create or --update: how late a run may be, such as 5m (VIGIL_GRACE)"},
		{"max-runtime", "with --create or --update: how long a run may take before it is stuck, such as 2h (VIGIL_MAX_RUNTIME)"},
	} {
		fs.Func(f.name, f.usage, func(v string) error {
			d, err := parseSeconds(v)
			if err != nil {
				return err
			}
			*seconds[f.name] = d
			return nil
		})
	}
	fs.DurationVar(&cfg.timeout, "timeout", cfg.timeout, "timeout of each request to Vigil (VIGIL_TIMEOUT)")
	fs.IntVar(&cfg.retries, "retries", cfg.retries, "retries of a request that fails (VIGIL_RETRIES)")
	fs.IntVar(&cfg.tail, "tail", cfg.tail, "bytes of the end of the output sent to Vigil, at most 102400 (VIGIL_TAIL)")
	scheduledAt := env("VIGIL_SCHEDULED_AT")
	fs.StringVar(&scheduledAt, "scheduled-at", scheduledAt,
		"the scheduled time (RFC 3339) of the occurrence this run belongs to, kept by its retries (VIGIL_SCHEDULED_AT)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if scheduledAt != "" {
		t, err := time.Parse(time.RFC3339, scheduledAt)
		if err != nil {
			problems = append(problems, fmt.Errorf("--scheduled-at %q: want an RFC 3339 time such as 2026-01-02T02:00:00Z", scheduledAt))
		}
		cfg.scheduledAt = t
	}
	cfg.args = fs.Args()

	if cfg.url == "" {
		problems = append(problems, errors.New("no Vigil URL: set --url or VIGIL_URL"))
	}
	switch {
	case cfg.key != "" && (cfg.projectKey != "" || cfg.slug != ""):
		problems = append(problems, errors.New("--key excludes --project-key and --slug"))
	case cfg.key == "" && (cfg.projectKey == "" || cfg.slug == ""):
		problems = append(problems, errors.New("no monitor: set --key, or --project-key and --slug"))
	}
	if cfg.create && cfg.slug == "" {
		problems = append(problems, errors.New("--create needs --slug"))
	}
	if cfg.settings != (sdk.Settings{}) && !cfg.create && !cfg.update {
		problems = append(problems, errors.New("--schedule, --tz, --dialect, --every, --grace and --max-runtime need --create or --update"))
	}
	if st.Schedule != "" && st.Every != 0 {
		problems = append(problems, errors.New("--schedule excludes --every"))
	}
	if st.Schedule == "" && (st.TZ != "" || st.Dialect != "") {
		problems = append(problems, errors.New("--tz and --dialect need --schedule"))
	}
	if cfg.timeout <= 0 {
		problems = append(problems, errors.New("--timeout must be positive"))
	}
	if cfg.retries < 0 {
		problems = append(problems, errors.New("--retries must not be negative"))
	}
	if cfg.tail < 0 || cfg.tail > sdk.BodyLimit {
		problems = append(problems, fmt.Errorf("--tail must be 0..%d", sdk.BodyLimit))
	}
	if len(cfg.args) == 0 {
		problems = append(problems, errors.New("no command: vigil run [flags] -- COMMAND [ARGS...]"))
	}
	if err := errors.Join(problems...); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (cfg *config) monitor() sdk.Monitor {
	m := sdk.Slug(cfg.projectKey, cfg.slug)
	if cfg.key != "" {
		m = sdk.Key(cfg.key)
	}
	if cfg.create {
		m = m.WithCreate()
	}
	if cfg.update {
		m = m.WithUpdate()
	}
	return m.WithSettings(cfg.settings)
}

// parseSeconds reads a period as a Go duration (90s, 1h30m) or a whole
// number of seconds (5400).
func parseSeconds(v string) (time.Duration, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0, fmt.Errorf("%q: want a positive period", v)
		}
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a period such as 90s, 1h or a number of seconds", v)
	}
	return d, nil
}

// run does the work of Main, with the signals to forward coming from
// signals.
func run(ctx context.Context, cfg *config, signals <-chan os.Signal, stdin io.Reader, stdout, stderr io.Writer) int {
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{
		Level: slog.LevelWarn,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	client := sdk.New(cfg.url, sdk.WithTimeout(cfg.timeout), sdk.WithRetries(cfg.retries), sdk.WithLogger(logger))
	// Pings outlive ctx: a shutdown is when the cancel report matters.
	pingCtx := context.WithoutCancel(ctx)
	r := client.Begin(pingCtx, cfg.monitor(), sdk.WithAttempt(0), sdk.WithScheduledAt(cfg.scheduledAt))

	tail := &tailBuffer{max: cfg.tail}
	cmd := exec.Command(cfg.args[0], cfg.args[1:]...)
	cmd.Stdin = stdin
	cmd.Stdout = io.MultiWriter(stdout, tail)
	cmd.Stderr = io.MultiWriter(stderr, tail)

	finish := func(kind sdk.Kind, code int) {
		opts := &sdk.PingOptions{ExitCode: code, Body: tail.Bytes()}
		if err := r.Ping(pingCtx, kind, opts); err != nil {
			logger.Warn("vigil run: could not report the command to Vigil", "error", err)
		}
	}

	if err := cmd.Start(); err != nil {
		code := exitCannotRun
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			code = exitNotFound
		}
		fmt.Fprintf(stderr, "vigil run: %v\n", err)
		_, _ = fmt.Fprintf(tail, "vigil run: %v\n", err)
		finish(sdk.KindExit, code)
		return code
	}

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	interrupted := false
	done := ctx.Done()
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-waited:
			break loop
		case sig := <-signals:
			// Every signal is passed on: a second Ctrl-C may mean "now".
			interrupted = true
			_ = cmd.Process.Signal(sig)
		case <-done:
			// The host is shutting down. When ctx was cancelled by the
			// same signal (signal.NotifyContext in the caller), that
			// signal is the one to pass on, once.
			done = nil
			if interrupted {
				continue
			}
			interrupted = true
			select {
			case sig := <-signals:
				_ = cmd.Process.Signal(sig)
			default:
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
		}
	}

	code := exitCode(cmd.ProcessState, waitErr)
	if interrupted && code != 0 {
		_, _ = fmt.Fprintf(tail, "\nvigil run: interrupted by a signal; exit status %d\n", code)
		finish(sdk.KindCancel, code)
	} else {
		finish(sdk.KindExit, code)
	}
	return code
}

// exitCode is the command's exit status as a shell reports it.
func exitCode(ps *os.ProcessState, waitErr error) int {
	if ps == nil {
		return exitCannotRun
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignalsBase + int(ws.Signal())
	}
	if code := ps.ExitCode(); code >= 0 {
		return code
	}
	if waitErr != nil {
		return exitCannotRun
	}
	return 0
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.max == 0 {
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// Bytes returns the tail, starting at a whole UTF-8 character.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return append([]byte(nil), b...)
}

// String is for tests and logs.
func (t *tailBuffer) String() string { return strings.ToValidUTF8(string(t.Bytes()), "?") }
