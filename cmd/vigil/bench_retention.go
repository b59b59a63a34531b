package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/migrations"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/server"
)

// pingsPartitionedVersion is the migration that partitions pings; undone,
// it leaves them in one table.
const pingsPartitionedVersion = 14

// benchRetentionOpts are the flags of "vigil bench retention".
type benchRetentionOpts struct {
	database string
	pings    int
	monitors int
	months   int
	queries  int
	schemes  string
	keep     bool
}

// benchRetentionCmd measures how a month of old pings leaves a PostgreSQL
// database holding many: by dropping the month's partition (the schema of
// migration 0014) and, in the same run, by deleting its rows from one
// table (the same schema with 0014 undone) and vacuuming after, while pings go on
// being written, so that what retention costs ingest shows beside what it
// costs the database.
func benchRetentionCmd(env *cmdEnv, args []string) error {
	var o benchRetentionOpts
	fs := newFlagSet(env)
	fs.StringVar(&o.database, "database", "", "a postgres:// URL of a scratch database (required); each scheme gets a schema of its own, dropped at the end")
	fs.IntVar(&o.pings, "pings", 10_000_000, "pings to load")
	fs.IntVar(&o.monitors, "monitors", 100_000, "monitors they belong to")
	fs.IntVar(&o.months, "months", 12, "months of arrivals they span; the oldest is removed")
	fs.IntVar(&o.queries, "queries", 2000, "history reads (50 newest pings of a random monitor) timed before and after")
	fs.StringVar(&o.schemes, "schemes", "partitioned,single", "schemes to measure, in order: partitioned (monthly partitions, dropped) and single (one table, deleted and vacuumed)")
	fs.BoolVar(&o.keep, "keep", false, "keep the schemas for a look afterwards")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if !server.IsPostgresURL(o.database) {
		return usageError{"--database must be a postgres:// URL: partitions are PostgreSQL's"}
	}
	if o.pings < 1 || o.monitors < 1 || o.months < 2 || o.queries < 1 {
		return usageError{"pings, monitors and queries must be positive, and months at least 2"}
	}
	schemes := strings.Split(o.schemes, ",")
	for _, s := range schemes {
		if s != "partitioned" && s != "single" {
			return usageError{fmt.Sprintf("unknown scheme %q (want partitioned or single)", s)}
		}
	}
	fmt.Fprintf(env.stdout, "%d pings of %d monitors over %d months; removing the oldest month while 50 pings are written every 10 ms\n",
		o.pings, o.monitors, o.months)
	fmt.Fprintf(env.stdout, "load average at start: %s\n\n", loadAverage())
	defer func() { fmt.Fprintf(env.stdout, "\nload average at end: %s\n", loadAverage()) }()
	fmt.Fprintf(env.stdout, "%-12s %9s %8s %9s %10s %9s %9s %10s %22s %22s\n", "scheme", "size", "load", "removed", "remove", "WAL", "vacuum",
		"vacuum WAL", "ingest p99/max rest", "ingest p99/max remove")
	var results []*retentionResult
	for _, scheme := range schemes {
		r, err := (&retentionBench{o: o, scheme: scheme, log: env.stderr, ctx: env.ctx}).run()
		if err != nil {
			return fmt.Errorf("scheme %s: %w", scheme, err)
		}
		results = append(results, r)
		fmt.Fprintf(env.stdout, "%-12s %9s %8s %9d %10s %9s %9s %10s %22s %22s\n", scheme, mib(r.size), r.load.Round(time.Second),
			r.removed, r.remove.Round(time.Millisecond), mib(r.wal), r.vacuum.Round(time.Millisecond), mib(r.vacuumWAL),
			ms(r.rest.pct(99))+" / "+ms(r.rest.max()), ms(r.during.pct(99))+" / "+ms(r.during.max()))
	}
	fmt.Fprintf(env.stdout, "\n%-12s %22s %22s %12s\n", "scheme", "history p50/p99 before", "history p50/p99 after", "dead rows")
	for i, r := range results {
		fmt.Fprintf(env.stdout, "%-12s %22s %22s %12d\n", schemes[i], ms(r.histBefore.pct(50))+" / "+ms(r.histBefore.pct(99)),
			ms(r.histAfter.pct(50))+" / "+ms(r.histAfter.pct(99)), r.dead)
	}
	return nil
}

