package evaluator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/monitors"
)

// Store is what the evaluator needs of [monitors.Store].
type Store interface {
	MonitorEvaluateDue(ctx context.Context, p *monitors.EvaluateDueParams) (*monitors.EvaluateDueResult, error)
	MonitorNextDeadline(ctx context.Context) (*time.Time, error)
	EvaluatorHeartbeat(ctx context.Context, p *monitors.EvaluatorHeartbeatParams) (*monitors.EvaluatorHeartbeat, error)
}

// Defaults and limits of [Config].
const (
	BatchSizeDefault       = 500
	BatchSizeMax           = 10000
	WorkersDefault         = 1
	WorkersMax             = 64
	PollIntervalDefault    = time.Second
	PollIntervalMax        = time.Second
	OutageThresholdDefault = time.Minute
	// OutageThresholdMin keeps the threshold well above the longest normal
	// gap between two passes (a pass, then a poll interval of sleep).
	OutageThresholdMin = 5 * time.Second
)

// passGapMin is the shortest sleep between two passes that did not leave a
// backlog. Deadlines that fall due a few milliseconds apart are then
// evaluated together, in one transaction instead of one each, at the cost of
// at most this much more detection latency. It is also how soon a pass looks
// again when due monitors are left that it could not claim: another
// evaluator, or ingest, holds them and will most likely have written them by
// then.
const passGapMin = 50 * time.Millisecond

// Config configures an [Evaluator]. Zero values take the defaults.
type Config struct {
	// NowFunc is the clock; default time.Now.
	NowFunc func() time.Time
	// BatchSize is how many monitors one claim transaction evaluates;
	// default BatchSizeDefault.
	BatchSize int
	// Workers is how many claim transactions run at once while a burst
	// of due monitors lasts; default 1. More than one overlaps the
	// evaluation of one batch with the writing of another, on PostgreSQL;
	// SQLite's single writer takes them one at a time anyway.
	Workers int
	// PollInterval is the longest sleep between two passes; default and
	// maximum a second.
	PollInterval time.Duration
	// OutageThreshold is the longest gap in the evaluators' shared
	// heartbeat that is not an outage of Vigil; default a minute.
	OutageThreshold time.Duration
	// ReportInterval is how often Run looks for reports due (see
	// [Evaluator.ReportOnce]); default ReportIntervalDefault.
	ReportInterval time.Duration
	// Logger receives outages at Warn and errors at Error; default discards.
	Logger *slog.Logger
	// Registerer, when set, registers the evaluator's metrics.
	Registerer prometheus.Registerer
	// EvaluatedFunc, when set, is called after each claim commits, with the
	// time it returned and the monitors it evaluated. Benchmarks use it to
	// measure detection latency; it must not block.
	EvaluatedFunc func(committedAt time.Time, evaluated []monitors.EvaluatedMonitor)
}

// withDefaults returns c with defaults filled in, or an error naming every
// value out of range.
func (c Config) withDefaults() (Config, error) {
	if c.NowFunc == nil {
		c.NowFunc = time.Now
	}
	c.BatchSize = cmp.Or(c.BatchSize, BatchSizeDefault)
	c.Workers = cmp.Or(c.Workers, WorkersDefault)
	c.PollInterval = cmp.Or(c.PollInterval, PollIntervalDefault)
	c.OutageThreshold = cmp.Or(c.OutageThreshold, OutageThresholdDefault)
	c.ReportInterval = cmp.Or(c.ReportInterval, ReportIntervalDefault)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	var errs []error
	if c.BatchSize < 1 || c.BatchSize > BatchSizeMax {
		errs = append(errs, fmt.Errorf("evaluator batch size: %d is not between 1 and %d", c.BatchSize, BatchSizeMax))
	}
	if c.Workers < 1 || c.Workers > WorkersMax {
		errs = append(errs, fmt.Errorf("evaluator workers: %d is not between 1 and %d", c.Workers, WorkersMax))
	}
	if c.PollInterval < time.Millisecond || c.PollInterval > PollIntervalMax {
		errs = append(errs, fmt.Errorf("evaluator poll interval: %s is not between 1ms and %s", c.PollInterval, PollIntervalMax))
	}
	if c.ReportInterval < time.Millisecond {
		errs = append(errs, fmt.Errorf("report interval: %s is less than 1ms", c.ReportInterval))
	}
	if c.OutageThreshold < OutageThresholdMin {
		errs = append(errs, fmt.Errorf("outage threshold: %s is less than %s", c.OutageThreshold, OutageThresholdMin))
	}
	return c, errors.Join(errs...)
}

