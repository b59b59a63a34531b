package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/email"
)

// Defaults of [Config].
const (
	RetryWindowDefault = 24 * time.Hour
	// WorkersDefault is how many attempts one process runs at once: with
	// fetchCooldownDefault, a burst of 10,000 notifications reaches a local
	// receiver in 8 to 9 s on two cores, on SQLite and on PostgreSQL
	// (BenchmarkDeliver; 21 to 25 s with 10 workers and 20ms), and a
	// PostgreSQL process's pool stays at 30 connections (server.PoolSize).
	WorkersDefault      = 20
	PollIntervalDefault = time.Second
	// StopTimeoutDefault bounds how long Run waits, at shutdown, for
	// attempts in flight before it cancels them (they are retried after
	// the next start).
	StopTimeoutDefault = 10 * time.Second
	// cancelTimeout bounds how long Stop waits, after cancelling them, for
	// attempts to end. An attempt that ignores its cancellation still
	// holds its job; the job is rescued ([RescueAfter]) after the next
	// start.
	cancelTimeout = 5 * time.Second
	// remindLimit bounds the incidents one reminder transaction takes.
	remindLimit = 100
	// fetchCooldownDefault is the least time between two fetches of jobs
	// while the queue is busy: River fetches at most as many jobs as there
	// are free workers, so workers / cooldown bounds the jobs started a
	// second (2,000 with the defaults). An idle queue is not fetched from
	// more often for it.
	fetchCooldownDefault = 10 * time.Millisecond
)

// Store is what delivery needs of the store.
type Store interface {
	DeliveryGet(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error)
	DeliveryAttemptRecord(ctx context.Context, p *monitors.DeliveryAttemptRecordParams) (*monitors.DeliveryAttempt, error)
	DeliveryGroup(ctx context.Context, projectID, channelID string, groupAt time.Time, limit int) ([]*monitors.Delivery, error)
	IncidentRemind(ctx context.Context, p *monitors.IncidentRemindParams) ([]*monitors.IncidentEvent, error)
	IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error)
	MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error)
	ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error)
	// ReportGet loads the report a report's delivery sends.
	ReportGet(ctx context.Context, projectID, id string) (*monitors.Report, error)
	// PingList and RunList load the ping and the run an incident names.
	PingList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Ping, error)
	RunList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Run, error)
}

// Config configures a [Service].
type Config struct {
	Store Store
	// BaseURL is the public URL of this Vigil, for links in messages.
	BaseURL string
	// AllowPrivate lets channels reach loopback and private addresses
	// (VIGIL_ALLOW_PRIVATE_TARGETS). Used when HTTPClient is nil.
	AllowPrivate bool
	// AllowedTargets are let through even when private targets are
	// refused (VIGIL_ALLOWED_TARGETS). Used when HTTPClient is nil.
	AllowedTargets notifiers.AllowedTargets
	// HTTPClient makes every HTTP request of every channel; nil is
	// notifiers.NewHTTPClient with AllowPrivate and Timeout.
	HTTPClient *http.Client
	// SMTP is the operator's mail server; an empty Host means there is
	// none, and email channels cannot send (their deliveries are retried,
	// in case the server is configured and Vigil restarted within the retry
	// window).
	SMTP email.SMTPConfig
	// Timeout bounds one attempt; 0 is notifiers.AttemptTimeoutDefault.
	Timeout time.Duration
	// RetryWindow is how long after its event a delivery may still be
	// tried; 0 is RetryWindowDefault.
	RetryWindow time.Duration
	// Backoff spaces attempts when the receiver gives no Retry-After.
	Backoff Backoff
	// ReminderInterval, when positive, re-alerts about incidents that stay
	// open that long (incident.reminder).
	ReminderInterval time.Duration
	// Workers is how many attempts run at once in this process; 0 is
	// WorkersDefault.
	Workers int
	// PollInterval is how often River looks for jobs that no notification
	// announced (always, on SQLite); 0 is PollIntervalDefault.
	PollInterval time.Duration
	// StopTimeout bounds the wait for attempts in flight at shutdown; 0 is
	// StopTimeoutDefault.
	StopTimeout time.Duration
	// Signer signs the "snooze 1 h" links of notifications (the server's
	// secrets.Keyring); nil sends none.
	Signer manage.Signer
	// Logger receives a record per failed attempt; nil discards.
	Logger *slog.Logger
	// Registerer receives the delivery metrics; nil registers none.
	Registerer prometheus.Registerer
	// NowFunc is the clock of delivery decisions (the retry window,
	// attempt times, reminders); nil is time.Now. River keeps its own
	// clock for when a job runs.
	NowFunc func() time.Time

	// rescueEvery is how often jobs left running by a process that died
	// are looked for; 0 is rescueEveryDefault. Tests shorten it.
	rescueEvery time.Duration
	// fetchCooldown is the least time between two fetches of jobs; 0 is
	// fetchCooldownDefault. Benchmarks vary it.
	fetchCooldown time.Duration
	// groupPoll bounds one wait of a grouped delivery for its group's
	// time; 0 is waitMax. Tests, whose clock River does not follow,
	// shorten it.
	groupPoll time.Duration
}

