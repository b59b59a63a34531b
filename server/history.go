package server

import (
	"cmp"
	"context"
	"time"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// KeepHistoryDefault is the default of VIGIL_KEEP_HISTORY: 400 days, so
// that a year's incidents can be compared with the year before.
const KeepHistoryDefault = 400 * 24 * time.Hour

// storeLimits are the bounds the server's store enforces.
type storeLimits struct {
	maxMonitors int // per project; 0 is no limit
	// sealer encrypts channel configs at rest; nil stores them as given
	// (commands that touch no channel).
	sealer plan.Sealer
}

func (c *Config) storeLimits() storeLimits {
	return storeLimits{maxMonitors: cmp.Or(c.MaxMonitorsPerProject, monitors.MaxMonitorsPerProjectDefault)}
}

func (c *Config) keepHistory() time.Duration { return cmp.Or(c.KeepHistory, KeepHistoryDefault) }

// pruneOnce deletes, in batches, the pings and runs beyond what each
// monitor keeps (VIGIL_KEEP_PINGS, VIGIL_KEEP_RUNS), the pings older than
// VIGIL_KEEP_HISTORY (on PostgreSQL a month's partition at a time), and
// the incidents resolved more than VIGIL_KEEP_HISTORY ago with their
// events, deliveries and attempts. Open incidents are never pruned.
func (s *Server) pruneOnce(ctx context.Context) {
	now := s.cfg.now()
	n, err := s.store.PingPrune(ctx, &monitors.PingPruneParams{KeepPings: s.cfg.KeepPings, KeepRuns: s.cfg.KeepRuns,
		Before: now.Add(-s.cfg.keepHistory()), Now: now})
	switch {
	case err != nil && ctx.Err() == nil:
		s.logger.Error("prune history", "err", err)
	case n > 0:
		s.logger.Debug("pruned history", "rows", n)
	}
	cutoff := now.Add(-s.cfg.keepHistory())
	n, err = s.store.IncidentPrune(ctx, &monitors.IncidentPruneParams{ResolvedBefore: cutoff})
	switch {
	case err != nil && ctx.Err() == nil:
		s.logger.Error("prune incidents", "err", err)
	case n > 0:
		s.logger.Info("pruned old incidents", "incidents", n, "resolved_before", cutoff.UTC().Format(time.RFC3339))
	}
}
