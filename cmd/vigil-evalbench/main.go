// Command vigil-evalbench measures Vigil's evaluator on PostgreSQL: how
// soon after a deadline its incident is committed, how many due monitors a
// second it evaluates, and the CPU it spends per due monitor, as the number
// of idle monitors grows.
//
// For each count of idle monitors (-idle), it fills a scratch schema with
// that many monitors whose deadlines are spread over the next day, bulk
// loaded with COPY, then adds a due workload: -steady-rate monitors a
// second falling due for -steady-duration, and a burst of -burst monitors
// in the middle of it, their deadlines spread evenly over -burst-spread
// (one second; 0 puts them all at the same instant). It runs the real
// evaluator (-replicas of them) in this process against the real store,
// with the real clock, and measures:
//
//   - detection latency: from each monitor's deadline to the commit of its
//     missed incident, p50, p99 and max, for all due monitors and for the
//     burst alone;
//   - burst throughput: the burst's monitors divided by the time from the
//     first of their deadlines to the commit of the last of their incidents;
//   - CPU: this process's (getrusage) and the PostgreSQL backends' serving
//     its evaluators (/proc/PID/schedstat), while nothing is due (per
//     second) and while the workload runs (per due monitor);
//   - the plans of the claim and next-deadline queries (EXPLAIN ANALYZE).
//
// Its garbage collector is paced as vigil serve's (internal/gcpacing):
// GOGC of the environment, or the server's default.
//
// Idle monitors are kept from one count to the next, so the schema grows
// from the smallest count to the largest. It is dropped at the end unless
// -keep is given.
//
//	go run ./cmd/vigil-evalbench -database postgres://postgres@127.0.0.1:5432/test?sslmode=disable
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/internal/gcpacing"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/server"
)

func main() {
	gcpacing.Apply(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// opts are the command's flags.
type opts struct {
	database       string
	schema         string
	idle           []int
	burst          int
	burstSpread    time.Duration
	steadyRate     int
	steadyDuration time.Duration
	lead           time.Duration
	batchSize      int
	workers        int
	channels       int
	replicas       int
	timeout        time.Duration
	keep           bool
	reuse          bool
	verbose        bool
	cpuProfile     string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var (
		o    opts
		idle string
	)
	fs := flag.NewFlagSet("vigil-evalbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.database, "database", os.Getenv("VIGIL_TEST_POSTGRES_URL"), "postgres:// URL of a scratch database (default: $VIGIL_TEST_POSTGRES_URL)")
	fs.StringVar(&o.schema, "schema", "vigil_evalbench", "schema to create, fill and drop")
	fs.StringVar(&idle, "idle", "10000,100000,1000000", "comma-separated counts of idle monitors, in increasing order")
	fs.IntVar(&o.burst, "burst", 10000, "monitors falling due together")
	fs.DurationVar(&o.burstSpread, "burst-spread", time.Second, "how the burst's deadlines are spread, evenly; 0 puts them all at one instant")
	fs.IntVar(&o.steadyRate, "steady-rate", 200, "monitors falling due per second around the burst")
	fs.DurationVar(&o.steadyDuration, "steady-duration", 20*time.Second, "how long monitors fall due at the steady rate; the burst is in the middle")
	fs.DurationVar(&o.lead, "lead", 10*time.Second, "time from loading the due workload to its first deadline; CPU while idle is measured in it")
	fs.IntVar(&o.batchSize, "batch-size", evaluator.BatchSizeDefault, "monitors per claim transaction")
	fs.IntVar(&o.workers, "workers", 2, "claim transactions at once per evaluator during a burst (vigil serve uses 2 on PostgreSQL)")
	fs.IntVar(&o.channels, "channels", 1, "default channels of the project: each incident gets a delivery, with its job queued, per channel, as vigil serve does")
	fs.IntVar(&o.replicas, "replicas", 1, "evaluators running at once")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "longest wait for the workload's incidents after its last deadline")
	fs.BoolVar(&o.keep, "keep", false, "keep the schema at the end")
	fs.BoolVar(&o.reuse, "reuse", false, "reuse the monitors of a schema kept by -keep instead of starting empty")
	fs.BoolVar(&o.verbose, "v", false, "log the evaluators' warnings and errors")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of this process under the workload of the last round to this file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	for _, f := range strings.Split(idle, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			fmt.Fprintf(stderr, "vigil-evalbench: -idle: %q is not a count\n", f)
			return 2
		}
		o.idle = append(o.idle, n)
	}
	if o.database == "" || !strings.HasPrefix(o.database, "postgres") {
		fmt.Fprintln(stderr, "vigil-evalbench: -database must be a postgres:// URL")
		return 2
	}
	if !slices.IsSorted(o.idle) || o.replicas < 1 || o.burst < 0 || o.steadyRate < 0 {
		fmt.Fprintln(stderr, "vigil-evalbench: -idle must increase; -replicas must be positive; -burst and -steady-rate not negative")
		return 2
	}
	if err := bench(ctx, &o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "vigil-evalbench: %v\n", err)
		return 1
	}
	return 0
}

