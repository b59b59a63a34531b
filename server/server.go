package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/secrets"
	"github.com/vigilhq/vigil/web"
)

// Server is a running Vigil: one process of any number sharing a database.
type Server struct {
	cfg    Config
	logger *slog.Logger
	store  monitors.Store
	echo   *echo.Echo
	// keys is the secret key file: it seals channel configs and signs
	// the links of notifications (snooze 1 h).
	keys *secrets.Keyring
	// queue makes the delivery service on the store's database; delivery
	// returns the one made.
	queue        deliveryQueue
	deliveryOnce sync.Once
	deliverySvc  *delivery.Service
	deliveryErr  error

	// Bootstrapped is set when this start created the default project.
	Bootstrapped *Bootstrap
	// SetupToken is set when the database had no account at start: the
	// one-time token of the first-account form (see SetupURL).
	SetupToken string
	// Registry holds the metrics of every part, served at /metrics.
	Registry *prometheus.Registry
	ingest   *ingest.Service
	// web is the dashboard, once mounted: the API tells it of changes of
	// status pages (statusPagesChanged).
	web atomic.Pointer[web.Handler]
	// evaluator is the evaluator Run started, nil before.
	evaluator atomic.Pointer[evaluator.Evaluator]

	listener net.Listener
	ready    readiness
	// routed is the handler of every route, once the store is open; until
	// then startingHandler answers.
	routed atomic.Pointer[echo.Echo]
	// hs serves the listener from Start (or Run) on; serveErr gets what
	// its Serve returns.
	hs       *http.Server
	serveErr chan error
}

// New opens the store, creates the default project on an empty database,
// and builds the HTTP routes. It starts nothing; Run does.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Server, error) {
	return build(ctx, cfg, logger, false)
}

// Start is New for a process an orchestrator runs: it binds the listen
// address first and answers /healthz (OK) and /readyz (not ready: applying
// database migrations) while it opens and migrates the store, so that a
// replica that migrates is seen alive but is sent no traffic. Every other
// path answers 503 with Retry-After until Run.
func Start(ctx context.Context, cfg Config, logger *slog.Logger) (*Server, error) {
	return build(ctx, cfg, logger, true)
}

func build(ctx context.Context, cfg Config, logger *slog.Logger, serveEarly bool) (*Server, error) {
	derivedBaseURL := cfg.BaseURL == ""
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	s := &Server{cfg: cfg, logger: logger, Registry: prometheus.NewRegistry()}
	if _, port, _ := net.SplitHostPort(cfg.Listen); serveEarly || (derivedBaseURL && port == "0") {
		// The base URL names the port, which is only known once bound: bind
		// now, so that ping URLs and links point where we listen.
		if err := s.Listen(); err != nil {
			return nil, err
		}
		if derivedBaseURL {
			s.cfg.BaseURL = "http://" + s.listener.Addr().String()
		}
	}
	if serveEarly {
		s.serveHTTP()
		s.logger.Info("vigil starting: applying database migrations", "addr", s.Addr())
	}
	fail := func(err error) (*Server, error) {
		if s.hs != nil {
			_ = s.hs.Close()
		} else if s.listener != nil {
			_ = s.listener.Close()
		}
		return nil, err
	}
	secretKeys, err := LoadSecretKeys(s.cfg.DatabaseURL, s.cfg.SecretKeyFile, logger)
	if err != nil {
		return fail(err)
	}
	lim := s.cfg.storeLimits()
	lim.sealer = secretKeys
	store, queue, err := openStore(ctx, s.cfg.DatabaseURL, logger, s.cfg.postgresOptions(logger), lim)
	if err != nil {
		return fail(err)
	}
	s.store, s.queue, s.keys = store, queue, secretKeys
	if err := sealChannelConfigs(ctx, store, secretKeys, logger); err != nil {
		_ = store.Close()
		return fail(err)
	}
	s.Bootstrapped, err = BootstrapIfEmpty(ctx, store, cfg.now())
	if err != nil {
		_ = store.Close()
		return fail(err)
	}
	users, err := store.UserCount(ctx)
	if err != nil {
		_ = store.Close()
		return fail(fmt.Errorf("count accounts: %w", err))
	}
	if users == 0 {
		s.SetupToken = keys.NewSetupToken()
	}
	s.echo = s.routes()
	ping := store.Ping
	s.ready.ping.Store(&ping)
	return s, nil
}

