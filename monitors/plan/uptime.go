package plan

import (
	"context"

	"github.com/vigilhq/vigil/monitors"
)

// UptimeHistory reads what a monitor's uptime is computed from: its runs
// finished in [p.From, p.To) and its incidents open at some instant of it.
// A monitor of another project is monitors.ErrNotFound.
func (s *Scripts) UptimeHistory(ctx context.Context, p *monitors.UptimeHistoryParams) (*monitors.UptimeHistory, error) {
	if err := s.check(ctx, "read uptime history of monitor "+p.MonitorID, s.Q.MonitorExists, p.ProjectID, p.MonitorID); err != nil {
		return nil, err
	}
	from, to := p.From.UTC(), p.To.UTC()
	runs, err := All(ctx, s.r(), scanRun, s.Q.RunsFinishedBetween, p.MonitorID, from, to)
	if err != nil {
		return nil, wrapErr(err, "list runs of monitor %s for uptime", p.MonitorID)
	}
	incidents, err := All(ctx, s.r(), scanIncident, s.Q.IncidentsOverlapping, p.MonitorID, from, to)
	if err != nil {
		return nil, wrapErr(err, "list incidents of monitor %s for uptime", p.MonitorID)
	}
	return &monitors.UptimeHistory{Runs: runs, Incidents: incidents}, nil
}
