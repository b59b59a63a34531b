package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// benchStatusOpts are the flags of "vigil bench status".
type benchStatusOpts struct {
	database    string
	monitors    int
	days        int
	connections int
	duration    time.Duration
	warmup      time.Duration
	uncached    bool
	noop        bool
	keyFile     string
}

// benchStatusCmd measures a public status page through real HTTP against
// a server in this process, with the load generator of "vigil bench
// ingest": pages per second and latency for a page of N monitors with
// days of history each, served from the page cache (as vigil serve does),
// then built at every request (a cache of 1ns), then the no-op HTTP
// server under the same load, in the same run.
func benchStatusCmd(env *cmdEnv, args []string) error {
	var o benchStatusOpts
	fs := newFlagSet(env)
	fs.StringVar(&o.database, "database", "", "database to use: a postgres:// URL (use a scratch database) or a SQLite file path (default: a new SQLite file in a temporary directory)")
	fs.IntVar(&o.monitors, "monitors", 50, "monitors on the page")
	fs.IntVar(&o.days, "days", 90, "days of history of each monitor: a run a day, a failure every 30 days of one monitor in five, with a note")
	fs.IntVar(&o.connections, "connections", 64, "concurrent HTTP connections")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "measured time of each run")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before each run")
	fs.BoolVar(&o.uncached, "uncached", true, "also run with the page built at every request, for what the cache buys")
	fs.BoolVar(&o.noop, "noop", true, "also measure a no-op HTTP server (a Go net/http handler answering 200 \"OK\") under the same load, for the ratio")
	fs.StringVar(&o.keyFile, "secret-key-file", env.getenv("VIGIL_SECRET_KEY_FILE"), "secret key file of the server (default: $VIGIL_SECRET_KEY_FILE; with PostgreSQL and none, a new one in a temporary directory)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if o.monitors < 1 || o.monitors > monitors.StatusPageItemsMax || o.days < 1 || o.connections < 1 || o.duration <= 0 || o.warmup < 0 {
		return usageError{fmt.Sprintf("monitors (1 to %d), days, connections and duration must be positive; warmup not negative", monitors.StatusPageItemsMax)}
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
	b := &statusBench{o: o, out: env.stdout, ctx: env.ctx,
		load: &ingestBench{o: benchIngestOpts{connections: o.connections, duration: o.duration, warmup: o.warmup}, ctx: env.ctx}}
	return b.run()
}

type statusBench struct {
	o            benchStatusOpts
	out          io.Writer
	ctx          context.Context
	load         *ingestBench // the load generator
	slug         string
	size, gzSize int
}

