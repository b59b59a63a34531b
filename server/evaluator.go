package server

import (
	"context"

	"github.com/vigilhq/vigil/evaluator"
)

// This file wires the evaluator loop into the server.

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

func (s *Server) evaluatorServices() []func(context.Context) {
	cfg := s.cfg.Evaluator
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
	s.evaluator.Store(ev)
	return []func(context.Context){ev.Run}
}