// Validate checks c as [New] would.
func (c Config) Validate() error {
	_, err := c.withDefaults()
	return err
}

// Evaluator claims due monitors and applies the time to them. Any number of
// them may run on one database.
type Evaluator struct {
	store   Store
	cfg     Config
	log     *slog.Logger
	metrics *metrics

	// mu makes passes one at a time; passMu guards the Pass of the
	// running one, which its workers share.
	mu     sync.Mutex
	passMu sync.Mutex
	// hbMu guards hb and stamped, the last heartbeat and when it was
	// stamped: a pass's workers stamp it again while a backlog lasts.
	hbMu    sync.Mutex
	hb      *monitors.EvaluatorHeartbeat
	stamped time.Time
}

// New returns an evaluator on store. It registers its metrics with
// cfg.Registerer, when set.
func New(store Store, cfg Config) (*Evaluator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := newMetrics()
	if cfg.Registerer != nil {
		if err := m.register(cfg.Registerer); err != nil {
			return nil, err
		}
	}
	return &Evaluator{store: store, cfg: cfg, log: cfg.Logger, metrics: m}, nil
}

// Pass tells what one pass did.
type Pass struct {
	// Claims is the number of claim transactions; Evaluated the monitors
	// they evaluated; Opened the incidents they opened.
	Claims    int
	Evaluated int
	Opened    int
	// Outage is the outage being settled during the pass, or settled by
	// it; nil when none.
	Outage *monitors.Outage
	// NextDeadline is the earliest next deadline of any monitor after the
	// pass; nil when none.
	NextDeadline *time.Time
}

// RunOnce runs one pass: it stamps the shared heartbeat (detecting an
// outage of Vigil) unless it did less than PollInterval ago, claims and
// evaluates due monitors in batches until a claim comes back short, and
// reads the next deadline. While a backlog lasts longer than PollInterval,
// the pass's workers stamp the heartbeat again, one of them at a time,
// before their next claim, and the others go on claiming. Passes of one
// evaluator run one at a time.
func (e *Evaluator) RunOnce(ctx context.Context) (*Pass, error) {
	pass, err := e.runOnce(ctx)
	if err != nil {
		e.metrics.errors.Inc()
	}
	return pass, err
}