// SetupURL is the URL that opens the first-account form, valid until an
// account is made with it or the server restarts; "" when the database had
// an account at start.
func (s *Server) SetupURL() string {
	if s.SetupToken == "" {
		return ""
	}
	return s.cfg.BaseURL + "/setup?token=" + s.SetupToken
}

// Store returns the server's store.
func (s *Server) Store() monitors.Store { return s.store }

// Handler returns the HTTP handler of every route.
func (s *Server) Handler() http.Handler { return s.echo }

// Listen binds the configured address; Addr then tells the bound address
// (useful with port 0). Run calls it when it has not been called. It does
// nothing when the address is already bound.
func (s *Server) Listen() error {
	if s.listener != nil {
		return nil
	}
	l, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	s.listener = l
	return nil
}

// Addr returns the bound address, after Listen.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// httpServer returns the HTTP server of every route: the routes once the
// store is open, startingHandler before.
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler: withTimeouts(s.cfg.HTTPTimeouts, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if e := s.routed.Load(); e != nil {
				e.ServeHTTP(w, r)
				return
			}
			s.startingHandler(w, r)
		})),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeoutMax,
		WriteTimeout:      writeTimeoutMax,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
}

// serveHTTP starts serving the listener.
func (s *Server) serveHTTP() {
	s.hs = s.httpServer()
	s.serveErr = make(chan error, 1)
	go func() { s.serveErr <- s.hs.Serve(s.listener) }()
}

// Run serves until ctx is done, then shuts down within the shutdown
// timeout (Config.ShutdownTimeout), in order:
//
//  1. /readyz answers not ready (shutting down);
//  2. HTTP stops accepting and waits for the requests in flight, so each
//     ping already received is stored and answered while the ingest writer
//     still runs (up to half the timeout; then they are cut off);
//  3. the background services stop: the ingest writer writes out what is
//     queued, the evaluator ends its pass (a claim not committed is rolled
//     back, so the monitors go back to the other replicas), and delivery
//     waits for its attempts, then cancels those left, which River makes
//     available again;
//  4. the store closes.
//
// When the timeout passes first, Run returns an error without waiting
// more: the process exits, and the database rolls back what was open.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, svc := range s.background() {
		wg.Go(func() { svc(bgCtx) })
	}
	s.routed.Store(s.echo)
	s.ready.set(phaseServing)
	if s.hs == nil {
		s.serveHTTP()
	}
	s.logger.Info("vigil serving", "addr", s.listener.Addr().String(), "base_url", s.cfg.BaseURL)

	var err error
	select {
	case <-ctx.Done():
	case err = <-s.serveErr:
		err = fmt.Errorf("serve HTTP: %w", err)
	}
	timeout := s.cfg.shutdownTimeout()
	deadline := time.Now().Add(timeout)
	s.ready.set(phaseStopping)
	s.logger.Info("vigil shutting down", "timeout", timeout.String())
	httpCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout/2)
	defer cancel()
	if serr := s.hs.Shutdown(httpCtx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		s.logger.Warn("requests still in flight at the shutdown timeout were cut off", "err", serr)
		_ = s.hs.Close()
	}
	stopBackground()
	stopped := make(chan struct{})
	go func() { wg.Wait(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(time.Until(deadline)):
		// Closing the store would wait for the connections still in use.
		return errors.Join(err, fmt.Errorf("shut down: background work still running after %s; exiting, the database rolls back what it had open", timeout))
	}
	if cerr := s.store.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
	}
	s.logger.Info("vigil stopped")
	return err
}

// background lists the services that run beside HTTP until shutdown.
func (s *Server) background() []func(context.Context) {
	svcs := []func(context.Context){s.pruneLoop}
	svcs = append(svcs, s.ingestServices()...)
	svcs = append(svcs, s.evaluatorServices()...)
	svcs = append(svcs, s.deliveryServices()...)
	return svcs
}

// pruneLoop keeps the history bounded (see pruneOnce).
func (s *Server) pruneLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.PruneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.pruneOnce(ctx)
	}
}
