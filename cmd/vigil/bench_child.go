package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/internal/gcpacing"
	"github.com/vigilhq/vigil/server"
)

// The server under test of "vigil bench ingest" runs in a process of its
// own, this binary started again with the hidden "vigil bench
// ingest-server", so that its CPU (getrusage of that process) is the
// server's alone and not the load generator's. The two talk over the
// child's stdin and stdout, one line each way:
//
//	child:  {"addr": "127.0.0.1:PORT", "keys": [...]}   once, when it listens
//	parent: start                                      child: a benchMark (then profiles, with --cpuprofile)
//	parent: stop                                       child: (stops profiling) a benchMark
//	parent: closes stdin                               child: shuts down and exits
//
// With --noop the child serves the no-op handler instead of Vigil, so both
// servers the load generator measures run the same way.

// benchChildEnv is added to the environment of the bench's server process
// (the tests' binary needs a variable to act as vigil).
var benchChildEnv []string

// benchHello is the child's first line.
type benchHello struct {
	Addr string   `json:"addr"`
	Keys []string `json:"keys"`
}

// benchMark is what the child reports at the start and the end of a
// measured run.
type benchMark struct {
	CPU     time.Duration `json:"cpu_ns"`    // user + system CPU of the child so far
	PeakRSS int64         `json:"peak_rss"`  // the child's most resident memory so far, in bytes
	GCCPU   time.Duration `json:"gc_cpu_ns"` // the Go runtime's estimate of the child's CPU in garbage collection so far
	Batches float64       `json:"batches"`
	Batched float64       `json:"batched"`
	Err     string        `json:"error,omitempty"`
}

// benchIngestServerCmd is the hidden "vigil bench ingest-server": the
// server under test of "vigil bench ingest".
func benchIngestServerCmd(env *cmdEnv, args []string) error {
	var (
		o          benchIngestOpts
		noop       bool
		cpuProfile string
	)
	fs := newFlagSet(env)
	fs.StringVar(&o.database, "database", "", "database")
	fs.IntVar(&o.monitors, "monitors", 1000, "monitors to create")
	fs.IntVar(&o.batchSize, "ingest-batch-size", ingest.BatchSizeDefault, "batch size")
	fs.DurationVar(&o.batchWindow, "ingest-batch-window", ingest.BatchWindowDefault, "batch window")
	fs.IntVar(&o.writers, "writers", 0, "batches written at once")
	fs.StringVar(&o.keyFile, "secret-key-file", "", "secret key file")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "CPU profile of the measured run")
	fs.BoolVar(&noop, "noop", false, "serve the no-op handler")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	ctx, cancel := context.WithCancel(env.ctx)
	defer cancel()

	var (
		hello benchHello
		done  = make(chan error, 1)
		stats = func() (float64, float64) { return 0, 0 }
		stop  func() error
	)
	if noop {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("listen for the no-op server: %w", err)
		}
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				_, _ = io.WriteString(w, "OK")
			}),
			ReadHeaderTimeout: 10 * time.Second,
		}
		go func() { done <- srv.Serve(ln) }()
		hello.Addr = ln.Addr().String()
		stop = func() error {
			if err := srv.Shutdown(context.Background()); err != nil {
				return fmt.Errorf("stop the no-op server: %w", err)
			}
			if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("run the no-op server: %w", err)
			}
			return nil
		}
	} else {
		// The collector paced as vigil serve paces it; the no-op server
		// above keeps Go's defaults, a plain net/http server's.
		gcpacing.Apply(env.getenv)
		cfg := server.Config{
			DatabaseURL: o.database, Listen: "127.0.0.1:0", LogLevel: "warn", LogFormat: "text",
			KeepPings: 1000, KeepRuns: 1000, PruneInterval: time.Hour, SecretKeyFile: o.keyFile,
			Ingest: ingest.Config{BatchSize: o.batchSize, BatchWindow: o.batchWindow, Writers: o.writers},
		}
		logger := slog.New(slog.NewTextHandler(env.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		srv, err := server.New(ctx, cfg, logger)
		if err != nil {
			return err
		}
		b := &ingestBench{o: o, ctx: ctx}
		if err := b.setup(srv.Store()); err != nil {
			_ = srv.Store().Close()
			return err
		}
		if err := srv.Listen(); err != nil {
			_ = srv.Store().Close()
			return err
		}
		go func() { done <- srv.Run(ctx) }()
		hello.Addr, hello.Keys = srv.Addr(), b.keys
		stats = func() (float64, float64) { return batchStats(srv.Registry) }
		stop = func() error {
			cancel()
			if err := <-done; err != nil {
				return fmt.Errorf("run server: %w", err)
			}
			return nil
		}
	}

	enc := json.NewEncoder(env.stdout)
	if err := enc.Encode(hello); err != nil {
		_ = stop()
		return fmt.Errorf("tell the bench the address: %w", err)
	}
	mark := func() benchMark {
		m := benchMark{}
		cpu, err := processCPU()
		if err != nil {
			m.Err = err.Error()
		}
		m.CPU = cpu
		if rss, err := processPeakRSS(); err == nil {
			m.PeakRSS = rss
		}
		m.GCCPU = gcCPU()
		m.Batches, m.Batched = stats()
		return m
	}
	var profile *os.File
	sc := bufio.NewScanner(env.stdin)
	for sc.Scan() {
		var m benchMark
		switch sc.Text() {
		case "start":
			m = mark()
			if cpuProfile != "" && profile == nil {
				f, err := os.Create(cpuProfile)
				if err == nil {
					err = pprof.StartCPUProfile(f)
				}
				if err != nil {
					m.Err = fmt.Sprintf("start CPU profile: %v", err)
				} else {
					profile = f
				}
			}
		case "stop":
			if profile != nil {
				pprof.StopCPUProfile()
				if err := profile.Close(); err != nil {
					m.Err = fmt.Sprintf("write CPU profile: %v", err)
				}
				profile = nil
			}
			e := m.Err
			m = mark()
			if e != "" {
				m.Err = e
			}
		default:
			m.Err = fmt.Sprintf("unknown request %q", sc.Text())
		}
		if err := enc.Encode(m); err != nil {
			break
		}
	}
	return stop()
}

// benchChild is a running server under test, seen from the bench.
type benchChild struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	hello benchHello
	once  sync.Once
	err   error
}

