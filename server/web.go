package server

import (
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/web"
)

// This file wires the dashboard into the server.

// WebSettings configures the dashboard.
type WebSettings struct {
	// RefreshInterval is how often lists and monitor pages refresh their
	// live parts; 0 is web.RefreshIntervalDefault.
	RefreshInterval time.Duration
}

// mountWeb serves the dashboard. It sends test notifications and lists
// delivery attempts through what the delivery part lends the API (see
// apiChannelTester), so that the button and the API do the same.
func (s *Server) mountWeb(e *echo.Echo) {
	cfg := web.Config{
		Store:           s.store,
		BaseURL:         s.cfg.BaseURL,
		Logger:          s.logger.With("part", "web"),
		NowFunc:         s.cfg.NowFunc,
		RefreshInterval: s.cfg.Web.RefreshInterval,
		TrustedProxies:  s.cfg.Ingest.TrustedProxies,
		SetupToken:      s.SetupToken,
	}
	if t := s.apiChannelTester(); t != nil {
		cfg.ChannelTester = t
	}
	cfg.Deliveries = s.deliveryLister()
	h, err := web.New(cfg)
	if err != nil {
		// Only a broken build (templates that do not parse) gets here.
		s.logger.Error("dashboard not served", "err", err)
		return
	}
	h.Register(e)
}