type retentionBench struct {
	o      benchRetentionOpts
	scheme string
	log    io.Writer
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *pgstore.Store
	mons   []*monitors.Monitor
}

type retentionResult struct {
	size, wal, vacuumWAL  int64
	load, remove, vacuum  time.Duration
	removed, dead         int64
	rest, during          latencies
	histBefore, histAfter latencies
}

// latencies are sorted durations.
type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	i := int(float64(len(l))*p/100+0.5) - 1
	return l[min(max(i, 0), len(l)-1)]
}

func (l latencies) max() time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[len(l)-1]
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, where
// the system tells them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func mib(n int64) string { return fmt.Sprintf("%.0fMiB", float64(n)/(1<<20)) }

func (b *retentionBench) run() (*retentionResult, error) {
	ctx := b.ctx
	// A name of its own lets two runs share one database.
	schema := fmt.Sprintf("vigil_bench_retention_%s_%08x", b.scheme, rand.Uint32())
	u, err := url.Parse(b.o.database)
	if err != nil {
		return nil, fmt.Errorf("parse --database: %w", err)
	}
	admin, err := pgx.Connect(ctx, b.o.database)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.Background())
	ident := pgx.Identifier{schema}.Sanitize()
	if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+ident+" CASCADE; CREATE SCHEMA "+ident); err != nil {
		return nil, fmt.Errorf("make schema %s: %w", schema, err)
	}
	if b.o.keep {
		fmt.Fprintf(b.log, "scheme %s: schema %s kept\n", b.scheme, schema)
	} else {
		defer func() {
			if _, err := admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+ident+" CASCADE"); err != nil {
				fmt.Fprintf(b.log, "drop schema %s: %v\n", schema, err)
			}
		}()
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	b.pool, err = pgxpool.New(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer b.pool.Close()
	db := stdlib.OpenDBFromPool(b.pool)
	defer db.Close()
	if err := migrations.Up(ctx, db, migrations.Postgres); err != nil {
		return nil, err
	}
	if b.scheme == "single" {
		// The schema of today with pings in one table, as before 0014.
		if err := migrations.Undo(ctx, db, migrations.Postgres, pingsPartitionedVersion); err != nil {
			return nil, err
		}
	}
	b.store = pgstore.New(b.pool, pgstore.Options{})

	// The pings arrive over the months from the first of the month after
	// next (where the partitioned schema's monthly partitions begin) on,
	// as they would after running that long.
	start := time.Now().UTC()
	start = time.Date(start.Year(), start.Month()+2, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, b.o.months, 0)
	dataNow := end.Add(-time.Hour)
	if b.scheme == "partitioned" {
		if _, err := b.store.PingAge(ctx, dataNow, time.Time{}); err != nil {
			return nil, err
		}
	}
	if err := b.makeMonitors(ctx); err != nil {
		return nil, err
	}
	r := &retentionResult{}
	t0 := time.Now()
	if err := b.load(ctx, start, end); err != nil {
		return nil, err
	}
	r.load = time.Since(t0)
	if err := b.pool.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
		WHERE c.oid = 'pings'::regclass OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'pings'::regclass)`).Scan(&r.size); err != nil {
		return nil, fmt.Errorf("size of pings: %w", err)
	}
	if r.histBefore, err = b.history(ctx); err != nil {
		return nil, err
	}

	before := start.AddDate(0, 1, 0)
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM pings WHERE at < $1`, before).Scan(&r.removed); err != nil {
		return nil, fmt.Errorf("count the oldest month: %w", err)
	}
	w := b.startWriter(ctx, dataNow)
	time.Sleep(3 * time.Second)
	r.rest = w.cut()
	lsn := b.lsn(ctx)
	t0 = time.Now()
	if b.scheme == "partitioned" {
		_, err = b.store.PingPrune(ctx, &monitors.PingPruneParams{Before: before, Now: dataNow})
	} else {
		err = b.deleteBefore(ctx, before)
	}
	r.remove = time.Since(t0)
	r.wal = b.lsn(ctx) - lsn
	if err != nil {
		w.stop()
		return nil, err
	}
	if _, err := b.pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		w.stop()
		return nil, fmt.Errorf("flush statistics: %w", err)
	}
	time.Sleep(time.Second) // let the statistics collector see the deletes
	if err := b.pool.QueryRow(ctx, `SELECT coalesce(sum(n_dead_tup), 0)::bigint FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND relname LIKE 'pings%'`).Scan(&r.dead); err != nil {
		w.stop()
		return nil, fmt.Errorf("dead rows: %w", err)
	}
	if b.scheme == "single" {
		// What autovacuum must do after such a delete, timed here rather
		// than left to run later at its own pace.
		lsn = b.lsn(ctx)
		t0 = time.Now()
		if _, err := b.pool.Exec(ctx, `VACUUM pings`); err != nil {
			w.stop()
			return nil, fmt.Errorf("vacuum: %w", err)
		}
		r.vacuum = time.Since(t0)
		r.vacuumWAL = b.lsn(ctx) - lsn
	}
	r.during = w.cut()
	if err := w.stop(); err != nil {
		return nil, err
	}
	if r.histAfter, err = b.history(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// makeMonitors inserts one monitor through the store and copies it in SQL
// for the others, which is much faster for a hundred thousand.
func (b *retentionBench) makeMonitors(ctx context.Context) error {
	now := time.Now()
	prj, err := b.store.ProjectCreate(ctx, &monitors.ProjectCreateParams{
		ID: keys.NewID(), Name: "retention bench", PingKey: keys.NewProjectPingKey(), Now: now})
	if err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	m := &monitors.Monitor{ID: "bm_0", ProjectID: prj.ID, Name: "bench-0", Slug: "bench-0", PingKey: keys.NewPingKey(),
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}, CreatedAt: now, UpdatedAt: now}
	m.ApplyDefaults()
	if err := b.store.MonitorInsert(ctx, m); err != nil {
		return fmt.Errorf("create monitor: %w", err)
	}
	var cols []string
	rows, err := b.pool.Query(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'monitors' ORDER BY ordinal_position`)
	if err != nil {
		return fmt.Errorf("monitor columns: %w", err)
	}
	if cols, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		return fmt.Errorf("monitor columns: %w", err)
	}
	exprs := make([]string, len(cols))
	for i, c := range cols {
		switch c {
		case "id":
			exprs[i] = "'bm_' || g"
		case "name", "slug":
			exprs[i] = "'bench-' || g"
		case "ping_key":
			exprs[i] = "md5(random()::text) || g"
		default:
			exprs[i] = pgx.Identifier{c}.Sanitize()
		}
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO monitors (`+strings.Join(cols, ", ")+`) SELECT `+strings.Join(exprs, ", ")+`
		FROM monitors, generate_series(1, $1 - 1) g WHERE id = 'bm_0'`, b.o.monitors); err != nil {
		return fmt.Errorf("copy monitors: %w", err)
	}
	rows, err = b.pool.Query(ctx, `SELECT id, ping_key FROM monitors`)
	if err != nil {
		return fmt.Errorf("load monitors: %w", err)
	}
	b.mons, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Monitor, error) {
		m := &monitors.Monitor{ProjectID: prj.ID}
		return m, r.Scan(&m.ID, &m.PingKey)
	})
	if err != nil {
		return fmt.Errorf("load monitors: %w", err)
	}
	return nil
}

