package server

import (
	"errors"
	"log/slog"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vigilhq/vigil/api"
)

// This file wires the management API under /api/v1, /metrics and badges into the server.

func (s *Server) mountAPI(e *echo.Echo) {
	cfg := s.cfg.API
	cfg.Store, cfg.BaseURL, cfg.NowFunc = s.store, s.cfg.BaseURL, s.cfg.NowFunc
	cfg.Logger, cfg.Registerer = s.logger.With("part", "api"), s.Registry
	if t := s.apiChannelTester(); t != nil {
		cfg.ChannelTester = t
	}
	cfg.Deliveries = s.deliveryLister()
	cfg.StatusPagesChanged = func(projectID string, slugs ...string) {
		if w := s.web.Load(); w != nil {
			w.StatusPagesChanged(projectID, slugs...)
		}
	}
	h, err := api.New(cfg)
	if err != nil {
		// Only registering metrics can fail: serve the API without them
		// rather than not at all.
		s.logger.Error("register API metrics", "err", err)
		cfg.Registerer = nil
		h, _ = api.New(cfg)
	}
	h.Mount(e)
	s.mountMetrics(e)
}

// mountMetrics serves the registry of every part at GET /metrics, with the
// Go runtime's and the process's own metrics.
func (s *Server) mountMetrics(e *echo.Echo) {
	if s.Registry == nil {
		return
	}
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		var already prometheus.AlreadyRegisteredError
		if err := s.Registry.Register(c); err != nil && !errors.As(err, &already) {
			s.logger.Error("register runtime metrics", "err", err)
		}
	}
	h := promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(s.logger.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      s.Registry,
	})
	e.GET("/metrics", echo.WrapHandler(h))
}
