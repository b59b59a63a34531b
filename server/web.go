package server

import (
	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/web"
)

// This file wires the dashboard into the server.

// mountWeb serves the dashboard. It sends test notifications and lists
// delivery attempts through what the delivery part lends the API (see
// apiChannelTester), so that the button and the API do the same.
func (s *Server) mountWeb(e *echo.Echo) {
	cfg := s.cfg.Web
	cfg.Store, cfg.BaseURL, cfg.NowFunc = s.store, s.cfg.BaseURL, s.cfg.NowFunc
	cfg.Logger = s.logger.With("part", "web")
	cfg.TrustedProxies, cfg.SetupToken = s.cfg.Ingest.TrustedProxies, s.SetupToken
	if t := s.apiChannelTester(); t != nil {
		cfg.ChannelTester = t
	}
	cfg.Deliveries = s.deliveryLister()
	if s.keys != nil {
		cfg.Signer = s.keys
	}
	h, err := web.New(cfg)
	if err != nil {
		// Only a broken build (templates that do not parse) gets here.
		s.logger.Error("dashboard not served", "err", err)
		return
	}
	h.Register(e)
	s.web.Store(h)
}