func (e *Evaluator) runOnce(ctx context.Context) (*Pass, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pass := &Pass{}
	opts, err := e.restamp(ctx, pass)
	if err != nil {
		return nil, err
	}

	// One claim; when it locks a full batch, a burst is due: the other
	// Workers-1 claims start at once, while the first one is still being
	// evaluated and written, and each worker claims again until one comes
	// back short. A backlog does not end the pass when PollInterval has
	// passed: that would leave every worker but the last idle until the
	// last one's claim commits. Instead, the first worker to begin a claim
	// after PollInterval stamps the heartbeat again (a long backlog is not
	// an outage) and its claims and the later ones take the options of the
	// new stamp.
	var (
		wg    sync.WaitGroup
		burst sync.Once
		errs  = make([]error, e.cfg.Workers)
	)
	work := func(i int) {
		for {
			opts, err := e.restamp(ctx, pass)
			if err != nil {
				errs[i] = err
				return
			}
			full, err := e.claim(ctx, pass, opts, nil)
			if err != nil || !full {
				errs[i] = err
				return
			}
		}
	}
	full, err := e.claim(ctx, pass, opts, func(n int) {
		if n < e.cfg.BatchSize {
			return
		}
		burst.Do(func() {
			for i := 1; i < e.cfg.Workers; i++ {
				wg.Go(func() { work(i) })
			}
		})
	})
	if err == nil && full {
		work(0)
	}
	wg.Wait()
	err = errors.Join(append(errs, err)...)
	if err != nil {
		return pass, err
	}
	if pass.Evaluated > 0 {
		e.log.DebugContext(ctx, "evaluated due monitors", "monitors", pass.Evaluated, "incidents_opened", pass.Opened, "claims", pass.Claims)
	}

	next, err := e.store.MonitorNextDeadline(ctx)
	if err != nil {
		return pass, fmt.Errorf("read next deadline: %w", err)
	}
	pass.NextDeadline = next
	lag := 0.0
	if now := e.cfg.NowFunc(); next != nil && !next.After(now) {
		lag = now.Sub(*next).Seconds()
	}
	e.metrics.lagSeconds.Set(lag)
	return pass, nil
}

// restamp stamps the shared heartbeat, at most once per PollInterval,
// notes its outage on pass, and returns the options claims must use until
// the next stamp. The workers of a pass call it before each claim, one at
// a time.
func (e *Evaluator) restamp(ctx context.Context, pass *Pass) (monitors.TimeOptions, error) {
	e.hbMu.Lock()
	defer e.hbMu.Unlock()
	now := e.cfg.NowFunc()
	if e.hb != nil && now.Sub(e.stamped) < e.cfg.PollInterval && !now.Before(e.stamped) {
		// Stamped less than a poll interval ago: no outage can have
		// begun or ended since, as one needs a gap of OutageThreshold.
		e.notePassOutage(pass)
		return e.hb.TimeOptions(), nil
	}
	hb, err := e.store.EvaluatorHeartbeat(ctx, &monitors.EvaluatorHeartbeatParams{Now: now, Threshold: e.cfg.OutageThreshold})
	if err != nil {
		return monitors.TimeOptions{}, fmt.Errorf("evaluator heartbeat: %w", err)
	}
	e.noteOutage(ctx, hb)
	e.hb, e.stamped = hb, now
	e.notePassOutage(pass)
	return hb.TimeOptions(), nil
}

// notePassOutage records the outage of the last heartbeat on pass: the one
// being settled, or settled by it. e.hbMu is held.
func (e *Evaluator) notePassOutage(pass *Pass) {
	e.passMu.Lock()
	defer e.passMu.Unlock()
	if o := e.hb.Outage; o != nil {
		pass.Outage = o
	}
}

// claim runs one claim transaction and adds what it did to pass. It
// reports whether the claim came back full; claimed, when set, is told how
// many monitors the claim locked as soon as it has locked them.
func (e *Evaluator) claim(ctx context.Context, pass *Pass, opts monitors.TimeOptions, claimed func(n int)) (bool, error) {
	now := e.cfg.NowFunc()
	res, err := e.store.MonitorEvaluateDue(ctx, &monitors.EvaluateDueParams{Now: now, Limit: e.cfg.BatchSize, Options: opts, Claimed: claimed})
	if err != nil {
		return false, fmt.Errorf("evaluate due monitors: %w", err)
	}
	committed := e.cfg.NowFunc()
	e.metrics.claimSeconds.Observe(committed.Sub(now).Seconds())
	opened := e.observe(committed, res.Evaluated)
	if e.cfg.EvaluatedFunc != nil && len(res.Evaluated) > 0 {
		e.cfg.EvaluatedFunc(committed, res.Evaluated)
	}
	e.passMu.Lock()
	pass.Claims++
	pass.Evaluated += len(res.Evaluated)
	pass.Opened += opened
	e.passMu.Unlock()
	full := len(res.Evaluated) >= e.cfg.BatchSize
	if full {
		// A backlog: the pass goes on, so the lag is told from the
		// claim's oldest deadline until the pass reads the next one.
		oldest := res.Evaluated[0].DueAt
		for _, ev := range res.Evaluated[1:] {
			if ev.DueAt.Before(oldest) {
				oldest = ev.DueAt
			}
		}
		e.metrics.lagSeconds.Set(max(committed.Sub(oldest), 0).Seconds())
	}
	return full, nil
}

