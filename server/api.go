package server

import (
	"github.com/labstack/echo/v4"
)

// This file wires the management API under /api/v1, /metrics and badges into the server.

// APISettings configures the management API under /api/v1, /metrics and badges.
type APISettings struct{}

func (s *Server) mountAPI(e *echo.Echo) {}
