package server

import (
	"context"
	"github.com/labstack/echo/v4"
)

// This file wires the ping endpoints (/ping/...) and the batching writer into the server.

// IngestSettings configures the ping endpoints (/ping/...) and the batching writer.
type IngestSettings struct{}

func (s *Server) mountIngest(e *echo.Echo) {}

func (s *Server) ingestServices() []func(context.Context) { return nil }