func (b *statusBench) run() error {
	o := b.o
	kind := "SQLite"
	if server.IsPostgresURL(o.database) {
		kind = "PostgreSQL"
	}
	fmt.Fprintf(b.out, "vigil bench status: %s, a page of %d monitors with %d days of history, %d connections, flat out, %s measured after %s of warm-up; GOMAXPROCS %d\n",
		kind, o.monitors, o.days, o.connections, o.duration, o.warmup, runtime.GOMAXPROCS(0))
	b.slug = "bench-" + keys.NewID()[:8]
	b.load.path = func(uint64) string { return "/status/" + b.slug }

	// As browsers ask (gzip), then as is, then built at every request.
	gzip := http.Header{"Accept-Encoding": {"gzip"}}
	var results []*benchResult
	for _, ph := range []struct {
		name   string
		ttl    time.Duration
		header http.Header
		on     bool
	}{
		{fmt.Sprintf("status page, cached (TTL %s), gzip", web.StatusPageTTLDefault), 0, gzip, true},
		{fmt.Sprintf("status page, cached (TTL %s), not compressed", web.StatusPageTTLDefault), 0, nil, true},
		{"status page, built at every request, gzip", time.Nanosecond, gzip, o.uncached},
	} {
		if !ph.on {
			continue
		}
		b.load.header = ph.header
		r, err := b.phase(ph.name, ph.ttl, len(results) == 0)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	b.load.header = nil
	var err error
	var noop *benchResult
	if o.noop {
		if noop, err = b.load.noopPhase(0); err != nil {
			return err
		}
		results = append(results, noop)
	}
	fmt.Fprintf(b.out, "page: %d bytes of HTML, %d gzipped\n", b.size, b.gzSize)
	tw := tabwriter.NewWriter(b.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\trequests/s\tp50\tp95\tp99\tmax\tnot 200\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%d\t\n", r.name, r.rate(), ms(r.pct(50)), ms(r.pct(95)), ms(r.pct(99)), ms(r.pct(100)), r.failed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if noop != nil && noop.acked > 0 {
		fmt.Fprintf(b.out, "cached status page / no-op HTTP server: %.3f\n", results[0].rate()/noop.rate())
	}
	if o.uncached && results[2].acked > 0 {
		fmt.Fprintf(b.out, "cached / built at every request: %.1fx\n", results[0].rate()/results[2].rate())
	}
	for _, r := range results {
		if len(r.statuses) > 0 {
			fmt.Fprintf(b.out, "%s: answers other than 200: %v\n", r.name, r.statuses)
		}
	}
	return nil
}

// phase starts a server whose status pages are cached for ttl (0: the
// default), seeds the page on the first, drives requests at it, and stops
// it.
func (b *statusBench) phase(name string, ttl time.Duration, seed bool) (*benchResult, error) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	cfg := server.Config{
		DatabaseURL: b.o.database, Listen: "127.0.0.1:0", LogLevel: "warn", LogFormat: "text",
		KeepPings: 100000, KeepRuns: 100000, PruneInterval: time.Hour, SecretKeyFile: b.o.keyFile,
		Web: web.Config{StatusPageTTL: ttl},
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	if seed {
		if err := b.seed(srv.Store()); err != nil {
			_ = srv.Store().Close()
			return nil, err
		}
	}
	if err := srv.Listen(); err != nil {
		_ = srv.Store().Close()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	base := "http://" + srv.Addr()
	client := b.load.client()
	defer client.CloseIdleConnections()

	for _, enc := range []string{"", "gzip"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/status/"+b.slug, nil)
		if err != nil {
			return nil, err
		}
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("get the status page: %w", err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("the status page answers %d: %s", resp.StatusCode, page)
		}
		if enc == "" {
			b.size = len(page)
		} else {
			b.gzSize = len(page)
		}
	}
	if b.o.warmup > 0 {
		b.load.drive(ctx, client, base, 0, b.o.warmup)
	}
	r := b.load.drive(ctx, client, base, 0, b.o.duration)
	r.name = name
	cancel()
	if err := <-done; err != nil {
		return nil, fmt.Errorf("run server: %w", err)
	}
	return r, nil
}

// seed makes a project with the monitors and their history, and the
// published page that shows them.
func (b *statusBench) seed(store monitors.Store) error {
	now := time.Now()
	prj, err := store.ProjectCreate(b.ctx, &monitors.ProjectCreateParams{
		ID: keys.NewID(), Name: "bench " + now.UTC().Format(time.RFC3339), PingKey: keys.NewProjectPingKey(), Now: now})
	if err != nil {
		return fmt.Errorf("create bench project: %w", err)
	}
	page := &monitors.StatusPage{ID: keys.NewID(), ProjectID: prj.ID, Slug: b.slug, Title: "Bench jobs", Published: true,
		CreatedAt: now, UpdatedAt: now}
	for i := range b.o.monitors {
		m := &monitors.Monitor{
			ID: keys.NewID(), ProjectID: prj.ID, Name: fmt.Sprintf("bench-%03d", i), PingKey: keys.NewPingKey(),
			Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 86400}, GraceSeconds: 3600,
			CreatedAt: now.AddDate(0, 0, -b.o.days-1), UpdatedAt: now,
		}
		m.ApplyDefaults()
		if err := store.MonitorInsert(b.ctx, m); err != nil {
			return fmt.Errorf("create bench monitor: %w", err)
		}
		var batch []*monitors.PingRecordParams
		for d := b.o.days; d >= 1; d-- {
			at := now.Add(-time.Duration(d)*24*time.Hour + time.Hour)
			kind := monitors.PingSuccess
			if i%5 == 0 && d%30 == 0 {
				kind = monitors.PingFail
			}
			rid := fmt.Sprintf("run-%d", d)
			batch = append(batch,
				&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: at.Add(-time.Duration(30+i) * time.Second), RID: rid}},
				&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: kind, At: at, RID: rid, Body: "bench output"}})
		}
		res, err := store.PingRecordBatch(b.ctx, &monitors.PingRecordBatchParams{Pings: batch})
		if err != nil {
			return fmt.Errorf("record bench history: %w", err)
		}
		for _, r := range res {
			if r.Err != nil {
				return fmt.Errorf("record bench history: %w", r.Err)
			}
		}
		ins, err := store.IncidentList(b.ctx, &monitors.IncidentListParams{ProjectID: prj.ID, MonitorID: m.ID})
		if err != nil {
			return fmt.Errorf("list bench incidents: %w", err)
		}
		for _, in := range ins {
			if err := store.IncidentNoteCreate(b.ctx, &monitors.IncidentNote{ID: keys.NewID(), ProjectID: prj.ID, IncidentID: in.ID,
				Body: "Re-run by hand; fine.", CreatedAt: in.OpenedAt.Add(time.Hour)}); err != nil {
				return fmt.Errorf("note a bench incident: %w", err)
			}
		}
		page.Items = append(page.Items, monitors.StatusPageItem{Monitor: m.ID, Name: fmt.Sprintf("Job %d", i+1)})
	}
	if err := store.StatusPageCreate(b.ctx, page); err != nil {
		return fmt.Errorf("create bench status page: %w", err)
	}
	return nil
}
