package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/server"
)

// benchCmd runs "vigil bench <what>".
func benchCmd(env *cmdEnv, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "ingest":
			return benchIngestCmd(env, args[1:])
		case "retention":
			return benchRetentionCmd(env, args[1:])
		case "status":
			return benchStatusCmd(env, args[1:])
		case "ingest-server":
			// The server under test of "vigil bench ingest", run by it.
			return benchIngestServerCmd(env, args[1:])
		}
	}
	return usageError{`want "vigil bench ingest [flags]", "vigil bench status [flags]" or "vigil bench retention --database URL [flags]"`}
}

// benchIngestOpts are the flags of "vigil bench ingest".
type benchIngestOpts struct {
	database    string
	monitors    int
	connections int
	duration    time.Duration
	warmup      time.Duration
	rate        float64
	baseline    bool
	halfRate    bool
	noop        bool
	batchSize   int
	batchWindow time.Duration
	writers     int
	cpuProfile  string
	keyFile     string
}

// benchIngestCmd measures ping ingest through real HTTP against a server in
// a process of its own (so that its CPU is measured apart from the load
// generator's): acknowledged (durable) pings per second and latency, with
// group commit, and in the same run with one transaction per ping (batch
// size 1, no gathering), so that the ratio holds for one machine and one
// database.
func benchIngestCmd(env *cmdEnv, args []string) error {
	var o benchIngestOpts
	fs := newFlagSet(env)
	fs.StringVar(&o.database, "database", "", "database to use: a postgres:// URL (use a scratch database) or a SQLite file path (default: a new SQLite file in a temporary directory)")
	fs.IntVar(&o.monitors, "monitors", 1000, "monitors to create and ping")
	fs.IntVar(&o.connections, "connections", 64, "concurrent HTTP connections")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each run")
	fs.Float64Var(&o.rate, "rate", 0, "pings per second in all (0: flat out)")
	fs.BoolVar(&o.baseline, "baseline", true, "also run with one transaction per ping, for the ratio")
	fs.BoolVar(&o.halfRate, "half-rate", true, "when flat out, also run group commit at half its measured rate, for latency")
	fs.BoolVar(&o.noop, "noop", true, "also measure a no-op HTTP server (a Go net/http handler answering 200 \"OK\") under the same load, for the ratio")
	fs.IntVar(&o.batchSize, "ingest-batch-size", ingest.BatchSizeDefault, "batch size of the group-commit run")
	fs.DurationVar(&o.batchWindow, "ingest-batch-window", ingest.BatchWindowDefault, "batch window of the group-commit run")
	fs.IntVar(&o.writers, "writers", 0, "batches written at once (0: by database, as vigil serve does)")
	fs.StringVar(&o.keyFile, "secret-key-file", env.getenv("VIGIL_SECRET_KEY_FILE"), "secret key file of the server (default: $VIGIL_SECRET_KEY_FILE; with PostgreSQL and none, a new one in a temporary directory; the benchmark stores no secret)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the server under test during the measured group-commit run to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if o.monitors < 1 || o.connections < 1 || o.duration <= 0 || o.warmup < 0 || o.rate < 0 || o.batchSize < 1 {
		return usageError{"monitors, connections, duration and the batch size must be positive; warmup and rate not negative"}
	}
	if o.database == "" {
		dir, err := os.MkdirTemp("", "vigil-bench-")
		if err != nil {
			return fmt.Errorf("make a temporary directory: %w", err)
		}
		defer os.RemoveAll(dir)
		o.database = filepath.Join(dir, "bench.db")
	}
	if o.keyFile == "" && server.IsPostgresURL(o.database) {
		dir, err := os.MkdirTemp("", "vigil-bench-key-")
		if err != nil {
			return fmt.Errorf("make a temporary directory: %w", err)
		}
		defer os.RemoveAll(dir)
		o.keyFile = filepath.Join(dir, "bench.key")
		if _, err := secrets.Create(o.keyFile); err != nil {
			return fmt.Errorf("create the bench's secret key file: %w", err)
		}
	}
	b := &ingestBench{o: o, out: env.stdout, stderr: env.stderr, ctx: env.ctx}
	return b.run()
}

type ingestBench struct {
	o      benchIngestOpts
	out    io.Writer
	stderr io.Writer // the server under test's
	ctx    context.Context
	phases int // servers started so far
	prj    *monitors.Project
	keys   []string
	// path is what each request asks for (default: a ping of the next
	// key), with header.
	path   func(n uint64) string
	header http.Header
}

// nextPath returns the path of request n.
func (b *ingestBench) nextPath(n uint64) string {
	if b.path != nil {
		return b.path(n)
	}
	return "/ping/" + b.keys[n%uint64(len(b.keys))]
}