// Validate checks the operator's settings of c, and the SMTP server's when
// one is set.
func (c *Config) Validate() error {
	var errs []error
	if c.RetryWindow < 0 || c.Timeout < 0 || c.ReminderInterval < 0 || c.Workers < 0 {
		errs = append(errs, errors.New("delivery: durations and workers must not be negative"))
	}
	switch {
	case c.SMTP.Host != "":
		if err := c.SMTP.Validate(); err != nil {
			errs = append(errs, err)
		}
	case c.SMTP.From != "" || c.SMTP.Username != "" || c.SMTP.Password != "" || c.SMTP.Port != 0:
		errs = append(errs, errors.New("smtp host: must be set with the other SMTP settings"))
	}
	return errors.Join(errs...)
}

// smtp is the mail server, nil when there is none.
func (c *Config) smtp() *email.SMTPConfig {
	if c.SMTP.Host == "" {
		return nil
	}
	return &c.SMTP
}

func (c Config) withDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = notifiers.AttemptTimeoutDefault
	}
	if c.RetryWindow <= 0 {
		c.RetryWindow = RetryWindowDefault
	}
	c.Backoff = c.Backoff.WithDefaults()
	if c.Workers <= 0 {
		c.Workers = WorkersDefault
	}
	if c.fetchCooldown <= 0 {
		c.fetchCooldown = fetchCooldownDefault
	}
	if c.PollInterval <= 0 {
		c.PollInterval = PollIntervalDefault
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = StopTimeoutDefault
	}
	if c.rescueEvery <= 0 {
		c.rescueEvery = rescueEveryDefault
	}
	if c.groupPoll <= 0 {
		c.groupPoll = waitMax
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.NowFunc == nil {
		c.NowFunc = time.Now
	}
	if c.HTTPClient == nil {
		c.HTTPClient = notifiers.NewHTTPClient(notifiers.HTTPClientOptions{
			AllowPrivate: c.AllowPrivate, Allowed: c.AllowedTargets, Timeout: c.Timeout})
	}
	return c
}

// riverClient is the part of *river.Client[TTx] that Service uses, for
// either transaction type.
type riverClient interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// Service works the delivery jobs: a River client with the delivery
// worker, and the reminder loop.
type Service struct {
	cfg    Config
	sender *Sender
	client riverClient
	// exec runs River's own queries, for the rescue of jobs left running.
	exec riverdriver.Executor
}

// NewPostgres returns a Service whose River client works on pool, the
// store's (pgstore.Store.Pool). River's migrations must have been applied
// ([MigratePostgres]).
func NewPostgres(pool *pgxpool.Pool, cfg Config) (*Service, error) {
	if pool == nil {
		return nil, errors.New("new delivery service: no database pool")
	}
	return newService[pgx.Tx](riverpgxv5.New(pool), cfg)
}

// NewSQLite returns a Service whose River client works on db, the store's
// one writer connection (sqlitestore.Store.DB). River's migrations must
// have been applied ([MigrateSQLite]).
func NewSQLite(db *sql.DB, cfg Config) (*Service, error) {
	if db == nil {
		return nil, errors.New("new delivery service: no database")
	}
	return newService[*sql.Tx](riversqlite.New(db), cfg)
}

