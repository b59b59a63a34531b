package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/ingest"
)

// This file wires the ping endpoints (/ping/...) and the batching writer into the server.

// postgresIngestWriters is how many batches are written at once on
// PostgreSQL when Config.Ingest.Writers is 0. One: PostgreSQL's CPU is what
// limits ingest, and much of a batch's cost is the same whatever its size
// (its statements and its commit), so one writer's larger batches cost
// less per ping than two writers' smaller ones (docs/benchmarks.md,
// Ingest, third round on PostgreSQL: mean batch 38 against 18, and about
// a quarter less of PostgreSQL's CPU per ping).
const postgresIngestWriters = 1

func (s *Server) mountIngest(e *echo.Echo) {
	c := s.cfg.Ingest
	c.Store, c.Writers, c.NowFunc = s.store, s.cfg.ingestWriters(), s.cfg.NowFunc
	c.QuietCut = s.cfg.ingestQuietCut()
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

// ingestQuietCut reports whether a batch's wait is cut once its pings stop
// coming (ingest.Config.QuietCut): on SQLite only. There a batch's fixed
// cost is small and the shorter wait raised the rate by a tenth; on
// PostgreSQL, whose commit's fsync is the fixed cost, the smaller batches
// cost more CPU per ping (docs/benchmarks.md, Ingest, seventh round on
// SQLite).
func (c *Config) ingestQuietCut() bool { return !IsPostgresURL(c.DatabaseURL) }

func (s *Server) ingestServices() []func(context.Context) {
	return []func(context.Context){s.ingest.Run}
}