// load writes the pings in chunks, spread evenly over [start, end) and
// over the monitors, without waiting for each commit to be flushed and
// without the foreign key's checks (the load is not what is measured),
// then vacuums and analyzes as autovacuum would have by then.
func (b *retentionBench) load(ctx context.Context, start, end time.Time) error {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	defer conn.Release()
	// Every ping names a monitor that exists by construction, so the load
	// skips the foreign key's per-row check (session_replication_role
	// needs a superuser, as a scratch database for benchmarks has).
	if _, err := conn.Exec(ctx, `SET synchronous_commit = off; SET session_replication_role = replica`); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	step := end.Sub(start) / time.Duration(b.o.pings)
	const chunk = 1_000_000
	for lo := 0; lo < b.o.pings; lo += chunk {
		hi := min(lo+chunk, b.o.pings)
		if _, err := conn.Exec(ctx, `INSERT INTO pings (id, monitor_id, kind, at, remote_addr, user_agent)
			SELECT nextval('pings_id_seq'), 'bm_' || (g % $3), 'success', $4::timestamptz + g * $5::interval, '10.0.0.1', 'curl/8.5.0'
			FROM generate_series($1::bigint, $2::bigint - 1) g`, lo, hi, b.o.monitors, start, step); err != nil {
			return fmt.Errorf("load pings %d to %d: %w", lo, hi, err)
		}
		fmt.Fprintf(b.log, "%s: %d of %d pings\n", b.scheme, hi, b.o.pings)
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) pings`); err != nil {
		return fmt.Errorf("vacuum after load: %w", err)
	}
	if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
		return fmt.Errorf("checkpoint after load: %w", err)
	}
	return nil
}

// history times o.queries reads of a random monitor's 50 newest pings
// through the store, as the dashboard and the API read them.
func (b *retentionBench) history(ctx context.Context) (latencies, error) {
	l := make(latencies, 0, b.o.queries)
	for range b.o.queries {
		m := b.mons[rand.IntN(len(b.mons))]
		t0 := time.Now()
		if _, err := b.store.PingList(ctx, &monitors.HistoryListParams{ProjectID: m.ProjectID, MonitorID: m.ID, Limit: 50}); err != nil {
			return nil, fmt.Errorf("read history: %w", err)
		}
		l = append(l, time.Since(t0))
	}
	slices.Sort(l)
	return l, nil
}

// deleteBefore removes the pings received before t from one table the
// only way it can: in bounded chunks of the oldest, as SQLite does.
func (b *retentionBench) deleteBefore(ctx context.Context, t time.Time) error {
	for {
		tag, err := b.pool.Exec(ctx, `DELETE FROM pings WHERE id IN (
			SELECT id FROM (SELECT id, at FROM pings ORDER BY id LIMIT 5000) s WHERE at < $1)`, t)
		if err != nil {
			return fmt.Errorf("delete old pings: %w", err)
		}
		if tag.RowsAffected() < 5000 {
			return nil
		}
	}
}

func (b *retentionBench) lsn(ctx context.Context) int64 {
	var n int64
	_ = b.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn`).Scan(&n)
	return n
}

// retentionWriter writes a batch of 50 log pings of random monitors every
// 10 ms through the store's ingest path and times each batch.
type retentionWriter struct {
	mu   sync.Mutex
	lat  latencies
	err  error
	done chan struct{}
	quit chan struct{}
}

func (b *retentionBench) startWriter(ctx context.Context, at time.Time) *retentionWriter {
	w := &retentionWriter{done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.quit:
				return
			case <-t.C:
			}
			ps := make([]*monitors.PingRecordParams, 50)
			for i := range ps {
				m := b.mons[rand.IntN(len(b.mons))]
				ps[i] = &monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingLog, At: at}}
			}
			t0 := time.Now()
			_, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: ps})
			d := time.Since(t0)
			w.mu.Lock()
			w.lat = append(w.lat, d)
			if err != nil && w.err == nil {
				w.err = fmt.Errorf("write pings: %w", err)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// cut returns the latencies since the last cut, sorted.
func (w *retentionWriter) cut() latencies {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lat
	w.lat = nil
	slices.Sort(l)
	return l
}

func (w *retentionWriter) stop() error {
	close(w.quit)
	<-w.done
	return w.err
}
