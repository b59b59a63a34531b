package server

import (
	"context"
	"net/netip"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/ingest"
)

// This file wires the ping endpoints (/ping/...) and the batching writer into the server.

// IngestSettings configures the ping endpoints (/ping/...) and the batching
// writer. Zero values take ingest's defaults, except RateLimit (0: no
// limit) and BatchWindow (0: no waiting); see ingest.Config.
type IngestSettings struct {
	BodyLimit   int64
	BatchSize   int
	BatchWindow time.Duration
	RateLimit   float64
	RateBurst   int
	// FailureLimit and FailureBurst limit the pings per client address
	// that end in 404 or 400 (see ingest.Config); 0 takes the defaults.
	FailureLimit   float64
	FailureBurst   int
	TrustedProxies []netip.Prefix
	// Writers is how many batches may be written at once; 0 picks by
	// database: 1 for SQLite, which has one writer anyway, more for
	// PostgreSQL, where they overlap.
	Writers int
}

// postgresIngestWriters is how many batches are written at once on
// PostgreSQL when IngestSettings.Writers is 0.
const postgresIngestWriters = 2

func (s *Server) mountIngest(e *echo.Echo) {
	c := s.cfg.Ingest
	writers := s.cfg.ingestWriters()
	s.ingest = ingest.New(ingest.Config{
		Store:          s.store,
		BodyLimit:      c.BodyLimit,
		BatchSize:      c.BatchSize,
		BatchWindow:    c.BatchWindow,
		Writers:        writers,
		RateLimit:      c.RateLimit,
		RateBurst:      c.RateBurst,
		FailureLimit:   c.FailureLimit,
		FailureBurst:   c.FailureBurst,
		TrustedProxies: c.TrustedProxies,
		Registerer:     s.Registry,
		Logger:         s.logger.With("part", "ingest"),
		NowFunc:        s.cfg.NowFunc,
	})
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
