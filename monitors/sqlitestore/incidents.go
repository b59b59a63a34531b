package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// IncidentGet returns an incident of the project.
func (s *Store) IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error) {
	in, err := scanIncident(s.r.QueryRowContext(ctx, qIncidentGet, projectID, id))
	if err != nil {
		return nil, fmt.Errorf("get incident %s: %w", id, err)
	}
	return in, nil
}

// IncidentList returns the project's incidents, newest first. With Since,
// only incidents that were open at some instant at or after Since: still
// open, or resolved at or after it. A MonitorID of another project is
// monitors.ErrNotFound. A Limit of 0 or less returns them all.
func (s *Store) IncidentList(ctx context.Context, p *monitors.IncidentListParams) ([]*monitors.Incident, error) {
	if p.MonitorID != "" {
		if err := s.checkMonitor(ctx, p.ProjectID, p.MonitorID); err != nil {
			return nil, fmt.Errorf("list incidents of monitor %s: %w", p.MonitorID, err)
		}
	}
	out, err := queryAll(ctx, s.r, qIncidentList, []any{p.ProjectID, p.MonitorID, p.OpenOnly, microsPtr(p.Since),
		limitArg(p.Limit), max(p.Offset, 0)}, scanIncident)
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	return out, nil
}

func scanIncident(r scanner) (*monitors.Incident, error) {
	var (
		in       monitors.Incident
		kind     string
		opened   int64
		resolved sql.NullInt64
	)
	err := r.Scan(&in.ID, &in.ProjectID, &in.MonitorID, &kind, &opened, &resolved, &in.Summary,
		&in.ResolveSummary, &in.RunSeq, &in.PingID)
	if err != nil {
		return nil, interpret(err)
	}
	in.Kind, in.OpenedAt, in.ResolvedAt = monitors.IncidentKind(kind), fromMicros(opened), fromNullMicros(resolved)
	return &in, nil
}

// IncidentEventList returns incident events of the project, oldest first:
// those of p.IncidentID, or all when it is empty. An incident of another
// project is monitors.ErrNotFound. A Limit of 0 or less returns them all.
func (s *Store) IncidentEventList(ctx context.Context, p *monitors.IncidentEventListParams) ([]*monitors.IncidentEvent, error) {
	if p.IncidentID != "" {
		var ok bool
		if err := s.r.QueryRowContext(ctx, qIncidentExists, p.ProjectID, p.IncidentID).Scan(&ok); err != nil {
			return nil, fmt.Errorf("list events of incident %s: %w", p.IncidentID, interpret(err))
		}
		if !ok {
			return nil, fmt.Errorf("list events of incident %s: %w", p.IncidentID, monitors.ErrNotFound)
		}
	}
	out, err := queryAll(ctx, s.r, qIncidentEventList, []any{p.ProjectID, p.IncidentID, limitArg(p.Limit)},
		func(r scanner) (*monitors.IncidentEvent, error) {
			var (
				e    monitors.IncidentEvent
				kind string
				at   int64
			)
			if err := r.Scan(&e.ID, &e.IncidentID, &e.MonitorID, &e.ProjectID, &kind, &at, &e.Summary); err != nil {
				return nil, err
			}
			e.Kind, e.At = monitors.IncidentEventKind(kind), fromMicros(at)
			return &e, nil
		})
	if err != nil {
		return nil, fmt.Errorf("list incident events: %w", err)
	}
	return out, nil
}