// result is what one round measured.
type result struct {
	idle, total, due     int
	all, burst           []time.Duration
	burstRate            float64
	idleProcPerSec       time.Duration
	idlePGPerSec         time.Duration
	procPerDue, pgPerDue time.Duration
	incidents            int
	claimPlan, nextPlan  string
	burstPlan            string
	walPerDue            int64
	load                 string
	loadRate             float64
}

func bench(ctx context.Context, o *opts, stdout, stderr io.Writer) error {
	fmt.Fprintf(stdout, "machine: %s; GOGC %d\n", machine(), gcPercent())
	fmt.Fprintf(stdout, "load before: %s\n", uptime())
	fmt.Fprintf(stdout, "workload per round: burst %d over %s, %d/s for %s around it; batch size %d; %d evaluator(s) of %d worker(s); %d default channel(s)\n\n",
		o.burst, o.burstSpread, o.steadyRate, o.steadyDuration, o.batchSize, o.replicas, o.workers, o.channels)

	admin, err := pgx.Connect(ctx, o.database)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	ident := pgx.Identifier{o.schema}.Sanitize()
	reset := "DROP SCHEMA IF EXISTS " + ident + " CASCADE; CREATE SCHEMA " + ident
	if o.reuse {
		reset = "CREATE SCHEMA IF NOT EXISTS " + ident
	}
	if _, err := admin.Exec(ctx, reset); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	if !o.keep {
		defer func() {
			if _, err := admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA IF EXISTS "+ident+" CASCADE"); err != nil {
				fmt.Fprintf(stderr, "drop schema: %v\n", err)
			}
		}()
	}

	loadURL, err := withParams(o.database, o.schema, "vigil-evalbench-load")
	if err != nil {
		return err
	}
	evalURL, err := withParams(o.database, o.schema, "vigil-evalbench")
	if err != nil {
		return err
	}
	loadPool, err := pgxpool.New(ctx, loadURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer loadPool.Close()
	if err := pgstore.Migrate(ctx, loadPool); err != nil {
		return err
	}
	load := pgstore.New(loadPool, pgstore.Options{})
	projects, err := load.ProjectList(ctx)
	if err != nil {
		return fmt.Errorf("list projects: %w", err)
	}
	var project string
	if len(projects) > 0 {
		project = projects[0].ID
	} else {
		project = keys.NewID()
		if _, err := load.ProjectCreate(ctx, &monitors.ProjectCreateParams{ID: project, Name: "bench", PingKey: keys.NewProjectPingKey(), Now: time.Now()}); err != nil {
			return fmt.Errorf("create project: %w", err)
		}
	}
	chans, err := load.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: project})
	if err != nil {
		return fmt.Errorf("list channels: %w", err)
	}
	for i := len(chans); i < o.channels; i++ {
		_, err := load.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: project, Kind: "webhook",
			Name: fmt.Sprintf("hook %d", i), Config: json.RawMessage(`{"url":"https://example.com/vigil"}`), IsDefault: true, Now: time.Now()})
		if err != nil {
			return fmt.Errorf("create channel: %w", err)
		}
	}
	// Rounds of an earlier run left due monitors behind; this run's are
	// told apart by a run number.
	runID := time.Now().Unix()

	logLevel := slog.LevelError + 1
	if o.verbose {
		logLevel = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel}))

	var results []*result
	for round, n := range o.idle {
		r, err := runRound(ctx, o, fmt.Sprintf("%d-%d", runID, round), round, n, project, loadPool, evalURL, logger, stdout)
		if err != nil {
			return fmt.Errorf("round with %d idle monitors: %w", n, err)
		}
		results = append(results, r)
	}

	fmt.Fprintf(stdout, "\nload after: %s\n\n", uptime())
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "idle\ttotal\tdue\tp50\tp99\tmax\tburst p50\tburst p99\tburst max\tburst/s\tidle CPU vigil/s\tidle CPU pg/s\tCPU vigil/due\tCPU pg/due\tWAL/due\tload\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%.1fKiB\t%s\t\n", r.idle, r.total, r.due,
			ms(pct(r.all, 50)), ms(pct(r.all, 99)), ms(pct(r.all, 100)),
			ms(pct(r.burst, 50)), ms(pct(r.burst, 99)), ms(pct(r.burst, 100)), r.burstRate,
			ms(r.idleProcPerSec), ms(r.idlePGPerSec), us(r.procPerDue), us(r.pgPerDue), float64(r.walPerDue)/1024, r.load)
	}
	return tw.Flush()
}