func newService[TTx any](driver riverdriver.Driver[TTx], cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("new delivery service: no store")
	}
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	sender := &Sender{cfg: cfg, metrics: m}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{sender: sender}); err != nil {
		return nil, fmt.Errorf("new delivery service: %w", err)
	}
	client, err := river.NewClient(driver, &river.Config{
		Queues: map[string]river.QueueConfig{QueueName: {MaxWorkers: cfg.Workers},
			ReportQueueName: {MaxWorkers: reportWorkers}},
		Workers: workers,
		Logger:  cfg.Logger.With("component", "river"),
		// A busy queue is fetched from at most this often: River's
		// default (100ms) would hold 20 workers to 200 notifications a
		// second, too few for a storm of incidents.
		FetchCooldown: min(cfg.fetchCooldown, cfg.PollInterval),
		// The attempt's own timeout ends it first; River's is a backstop.
		JobTimeout: jobTimeout(cfg.Timeout),
		// River's rescuer is the second line behind rescueLoop, with the
		// same horizon instead of its default of an hour more.
		RescueStuckJobsAfter: RescueAfter(cfg.Timeout),
		FetchPollInterval:    cfg.PollInterval,
		MaxAttempts:          maxAttempts,
	})
	if err != nil {
		return nil, fmt.Errorf("new delivery service: %w", err)
	}
	return &Service{cfg: cfg, sender: sender, client: client, exec: driver.GetExecutor()}, nil
}

// Sender returns the sender that makes the service's attempts, for tests
// of one channel ([Sender.TestChannel]).
func (s *Service) Sender() *Sender { return s.sender }

// Start starts working delivery jobs. It returns once River has started.
func (s *Service) Start(ctx context.Context) error {
	// Shutdown is Stop's business, not ctx's: a cancelled ctx would make
	// River stop without waiting.
	if err := s.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start delivery: %w", err)
	}
	return nil
}

// Stop stops working jobs: it waits up to the stop timeout (and no longer
// than ctx) for attempts in flight, then cancels them and waits a few
// seconds more for them to end; River makes a cancelled job available
// again. It returns within StopTimeout plus 5 s: an attempt that ignores
// its cancellation keeps its job, which the next start rescues.
func (s *Service) Stop(ctx context.Context) error {
	defer s.cfg.HTTPClient.CloseIdleConnections()
	soft, cancel := context.WithTimeout(ctx, s.cfg.StopTimeout)
	defer cancel()
	err := s.client.Stop(soft)
	if err == nil {
		return nil
	}
	hard, cancelHard := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancelHard()
	if herr := s.client.StopAndCancel(hard); herr != nil {
		return fmt.Errorf("stop delivery: %w", errors.Join(err, herr))
	}
	return nil
}

// Run starts the service, reminds incidents periodically when a reminder
// interval is set, and stops when ctx is done. Errors are logged.
func (s *Service) Run(ctx context.Context) {
	log := s.cfg.Logger
	if err := s.Start(ctx); err != nil {
		log.Error("delivery did not start; notifications wait in the queue", "err", err)
		<-ctx.Done()
		return
	}
	defer func() {
		if err := s.Stop(context.WithoutCancel(ctx)); err != nil {
			log.Error("stop delivery", "err", err)
		}
	}()
	rescued := make(chan struct{})
	go func() {
		defer close(rescued)
		s.rescueLoop(ctx)
	}()
	defer func() { <-rescued }()
	if s.cfg.ReminderInterval <= 0 {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(remindEvery(s.cfg.ReminderInterval))
	defer t.Stop()
	for {
		if _, err := s.RemindOnce(ctx); err != nil && ctx.Err() == nil {
			log.Error("remind open incidents", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// remindEvery is how often Run looks for incidents due for a reminder: a
// tenth of the interval, between a second and a minute.
func remindEvery(interval time.Duration) time.Duration {
	return min(max(interval/10, time.Second), time.Minute)
}

// RemindOnce records a reminder for every incident due for one at the
// service's now, and returns how many. It does nothing without a reminder
// interval.
func (s *Service) RemindOnce(ctx context.Context) (int, error) {
	if s.cfg.ReminderInterval <= 0 {
		return 0, nil
	}
	now := s.cfg.NowFunc()
	total := 0
	for {
		evs, err := s.cfg.Store.IncidentRemind(ctx, &monitors.IncidentRemindParams{Now: now,
			Interval: s.cfg.ReminderInterval, Limit: remindLimit})
		if err != nil {
			return total, err
		}
		total += len(evs)
		if len(evs) < remindLimit {
			return total, nil
		}
	}
}
