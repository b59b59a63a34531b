package server

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// routes lists every HTTP route of Vigil.
func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.errorHandler

	e.GET("/healthz", s.healthz)
	e.HEAD("/healthz", s.healthz)
	e.GET("/readyz", s.readyz)
	e.HEAD("/readyz", s.readyz)

	s.mountIngest(e)
	s.mountAPI(e)
	s.mountWeb(e)
	return e
}

// healthz answers while the process is up.
func (s *Server) healthz(c echo.Context) error { return c.String(http.StatusOK, "OK") }

// readyz answers 200 when this replica should get traffic, and 503 with
// the reason otherwise: migrations run, the database does not answer, or
// the replica is shutting down (see readiness.go).
func (s *Server) readyz(c echo.Context) error {
	ok, why := s.ready.check(c.Request().Context())
	if !ok {
		s.logger.Warn("not ready", "reason", why)
		return c.String(http.StatusServiceUnavailable, why)
	}
	return c.String(http.StatusOK, why)
}

// errorHandler writes errors as JSON under /api and as short plain text
// elsewhere. It unwraps with errors.As, so a wrapped *echo.HTTPError keeps
// its status (echo's default handler would make it a 500).
func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg := http.StatusInternalServerError, "internal error"
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status = he.Code
		if m, ok := he.Message.(string); ok && m != http.StatusText(status) {
			msg = m
		} else {
			// echo's own errors ("Not Found") read like ours ("not found").
			msg = strings.ToLower(http.StatusText(status))
		}
	} else {
		s.logger.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if c.Request().Method == http.MethodHead {
		_ = c.NoContent(status)
		return
	}
	if strings.HasPrefix(c.Request().URL.Path, "/api/") {
		_ = c.JSON(status, map[string]string{"error": msg})
		return
	}
	_ = c.String(status, msg)
}