// runRound tops the idle monitors up to n, loads a due workload, runs the
// evaluators through it, and measures.
func runRound(ctx context.Context, o *opts, tag string, round, n int, project string, pool *pgxpool.Pool, evalURL string,
	logger *slog.Logger, stdout io.Writer) (*result, error) {
	r := &result{idle: n}
	var have int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM monitors WHERE slug LIKE 'idle-%'`).Scan(&have); err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	if n > have {
		now := time.Now()
		started := time.Now()
		err := copyMonitors(ctx, pool, project, n-have, func(i int) (string, string, time.Time) {
			// Deadlines spread over the next day, one second apart at most.
			return keys.NewID(), fmt.Sprintf("idle-%d", have+i), now.Add(time.Hour + time.Duration(i%86400)*time.Second + time.Duration(i/86400)*time.Millisecond)
		})
		if err != nil {
			return nil, err
		}
		r.loadRate = float64(n-have) / time.Since(started).Seconds()
		fmt.Fprintf(stdout, "loaded %d idle monitors with COPY in %s (%.0f/s)\n", n-have, time.Since(started).Round(time.Millisecond), r.loadRate)
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE monitors`); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	// The checkpoint that the WAL of a bulk load calls for would otherwise
	// run during the measurement.
	if _, err := pool.Exec(ctx, `CHECKPOINT`); err != nil {
		fmt.Fprintf(stdout, "no CHECKPOINT after loading (%v): a checkpoint may overlap the measurement\n", err)
	}
	// The store as vigil serve opens it, with the hook that queues a job
	// for each delivery in the transaction that creates it.
	st, err := server.OpenStore(ctx, evalURL, logger)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer st.Close()
	evalStore, ok := st.(*pgstore.Store)
	if !ok {
		return nil, fmt.Errorf("open store: %T is not a PostgreSQL store", st)
	}
	r.claimPlan, r.nextPlan, err = evalStore.ExplainEvaluateDue(ctx, time.Now(), o.batchSize)
	if err != nil {
		return nil, err
	}

	// The due workload: steady monitors spread over the window, and the
	// burst in its middle, spread evenly over -burst-spread (0: all at one
	// instant).
	steady := int(float64(o.steadyRate) * o.steadyDuration.Seconds())
	r.due = steady + o.burst
	base := time.Now().Add(o.lead).Truncate(time.Second).Add(time.Second)
	burstAt := base.Add(o.steadyDuration / 2)
	inBurst := make(map[string]bool, o.burst)
	// The round's own due monitors: with -reuse, those of earlier runs
	// fall due again an hour after theirs, and are not counted.
	inRound := make(map[string]bool, r.due)
	err = copyMonitors(ctx, pool, project, r.due, func(i int) (string, string, time.Time) {
		id, slug := keys.NewID(), fmt.Sprintf("due-%s-%d", tag, i)
		inRound[id] = true
		if i < o.burst {
			inBurst[id] = true
			return id, slug, burstAt.Add(time.Duration(float64(o.burstSpread) * float64(i) / float64(o.burst)))
		}
		j := i - o.burst
		return id, slug, base.Add(time.Duration(float64(o.steadyDuration) * float64(j) / float64(max(steady, 1))))
	})
	if err != nil {
		return nil, err
	}
	// The claim's plan as the burst falls due: every due monitor of the
	// round is due then, and the claim still reads one batch.
	r.burstPlan, _, err = evalStore.ExplainEvaluateDue(ctx, burstAt.Add(o.burstSpread), o.batchSize)
	if err != nil {
		return nil, err
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM monitors`).Scan(&r.total); err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	fmt.Fprintf(stdout, "round %d: %d idle monitors, %d in all; %d due from %s, burst of %d at %s over %s\n",
		round+1, n, r.total, r.due, base.Format("15:04:05"), o.burst, burstAt.Format("15:04:05"), o.burstSpread)
	fmt.Fprintf(stdout, "claim plan with nothing due:\n%s\nclaim plan at the burst, %d due:\n%s\nnext deadline plan:\n%s\n",
		indent(r.claimPlan), steady/2+o.burst, indent(r.burstPlan), indent(r.nextPlan))

	// Run the evaluators through the workload.
	var (
		mu       sync.Mutex
		latAll   []time.Duration
		latBurst []time.Duration
		lastDone time.Time
		seen     int
		// twice are the round's monitors reported with an incident
		// change more than once (each must get one incident, once).
		twice   int
		counted = make(map[string]bool, r.due)
	)
	done := make(chan struct{})
	record := func(committed time.Time, evs []monitors.EvaluatedMonitor) {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if ev.Transition == nil || len(ev.Transition.Incidents) == 0 || !inRound[ev.MonitorID] {
				continue
			}
			if counted[ev.MonitorID] {
				twice++
				continue
			}
			counted[ev.MonitorID] = true
			lat := committed.Sub(ev.DueAt)
			latAll = append(latAll, lat)
			if inBurst[ev.MonitorID] {
				latBurst = append(latBurst, lat)
				if committed.After(lastDone) {
					lastDone = committed
				}
			}
			seen++
			if seen == r.due {
				close(done)
			}
		}
	}
	evCtx, stopEval := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range o.replicas {
		ev, err := evaluator.New(evalStore, evaluator.Config{
			BatchSize:       o.batchSize,
			Workers:         o.workers,
			OutageThreshold: 24 * time.Hour, // loading between rounds is no outage
			Logger:          logger,
			EvaluatedFunc:   record,
		})
		if err != nil {
			stopEval()
			return nil, err
		}
		wg.Go(func() { ev.Run(evCtx) })
	}
	defer func() {
		stopEval()
		wg.Wait()
	}()

	// CPU while idle: from 2s after the start to 1s before the first
	// deadline, the evaluators only poll.
	if !sleepUntil(ctx, base.Add(-o.lead).Add(2*time.Second)) {
		return nil, ctx.Err()
	}
	p0, g0, t0 := procCPU(), pgCPU(ctx, pool), time.Now()
	if !sleepUntil(ctx, base.Add(-time.Second)) {
		return nil, ctx.Err()
	}
	p1, g1, t1 := procCPU(), pgCPU(ctx, pool), time.Now()
	wal1, err := walLSN(ctx, pool)
	if err != nil {
		return nil, err
	}
	if o.cpuProfile != "" && round == len(o.idle)-1 {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	r.idleProcPerSec = perSecond(p1-p0, t1.Sub(t0))
	r.idlePGPerSec = perSecond(cpuDelta(g0, g1), t1.Sub(t0))

	// CPU under the workload, until the last incident is committed.
	select {
	case <-done:
	case <-time.After(time.Until(base.Add(o.steadyDuration + o.timeout))):
		mu.Lock()
		defer mu.Unlock()
		return nil, fmt.Errorf("only %d of %d due monitors got an incident in time", seen, r.due)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p2, g2 := procCPU(), pgCPU(ctx, pool)
	var walBytes int64
	if err := pool.QueryRow(ctx, `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint`, wal1).Scan(&walBytes); err != nil {
		return nil, fmt.Errorf("read WAL position: %w", err)
	}
	r.walPerDue = walBytes / int64(r.due)
	r.procPerDue = (p2 - p1) / time.Duration(r.due)
	r.pgPerDue = cpuDelta(g1, g2) / time.Duration(r.due)

	mu.Lock()
	r.all, r.burst = slices.Clone(latAll), slices.Clone(latBurst)
	if len(latBurst) > 0 {
		r.burstRate = float64(len(latBurst)) / lastDone.Sub(burstAt).Seconds()
	}
	mu.Unlock()
	slices.Sort(r.all)
	slices.Sort(r.burst)

	// Every due monitor has exactly one incident, each with its one event
	// and one delivery per channel.
	var incidents, distinct, events, deliveries int
	err = pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT i.monitor_id),
			(SELECT count(*) FROM incident_events e JOIN monitors m ON m.id = e.monitor_id WHERE m.slug LIKE $1),
			(SELECT count(*) FROM deliveries d JOIN monitors m ON m.id = d.monitor_id WHERE m.slug LIKE $1)
		FROM incidents i JOIN monitors m ON m.id = i.monitor_id WHERE m.slug LIKE $1`,
		"due-"+tag+"-%").Scan(&incidents, &distinct, &events, &deliveries)
	if err != nil {
		return nil, fmt.Errorf("count incidents: %w", err)
	}
	mu.Lock()
	dup := twice
	mu.Unlock()
	if incidents != r.due || distinct != r.due || events != r.due || deliveries != r.due*o.channels || dup > 0 {
		return nil, fmt.Errorf("%d due monitors got %d incidents on %d monitors with %d events and %d deliveries; %d reported evaluated with an incident change twice",
			r.due, incidents, distinct, events, deliveries, dup)
	}
	r.incidents = incidents
	r.load = loadAvg()
	fmt.Fprintf(stdout, "  %d incidents, one per due monitor, each with one event and %d deliveries; latency p50 %s p99 %s max %s; burst p99 %s, %.0f monitors/s\n\n",
		incidents, o.channels, ms(pct(r.all, 50)), ms(pct(r.all, 99)), ms(pct(r.all, 100)), ms(pct(r.burst, 99)), r.burstRate)
	return r, nil
}