// startChild starts "vigil bench ingest-server" with args and waits until
// it listens.
func (b *ingestBench) startChild(ctx context.Context, args []string) (*benchChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary to run the server under test: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe, append([]string{"bench", "ingest-server"}, args...)...)
	cmd.Env = append(os.Environ(), benchChildEnv...)
	cmd.Stderr = b.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("the server under test's stdin: %w", err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("the server under test's stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the server under test: %w", err)
	}
	c := &benchChild{cmd: cmd, in: in, out: bufio.NewReaderSize(outPipe, 1<<16)}
	if err := c.read(&c.hello); err != nil {
		_ = in.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("start the server under test: %w", err)
	}
	return c, nil
}

// read decodes the child's next line into v.
func (c *benchChild) read(v any) error {
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read from the server under test: %w", err)
	}
	if err := json.Unmarshal(line, v); err != nil {
		return fmt.Errorf("read from the server under test: %w", err)
	}
	return nil
}

// call sends req ("start" or "stop") and returns the child's mark.
func (c *benchChild) call(req string) (benchMark, error) {
	var m benchMark
	if _, err := io.WriteString(c.in, req+"\n"); err != nil {
		return m, fmt.Errorf("ask the server under test to %s: %w", req, err)
	}
	if err := c.read(&m); err != nil {
		return m, err
	}
	if m.Err != "" {
		return m, fmt.Errorf("server under test, %s: %s", req, m.Err)
	}
	return m, nil
}

// close stops the child and waits for it; again, it returns the first
// answer.
func (c *benchChild) close() error {
	c.once.Do(func() {
		_ = c.in.Close()
		_, _ = io.Copy(io.Discard, c.out)
		if err := c.cmd.Wait(); err != nil {
			c.err = fmt.Errorf("server under test: %w", err)
		}
	})
	return c.err
}

// childArgs are the flags of the child for a phase with ing.
func (b *ingestBench) childArgs(ing ingest.Config, appName, cpuProfile string) []string {
	db := b.o.database
	if appName != "" {
		db = withApplicationName(db, appName)
	}
	return []string{"--database", db, "--monitors", strconv.Itoa(b.o.monitors),
		"--ingest-batch-size", strconv.Itoa(ing.BatchSize), "--ingest-batch-window", ing.BatchWindow.String(),
		"--writers", strconv.Itoa(ing.Writers), "--secret-key-file", b.o.keyFile, "--cpuprofile", cpuProfile}
}

// withApplicationName sets application_name in a postgres:// URL, so that
// the bench can find the server's backends in pg_stat_activity.
func withApplicationName(db, name string) string {
	u, err := url.Parse(db)
	if err != nil {
		return db
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// pgBackends measures the CPU of the PostgreSQL backends of one
// application_name, read from /proc (so only when PostgreSQL runs on this
// machine and its processes are visible).
type pgBackends struct {
	conn *pgx.Conn
	app  string
}

// pgBackendCPU maps a backend's pid to the CPU it has used.
type pgBackendCPU map[int]time.Duration

// sample returns the CPU used so far by each backend of the application.
func (p *pgBackends) sample(ctx context.Context) (pgBackendCPU, error) {
	rows, err := p.conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, p.app)
	if err != nil {
		return nil, fmt.Errorf("list the server's backends: %w", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("list the server's backends: %w", err)
	}
	s := pgBackendCPU{}
	for _, pid := range pids {
		cpu, err := pidCPU(int(pid))
		if err != nil {
			return nil, err
		}
		s[int(pid)] = cpu
	}
	return s, nil
}

// pgCPUBetween is the CPU the backends used from s0 to s1: a backend in
// both counts its difference, one that started in between all of its CPU.
// gone is how many backends of s0 had ended by s1 (their CPU since s0 is
// not counted).
func pgCPUBetween(s0, s1 pgBackendCPU) (cpu time.Duration, gone int) {
	for pid, c1 := range s1 {
		cpu += c1 - s0[pid]
	}
	for pid := range s0 {
		if _, ok := s1[pid]; !ok {
			gone++
		}
	}
	return cpu, gone
}

// pidCPU is the CPU a process of this machine has used: from
// /proc/PID/schedstat (nanoseconds), else from /proc/PID/stat (clock
// ticks of 1/100 s, Linux's USER_HZ).
func pidCPU(pid int) (time.Duration, error) {
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid)); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil && ns > 0 {
				return time.Duration(ns), nil
			}
		}
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the CPU of PostgreSQL backend %d (is PostgreSQL on this machine?): %w", pid, err)
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from its closing parenthesis.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("read the CPU of PostgreSQL backend %d: no command name in %q", pid, s)
	}
	f := strings.Fields(s[i+1:])
	// After the name: state is field 3, utime 14, stime 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("read the CPU of PostgreSQL backend %d: short stat %q", pid, s)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("read the CPU of PostgreSQL backend %d: stat %q", pid, s)
	}
	return time.Duration(ut+st) * (time.Second / 100), nil
}

// gcCPU is the Go runtime's estimate of the CPU this process has spent in
// garbage collection so far: its background and assisting marking and its
// pauses (runtime/metrics "/cpu/classes/gc/total:cpu-seconds").
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}
