package server

import (
	"context"
)

// This file wires the evaluator loop into the server.

// EvaluatorSettings configures the evaluator loop.
type EvaluatorSettings struct{}

func (s *Server) evaluatorServices() []func(context.Context) { return nil }