// observe counts what a claim did and returns the incidents it opened.
func (e *Evaluator) observe(committed time.Time, evaluated []monitors.EvaluatedMonitor) int {
	opened := 0
	e.metrics.evaluated.Add(float64(len(evaluated)))
	for _, ev := range evaluated {
		if ev.Transition == nil {
			continue
		}
		for _, ic := range ev.Transition.Incidents {
			if ic.Op != monitors.IncidentOpen {
				continue
			}
			opened++
			e.metrics.opened.WithLabelValues(string(ic.Kind)).Inc()
			e.metrics.detectionSeconds.Observe(max(committed.Sub(ev.DueAt), 0).Seconds())
		}
	}
	return opened
}

// noteOutage logs and counts what the heartbeat found.
func (e *Evaluator) noteOutage(ctx context.Context, hb *monitors.EvaluatorHeartbeat) {
	o := hb.Outage
	if o == nil || (!hb.Detected && !hb.Settled) {
		return
	}
	attrs := []any{"outage_id", o.ID, "outage_start", o.StartedAt, "outage_end", o.EndedAt,
		"outage_duration", o.Duration().Round(time.Millisecond).String()}
	if hb.Detected {
		e.metrics.outages.Inc()
		e.metrics.outageSeconds.Set(o.Duration().Seconds())
	}
	switch {
	case hb.Detected && hb.Settled:
		e.log.WarnContext(ctx, "Vigil was down or its evaluator lagged; no monitor was due during the gap",
			append(attrs, "monitors_postponed", o.MonitorsPostponed)...)
	case hb.Detected:
		e.log.WarnContext(ctx, "Vigil was down or its evaluator lagged; monitors due during the gap get a fresh grace window", attrs...)
	case hb.Settled:
		e.log.WarnContext(ctx, "every monitor due during Vigil's outage was given a fresh grace window",
			append(attrs, "monitors_postponed", o.MonitorsPostponed)...)
	}
	if hb.Settled {
		e.metrics.outagePostponed.Set(float64(o.MonitorsPostponed))
	}
}

// Run runs passes until ctx is done: at once while due monitors remain,
// else when the earliest deadline comes, and at least every PollInterval.
func (e *Evaluator) Run(ctx context.Context) {
	e.log.InfoContext(ctx, "evaluator started", "batch_size", e.cfg.BatchSize, "poll_interval", e.cfg.PollInterval.String(),
		"outage_threshold", e.cfg.OutageThreshold.String())
	var reports sync.WaitGroup
	defer reports.Wait()
	reports.Go(func() { e.reportLoop(ctx) })
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		pass, err := e.RunOnce(ctx)
		if err != nil && ctx.Err() != nil {
			return
		}
		wait := e.cfg.PollInterval
		if err != nil {
			e.log.ErrorContext(ctx, "evaluator pass failed", "err", err)
		} else {
			wait = e.wait(pass, e.cfg.NowFunc())
		}
		timer.Reset(wait)
	}
}

// wait returns how long to sleep after pass.
func (e *Evaluator) wait(pass *Pass, now time.Time) time.Duration {
	w := e.cfg.PollInterval
	if pass.NextDeadline != nil {
		w = min(w, max(pass.NextDeadline.Sub(now), passGapMin))
	}
	return w
}