// benchResult is one measured run.
type benchResult struct {
	name      string
	acked     int
	failed    int
	statuses  map[int]int
	elapsed   time.Duration
	latencies []time.Duration
	batches   float64 // transactions written during the measured time
	batched   float64 // pings in them
	// cpu is the CPU the server's process used during the measured time;
	// dbCPU what PostgreSQL's backends serving it used (dbMeasured),
	// dbGone how many of them ended meanwhile, their share uncounted.
	cpu        time.Duration
	dbCPU      time.Duration
	dbMeasured bool
	dbGone     int
	dbErr      error
	// peakRSS is the server process's most resident memory by the end of
	// the measured time, in bytes (0: not measured); gcCPU the Go
	// runtime's estimate of the part of cpu spent collecting garbage.
	peakRSS int64
	gcCPU   time.Duration
}

// perPing is d per acknowledged ping, in microseconds.
func (r *benchResult) perPing(d time.Duration) float64 {
	if r.acked == 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(r.acked)
}

func (r *benchResult) rate() float64 { return float64(r.acked) / r.elapsed.Seconds() }

func (r *benchResult) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	i := int(float64(len(r.latencies))*p/100+0.5) - 1
	return r.latencies[min(max(i, 0), len(r.latencies)-1)]
}

func (b *ingestBench) run() error {
	o := b.o
	kind := "SQLite"
	if server.IsPostgresURL(o.database) {
		kind = "PostgreSQL"
	}
	load := "flat out"
	if o.rate > 0 {
		load = fmt.Sprintf("at %.0f pings/s", o.rate)
	}
	fmt.Fprintf(b.out, "vigil bench ingest: %s, %d monitors, %d connections, %s, %s measured after %s of warm-up; GOMAXPROCS %d\n",
		kind, o.monitors, o.connections, load, o.duration, o.warmup, runtime.GOMAXPROCS(0))

	// Each run pings monitors of its own, created for it, so that no run
	// pays for the dead rows another left behind. The baseline goes first,
	// on the cleanest database.
	grouped := ingest.Config{BatchSize: o.batchSize, BatchWindow: o.batchWindow, Writers: o.writers}
	var baseline *benchResult
	if o.baseline {
		r, err := b.phase("one transaction per ping", ingest.Config{BatchSize: 1, Writers: o.writers}, o.rate, "")
		if err != nil {
			return err
		}
		baseline = r
	}
	r, err := b.phase(fmt.Sprintf("group commit (batch %d, window %s)", o.batchSize, o.batchWindow), grouped, o.rate, o.cpuProfile)
	if err != nil {
		return err
	}
	results := []*benchResult{r}
	if baseline != nil {
		results = append(results, baseline)
	}
	var noop *benchResult
	if o.noop {
		n, err := b.noopPhase(o.rate)
		if err != nil {
			return err
		}
		noop = n
	}
	if o.rate == 0 && o.halfRate && results[0].acked > 0 {
		half := results[0].rate() / 2
		r, err := b.phase(fmt.Sprintf("group commit at %.0f pings/s (half)", half), grouped, half, "")
		if err != nil {
			return err
		}
		results = append(results, r)
	}

	tw := tabwriter.NewWriter(b.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	db := "database CPU/ping"
	if kind == "SQLite" {
		db = "SQLite CPU/ping"
	} else {
		db = "PostgreSQL CPU/ping"
	}
	fmt.Fprintf(tw, "run\tacked pings/s\tp50\tp95\tp99\tmax\tnot acked\tmean batch\tVigil CPU/ping\t%s\t\n", db)
	for _, r := range results {
		mean := "-"
		if r.batches > 0 {
			mean = fmt.Sprintf("%.1f", r.batched/r.batches)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", r.name, r.rate(), ms(r.pct(50)), ms(r.pct(95)), ms(r.pct(99)),
			ms(r.pct(100)), r.failed, mean, us(r.perPing(r.cpu)), dbCPUCell(kind, r))
	}
	if noop != nil {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t-\t%s\t-\t\n", noop.name, noop.rate(), ms(noop.pct(50)), ms(noop.pct(95)),
			ms(noop.pct(99)), ms(noop.pct(100)), noop.failed, us(noop.perPing(noop.cpu)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if g := results[0]; g.acked > 0 {
		switch {
		case kind == "SQLite":
			fmt.Fprintf(b.out, "CPU per acknowledged ping, group commit: %s (Vigil with SQLite in its process)", us(g.perPing(g.cpu)))
		case g.dbMeasured:
			fmt.Fprintf(b.out, "CPU per acknowledged ping, group commit: %s (Vigil %s + PostgreSQL's backends %s)",
				us(g.perPing(g.cpu+g.dbCPU)), us(g.perPing(g.cpu)), us(g.perPing(g.dbCPU)))
		default:
			fmt.Fprintf(b.out, "CPU per acknowledged ping, group commit: Vigil %s, PostgreSQL not measured", us(g.perPing(g.cpu)))
		}
		if noop != nil && noop.acked > 0 {
			fmt.Fprintf(b.out, "; no-op HTTP server %s a request", us(noop.perPing(noop.cpu)))
		}
		fmt.Fprintln(b.out)
		if g.peakRSS > 0 {
			fmt.Fprintf(b.out, "Vigil's garbage collection, group commit: %s a ping (the runtime's estimate); peak RSS %.1f MB\n",
				us(g.perPing(g.gcCPU)), float64(g.peakRSS)/1e6)
		}
	}
	for _, r := range results {
		if r.dbErr != nil {
			fmt.Fprintf(b.out, "%s: PostgreSQL's CPU not measured: %v\n", r.name, r.dbErr)
		} else if r.dbGone > 0 {
			fmt.Fprintf(b.out, "%s: %d of PostgreSQL's backends ended during the run; their CPU since its start is not counted\n", r.name, r.dbGone)
		}
	}
	if o.baseline && results[1].acked > 0 {
		fmt.Fprintf(b.out, "group commit / one transaction per ping: %.1fx\n", results[0].rate()/results[1].rate())
	}
	if noop != nil && noop.acked > 0 {
		fmt.Fprintf(b.out, "group commit / no-op HTTP server: %.3f\n", results[0].rate()/noop.rate())
		results = append(results, noop)
	}
	for _, r := range results {
		if len(r.statuses) > 0 {
			fmt.Fprintf(b.out, "%s: answers other than 200: %v\n", r.name, r.statuses)
		}
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }

// us formats microseconds.
func us(v float64) string { return fmt.Sprintf("%.1fµs", v) }

// dbCPUCell is the database's CPU per ping of r: SQLite's is in Vigil's.
func dbCPUCell(kind string, r *benchResult) string {
	switch {
	case kind == "SQLite":
		return "in Vigil's"
	case r.dbMeasured:
		return us(r.perPing(r.dbCPU))
	}
	return "-"
}

// phase starts a server with ing in a process of its own, drives pings at
// it, and stops it.
func (b *ingestBench) phase(name string, ing ingest.Config, rate float64, cpuProfile string) (*benchResult, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	b.phases++
	var pg *pgBackends
	if server.IsPostgresURL(b.o.database) {
		conn, err := pgx.Connect(ctx, b.o.database)
		if err != nil {
			return nil, fmt.Errorf("connect to measure PostgreSQL's CPU: %w", err)
		}
		defer conn.Close(context.Background())
		pg = &pgBackends{conn: conn, app: fmt.Sprintf("vigil-bench-%d-%d", os.Getpid(), b.phases)}
	}
	app := ""
	if pg != nil {
		app = pg.app
	}
	child, err := b.startChild(ctx, b.childArgs(ing, app, cpuProfile))
	if err != nil {
		return nil, err
	}
	defer child.close()
	b.keys = child.hello.Keys
	r, err := b.measure(ctx, child, rate, pg)
	if err != nil {
		return nil, err
	}
	r.name = name
	if err := child.close(); err != nil {
		return nil, err
	}
	return r, nil
}

// measure warms the child up, then drives the measured load at it and
// reads what it and its database used meanwhile.
func (b *ingestBench) measure(ctx context.Context, child *benchChild, rate float64, pg *pgBackends) (*benchResult, error) {
	client := b.client()
	defer client.CloseIdleConnections()
	base := "http://" + child.hello.Addr
	if b.o.warmup > 0 {
		b.drive(ctx, client, base, rate, b.o.warmup)
	}
	var (
		s0    pgBackendCPU
		pgErr error
	)
	if pg != nil {
		s0, pgErr = pg.sample(ctx)
	}
	m0, err := child.call("start")
	if err != nil {
		return nil, err
	}
	r := b.drive(ctx, client, base, rate, b.o.duration)
	m1, err := child.call("stop")
	if err != nil {
		return nil, err
	}
	r.batches, r.batched = m1.Batches-m0.Batches, m1.Batched-m0.Batched
	r.cpu = m1.CPU - m0.CPU
	r.peakRSS = m1.PeakRSS
	r.gcCPU = m1.GCCPU - m0.GCCPU
	if pg != nil {
		var s1 pgBackendCPU
		if pgErr == nil {
			s1, pgErr = pg.sample(ctx)
		}
		if pgErr == nil {
			r.dbCPU, r.dbGone = pgCPUBetween(s0, s1)
			r.dbMeasured = true
		}
		r.dbErr = pgErr
	}
	return r, nil
}

// noopPhase drives the same load at a Go net/http server whose handler
// only answers 200 "OK", in a process of its own as Vigil's: the HTTP
// limit of this machine with this load generator, measured in the same
// run as Vigil.
func (b *ingestBench) noopPhase(rate float64) (*benchResult, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	child, err := b.startChild(ctx, []string{"--noop"})
	if err != nil {
		return nil, err
	}
	defer child.close()
	r, err := b.measure(ctx, child, rate, nil)
	if err != nil {
		return nil, err
	}
	r.name = `no-op HTTP server (200 "OK")`
	if err := child.close(); err != nil {
		return nil, err
	}
	return r, nil
}

// client is the load generator's HTTP client: one keep-alive connection
// per concurrent sender.
func (b *ingestBench) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: b.o.connections, MaxIdleConnsPerHost: b.o.connections, MaxConnsPerHost: b.o.connections,
		DisableCompression: true, IdleConnTimeout: time.Minute,
	}, Timeout: 30 * time.Second}
}

// setup creates a project and the monitors to ping, in place of the
// previous run's.
func (b *ingestBench) setup(store monitors.Store) error {
	now := time.Now()
	prj, err := store.ProjectCreate(b.ctx, &monitors.ProjectCreateParams{
		ID: keys.NewID(), Name: "bench " + now.UTC().Format(time.RFC3339), PingKey: keys.NewProjectPingKey(), Now: now})
	if err != nil {
		return fmt.Errorf("create bench project: %w", err)
	}
	b.prj, b.keys = prj, nil
	for i := range b.o.monitors {
		m := &monitors.Monitor{
			ID: keys.NewID(), ProjectID: prj.ID, Name: fmt.Sprintf("bench-%05d", i), PingKey: keys.NewPingKey(),
			Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60}, CreatedAt: now, UpdatedAt: now,
		}
		m.ApplyDefaults()
		if err := store.MonitorInsert(b.ctx, m); err != nil {
			return fmt.Errorf("create bench monitor: %w", err)
		}
		b.keys = append(b.keys, m.PingKey)
	}
	return nil
}

