package server

import "context"

// PruneOnce runs one pass of the pruning loop.
func (s *Server) PruneOnce(ctx context.Context) { s.pruneOnce(ctx) }
