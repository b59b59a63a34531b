package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/ingest"
)

// This file wires the ping endpoints (/ping/...) and the batching writer into the server.

// postgresIngestWriters is how many batches are written at once on
// PostgreSQL when Config.Ingest.Writers is 0.
const postgresIngestWriters = 2

func (s *Server) mountIngest(e *echo.Echo) {
	c := s.cfg.Ingest
	c.Store, c.Writers, c.NowFunc = s.store, s.cfg.ingestWriters(), s.cfg.NowFunc
	c.Registerer, c.Logger = s.Registry, s.logger.With("part", "ingest")
	s.ingest = ingest.New(c)
	s.ingest.Mount(e)
}

// ingestWriters is how many batches of pings are written at once.
func (c *Config) ingestWriters() int {
	if c.Ingest.Writers > 0 {
		return c.Ingest.Writers
	}
	if IsPostgresURL(c.DatabaseURL) {
		return postgresIngestWriters
	}
	return 1
}

func (s *Server) ingestServices() []func(context.Context) {
	return []func(context.Context){s.ingest.Run}
}