// copyMonitors bulk-loads count monitors, each up since its last success
// and missed at the deadline that at(i) gives, with its slug.
func copyMonitors(ctx context.Context, pool *pgxpool.Pool, project string, count int, at func(i int) (id, slug string, deadline time.Time)) error {
	const (
		every = 3600
		grace = 60
	)
	cols := []string{"id", "project_id", "name", "slug", "schedule_kind", "every_seconds", "grace_seconds",
		"alert_on_failure", "failure_threshold", "recovery_threshold", "overlap", "ping_key", "created_at", "updated_at",
		"status", "state", "last_ping_at", "next_expected_at", "next_deadline"}
	created := time.Now().UTC()
	i := 0
	var encErr error
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == count {
			return nil, nil
		}
		id, slug, deadline := at(i)
		i++
		deadline = deadline.UTC()
		expected := deadline.Add(-grace * time.Second)
		last := expected.Add(-every * time.Second)
		st := monitors.State{Status: monitors.StatusUp, LastPingAt: last, LastPingKind: monitors.PingSuccess,
			LastSuccessAt: last, Expected: expected}
		state, err := json.Marshal(st)
		if err != nil {
			encErr = err
			return nil, err
		}
		return []any{id, project, slug, slug, string(monitors.ScheduleInterval), int64(every), int64(grace),
			string(monitors.AlertFinal), int32(1), int32(1), string(monitors.OverlapAlert), keys.NewPingKey(), created, created,
			string(monitors.StatusUp), state, last, expected, deadline}, nil
	})
	n, err := pool.CopyFrom(ctx, pgx.Identifier{"monitors"}, cols, src)
	if err != nil {
		return fmt.Errorf("copy monitors: %w", errors.Join(err, encErr))
	}
	if int(n) != count {
		return fmt.Errorf("copy monitors: %d of %d copied", n, count)
	}
	return nil
}

