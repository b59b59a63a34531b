package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/monitors"
)

// Server is a running Vigil: one process of any number sharing a database.
type Server struct {
	cfg    Config
	logger *slog.Logger
	store  monitors.Store
	echo   *echo.Echo

	// Bootstrapped is set when this start created the default project.
	Bootstrapped *Bootstrap
	// Registry holds the metrics of every part, served at /metrics.
	Registry *prometheus.Registry
	ingest   *ingest.Service

	listener net.Listener
}

// New opens the store, creates the default project on an empty database,
// and builds the HTTP routes. It starts nothing; Run does.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Server, error) {
	derivedBaseURL := cfg.BaseURL == ""
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	var listener net.Listener
	if _, port, _ := net.SplitHostPort(cfg.Listen); derivedBaseURL && port == "0" {
		// The base URL names the port, which is only known once bound: bind
		// now, so that ping URLs and links point where we listen.
		l, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", cfg.Listen, err)
		}
		listener = l
		cfg.BaseURL = "http://" + l.Addr().String()
	}
	store, err := OpenStore(ctx, cfg.DatabaseURL, logger)
	if err != nil {
		if listener != nil {
			_ = listener.Close()
		}
		return nil, err
	}
	s := &Server{cfg: cfg, logger: logger, store: store, Registry: prometheus.NewRegistry(), listener: listener}
	s.Bootstrapped, err = BootstrapIfEmpty(ctx, store, cfg.now())
	if err != nil {
		_ = store.Close()
		if listener != nil {
			_ = listener.Close()
		}
		return nil, err
	}
	s.echo = s.routes()
	return s, nil
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

// Run serves until ctx is done, then shuts down within ShutdownTimeout:
// HTTP drains (no new ping is accepted, and each one in flight is
// answered once stored) while the evaluator and delivery stop (sends in
// flight finish, or are cancelled and handed back to the queue); then
// ingest writes what it holds, and the store closes.
func (s *Server) Run(ctx context.Context) error {
	if s.listener == nil {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	hs := &http.Server{
		Handler:           s.echo,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	// Ingest stops after HTTP, so that every ping a handler still holds is
	// written; the rest stops as soon as shutdown begins, beside HTTP's
	// drain, so that their bounds do not add up.
	ingestCtx, stopIngest := context.WithCancel(context.WithoutCancel(ctx))
	defer stopIngest()
	restCtx, stopRest := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRest()
	var ingestWG, restWG sync.WaitGroup
	for _, svc := range s.ingestServices() {
		ingestWG.Go(func() { svc(ingestCtx) })
	}
	for _, svc := range s.background() {
		restWG.Go(func() { svc(restCtx) })
	}

	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(s.listener) }()
	s.logger.Info("vigil serving", "addr", s.listener.Addr().String(), "base_url", s.cfg.BaseURL)

	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
		err = fmt.Errorf("serve HTTP: %w", err)
	}
	s.logger.Info("vigil shutting down")
	deadline := time.Now().Add(ShutdownTimeout)
	stopRest()
	drainCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), httpDrainTimeout)
	defer cancel()
	if serr := hs.Shutdown(drainCtx); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		// Requests still open were not answered: their pings were not
		// acknowledged, so their clients send them again.
		_ = hs.Close()
		err = errors.Join(err, fmt.Errorf("shut down HTTP: %w", serr))
	}
	stopIngest()
	if !waitUntil(&ingestWG, deadline) || !waitUntil(&restWG, deadline) {
		// Something ignores its cancellation. What it holds is durable
		// already: a delivery job left running is rescued after the next
		// start.
		s.logger.Error("shutdown took too long; exiting without waiting for the rest", "timeout", ShutdownTimeout.String())
		return errors.Join(err, fmt.Errorf("shutdown took longer than %s", ShutdownTimeout))
	}
	if cerr := s.store.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close store: %w", cerr))
	}
	return err
}

// Bounds of shutdown: Run returns within ShutdownTimeout of the signal.
// HTTP drains for at most httpDrainTimeout, while the background services
// stop (delivery waits for its sends, then cancels them: see
// delivery.Service.Stop); then ingest writes what it holds.
const (
	ShutdownTimeout  = 20 * time.Second
	httpDrainTimeout = 10 * time.Second
)

// waitUntil waits for wg until deadline, and reports whether it ended.
func waitUntil(wg *sync.WaitGroup, deadline time.Time) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// background lists the services that run beside HTTP until shutdown
// begins; ingest's are apart (ingestServices), as they outlive HTTP.
func (s *Server) background() []func(context.Context) {
	svcs := []func(context.Context){s.pruneLoop}
	svcs = append(svcs, s.evaluatorServices()...)
	svcs = append(svcs, s.deliveryServices()...)
	return svcs
}

// pruneLoop keeps the history of each monitor bounded.
func (s *Server) pruneLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.PruneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.store.PingPrune(ctx, &monitors.PingPruneParams{KeepPings: s.cfg.KeepPings, KeepRuns: s.cfg.KeepRuns})
		if err != nil {
			if ctx.Err() == nil {
				s.logger.Error("prune history", "err", err)
			}
			continue
		}
		if n > 0 {
			s.logger.Debug("pruned history", "rows", n)
		}
	}
}
