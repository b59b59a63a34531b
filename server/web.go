package server

import (
	"github.com/labstack/echo/v4"
)

// This file wires the dashboard into the server.

func (s *Server) mountWeb(e *echo.Echo) {}