// withParams sets the search path and the application name of a postgres
// URL.
func withParams(base, schema, app string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// walLSN returns the database's WAL position. The cluster's WAL counts
// every database's writes: run the benchmark where nothing else writes.
func walLSN(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var lsn string
	if err := pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn); err != nil {
		return "", fmt.Errorf("read WAL position: %w", err)
	}
	return lsn, nil
}

// procCPU returns the user and system CPU time of this process.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pgCPU returns the CPU time each PostgreSQL backend serving the
// evaluators has spent, by process ID, from the first field of
// /proc/PID/schedstat (nanoseconds on a CPU). PostgreSQL must run on this
// machine; where it does not, the times are zero.
func pgCPU(ctx context.Context, pool *pgxpool.Pool) map[int32]time.Duration {
	rows, err := pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = 'vigil-evalbench'`)
	if err != nil {
		return nil
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil
	}
	out := make(map[int32]time.Duration, len(pids))
	for _, pid := range pids {
		out[pid] = backendCPU(pid)
	}
	return out
}

// cpuDelta sums the CPU time the backends alive at the end of a window
// spent in it; one opened during the window counts from zero.
func cpuDelta(before, after map[int32]time.Duration) time.Duration {
	var d time.Duration
	for pid, t := range after {
		d += t - before[pid]
	}
	return d
}

func backendCPU(pid int32) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(ns)
}

func perSecond(d, over time.Duration) time.Duration {
	if over <= 0 {
		return 0
	}
	return time.Duration(float64(d) / over.Seconds())
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// pct returns the p-th percentile of sorted durations (nearest rank).
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond)) }

func us(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond)) }

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

func uptime() string {
	out, err := exec.Command("uptime").Output()
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(out))
}

// loadAvg returns the machine's load average over the last minute.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func machine() string {
	var parts []string
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n := strings.Count(string(b), "processor\t:")
		model := ""
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
		parts = append(parts, fmt.Sprintf("%d CPUs (%s)", n, model))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
		if len(f) >= 2 {
			if kb, err := strconv.Atoi(f[1]); err == nil {
				parts = append(parts, fmt.Sprintf("%.0f GiB", float64(kb)/1024/1024))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// gcPercent is the garbage collector's percent in effect (GOGC).
func gcPercent() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64())
}