// drive sends success pings over the monitors for d: flat out from every
// connection when rate is 0, else at rate in all, on a fixed schedule.
// Latency runs from the time a ping was due (at a fixed rate) or sent
// (flat out) to its answer, so a server that falls behind a fixed rate
// shows it.
func (b *ingestBench) drive(ctx context.Context, client *http.Client, base string, rate float64, d time.Duration) *benchResult {
	var (
		next    atomic.Uint64
		mu      sync.Mutex
		res     = &benchResult{statuses: map[int]int{}}
		wg      sync.WaitGroup
		start   = time.Now()
		stop    = start.Add(d)
		tickets chan time.Time
	)
	if rate > 0 {
		tickets = make(chan time.Time, b.o.connections)
		go func() {
			defer close(tickets)
			interval := time.Duration(float64(time.Second) / rate)
			for i := 0; ; i++ {
				due := start.Add(time.Duration(i) * interval)
				if !due.Before(stop) || ctx.Err() != nil {
					return
				}
				if wait := time.Until(due); wait > time.Millisecond {
					time.Sleep(wait)
				}
				tickets <- due
			}
		}()
	}
	for range b.o.connections {
		wg.Go(func() {
			var lat []time.Duration
			acked, failed := 0, 0
			statuses := map[int]int{}
			for ctx.Err() == nil {
				var due time.Time
				if tickets != nil {
					t, ok := <-tickets
					if !ok {
						break
					}
					due = t
				} else {
					due = time.Now()
					if !due.Before(stop) {
						break
					}
				}
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+b.nextPath(next.Add(1)), nil)
				if err != nil {
					failed++
					statuses[0]++
					continue
				}
				for k, v := range b.header {
					req.Header[k] = v
				}
				resp, err := client.Do(req)
				if err != nil {
					failed++
					statuses[0]++
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed++
					statuses[resp.StatusCode]++
					continue
				}
				acked++
				lat = append(lat, time.Since(due))
			}
			mu.Lock()
			res.acked += acked
			res.failed += failed
			res.latencies = append(res.latencies, lat...)
			for k, v := range statuses {
				res.statuses[k] += v
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	slices.Sort(res.latencies)
	return res
}

// batchStats returns the count and sum of the batch size histogram.
func batchStats(reg *prometheus.Registry) (count, sum float64) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, 0
	}
	for _, mf := range mfs {
		if mf.GetName() == "vigil_ingest_batch_size" && len(mf.GetMetric()) > 0 {
			h := mf.GetMetric()[0].GetHistogram()
			return float64(h.GetSampleCount()), h.GetSampleSum()
		}
	}
	return 0, 0
}
