package server

import (
	"context"
	"errors"

	"github.com/vigilhq/vigil/evaluator"
)

// PruneOnce runs one pass of the pruning loop.
func (s *Server) PruneOnce(ctx context.Context) { s.pruneOnce(ctx) }

// ReportOnce makes the evaluator Run started look for reports due once.
func (s *Server) ReportOnce(ctx context.Context) (*evaluator.Reports, error) {
	ev := s.evaluator.Load()
	if ev == nil {
		return nil, errors.New("the evaluator has not started")
	}
	return ev.ReportOnce(ctx)
}
