package server

import (
	"context"
	"time"

	"github.com/vigilhq/vigil/evaluator"
)

// This file wires the evaluator loop into the server.

// EvaluatorSettings configures the evaluator loop. Zero values take the
// evaluator's defaults; see evaluator.Config.
type EvaluatorSettings struct {
	// BatchSize is how many due monitors one claim transaction evaluates.
	BatchSize int
	// PollInterval is the longest sleep between two passes, at most a
	// second.
	PollInterval time.Duration
	// OutageThreshold is the longest gap in the evaluators' shared
	// heartbeat that is not an outage of Vigil.
	OutageThreshold time.Duration
}

// postgresEvaluatorWorkers is how many claims run at once during a burst
// on PostgreSQL: two overlap the evaluation of one batch with the writing
// of another. SQLite has one writer, so one.
const postgresEvaluatorWorkers = 2

// evaluatorWorkers is how many claims of the evaluator run at once.
func (c *Config) evaluatorWorkers() int {
	if IsPostgresURL(c.DatabaseURL) {
		return postgresEvaluatorWorkers
	}
	return 1
}

func (c EvaluatorSettings) config() evaluator.Config {
	return evaluator.Config{BatchSize: c.BatchSize, PollInterval: c.PollInterval, OutageThreshold: c.OutageThreshold}
}

// Validate checks the settings as the evaluator will.
func (c EvaluatorSettings) Validate() error { return c.config().Validate() }

func (s *Server) evaluatorServices() []func(context.Context) {
	cfg := s.cfg.Evaluator.config()
	cfg.NowFunc = s.cfg.NowFunc
	cfg.Logger = s.logger.With("part", "evaluator")
	cfg.Registerer = s.Registry
	cfg.Workers = s.cfg.evaluatorWorkers()
	ev, err := evaluator.New(s.store, cfg)
	if err != nil {
		// Config.Validate checked the settings, so only registering the
		// metrics twice gets here.
		s.logger.Error("evaluator not started", "err", err)
		return nil
	}
	return []func(context.Context){ev.Run}
}
