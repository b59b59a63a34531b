package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// IncidentGet returns an incident of the project.
func (s *Store) IncidentGet(ctx context.Context, projectID, id string) (*monitors.Incident, error) {
	in, err := scanIncident(s.pool.QueryRow(ctx, qIncidentGet, projectID, id))
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
	rows, err := s.pool.Query(ctx, qIncidentList, p.ProjectID, p.MonitorID, p.OpenOnly, utcPtr(p.Since),
		limitArg(p.Limit), max(p.Offset, 0))
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Incident, error) { return scanIncident(r) })
	if err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	return out, nil
}

func scanIncident(r pgx.Row) (*monitors.Incident, error) {
	var (
		in   monitors.Incident
		kind string
	)
	err := r.Scan(&in.ID, &in.ProjectID, &in.MonitorID, &kind, &in.OpenedAt, &in.ResolvedAt, &in.Summary,
		&in.ResolveSummary, &in.RunSeq, &in.PingID)
	if err != nil {
		return nil, interpret(err)
	}
	in.Kind, in.OpenedAt, in.ResolvedAt = monitors.IncidentKind(kind), utc(in.OpenedAt), utcPtr(in.ResolvedAt)
	return &in, nil
}

// IncidentEventList returns incident events of the project, oldest first:
// those of p.IncidentID, or all when it is empty. An incident of another
// project is monitors.ErrNotFound. A Limit of 0 or less returns them all.
func (s *Store) IncidentEventList(ctx context.Context, p *monitors.IncidentEventListParams) ([]*monitors.IncidentEvent, error) {
	if p.IncidentID != "" {
		var ok bool
		if err := s.pool.QueryRow(ctx, qIncidentExists, p.ProjectID, p.IncidentID).Scan(&ok); err != nil {
			return nil, fmt.Errorf("list events of incident %s: %w", p.IncidentID, interpret(err))
		}
		if !ok {
			return nil, fmt.Errorf("list events of incident %s: %w", p.IncidentID, monitors.ErrNotFound)
		}
	}
	rows, err := s.pool.Query(ctx, qIncidentEventList, p.ProjectID, p.IncidentID, limitArg(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list incident events: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.IncidentEvent, error) {
		var (
			e    monitors.IncidentEvent
			kind string
		)
		if err := r.Scan(&e.ID, &e.IncidentID, &e.MonitorID, &e.ProjectID, &kind, &e.At, &e.Summary); err != nil {
			return nil, err
		}
		e.Kind, e.At = monitors.IncidentEventKind(kind), utc(e.At)
		return &e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list incident events: %w", err)
	}
	return out, nil
}
