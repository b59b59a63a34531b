package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// MonitorInsert stores a new monitor. Its next deadline is derived from its
// state (see [monitors.Monitor.NextDeadline]). A slug or ping key already in
// use is monitors.ErrConflict; an unknown project is monitors.ErrNotFound.
func (s *Store) MonitorInsert(ctx context.Context, m *monitors.Monitor) error {
	args, err := monitorArgs(m)
	if err != nil {
		return fmt.Errorf("insert monitor: %w", err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if err := s.checkRoom(ctx, tx, m.ProjectID, 1); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, qMonitorInsert, args...)
		return interpret(err)
	})
	if err != nil {
		return fmt.Errorf("insert monitor: %w", err)
	}
	return nil
}

// MonitorGet returns a monitor of the project.
func (s *Store) MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.pool.QueryRow(ctx, qMonitorGet, projectID, id))
	if err != nil {
		return nil, fmt.Errorf("get monitor %s: %w", id, err)
	}
	return m, nil
}

// MonitorGetBySlug returns the project's monitor with that slug.
func (s *Store) MonitorGetBySlug(ctx context.Context, projectID, slug string) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.pool.QueryRow(ctx, qMonitorGetBySlug, projectID, slug))
	if err != nil {
		return nil, fmt.Errorf("get monitor by slug %q: %w", slug, err)
	}
	return m, nil
}

// MonitorGetByPingKey returns the monitor with that ping key.
func (s *Store) MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.pool.QueryRow(ctx, qMonitorGetByPingKey, pingKey))
	if err != nil {
		return nil, fmt.Errorf("get monitor by ping key: %w", err)
	}
	return m, nil
}

// MonitorList returns the project's monitors that pass p's filters, ordered
// by name then ID. A Limit of 0 or less returns them all.
func (s *Store) MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error) {
	var (
		where = []string{"project_id = $1"}
		args  = []any{p.ProjectID}
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if p.Tag != "" {
		where = append(where, "tags @> ARRAY["+arg(p.Tag)+"::text]")
	}
	if p.Source != "" {
		where = append(where, "source = "+arg(p.Source))
	}
	if len(p.Statuses) > 0 {
		var or []string
		var stored []string
		for _, st := range p.Statuses {
			switch st {
			case monitors.StatusLate:
				// Late is derived: up, with the expected time passed.
				or = append(or, "(status = 'up' AND next_expected_at <= "+arg(p.Now.UTC())+")")
			case monitors.StatusUp:
				or = append(or, "(status = 'up' AND (next_expected_at IS NULL OR next_expected_at > "+arg(p.Now.UTC())+"))")
			default:
				stored = append(stored, string(st))
			}
		}
		if len(stored) > 0 {
			or = append(or, "status = ANY("+arg(stored)+"::text[])")
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	q := "SELECT " + monitorCols + " FROM monitors WHERE " + strings.Join(where, " AND ") + " ORDER BY name, id"
	if p.Limit > 0 {
		q += " LIMIT " + arg(p.Limit)
	}
	if p.Offset > 0 {
		q += " OFFSET " + arg(p.Offset)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Monitor, error) { return scanMonitor(r) })
	if err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	return out, nil
}

// MonitorModify loads a monitor under a row lock, lets p.Fn change it, and
// writes the whole row with the transition Fn returns, in one transaction.
// Fn must not change the monitor's ID or project. An error from Fn is
// returned as is, and nothing is written.
func (s *Store) MonitorModify(ctx context.Context, p *monitors.MonitorModifyParams) (*monitors.Monitor, error) {
	var m *monitors.Monitor
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = scanMonitor(tx.QueryRow(ctx, qMonitorGetForUpdate, p.ProjectID, p.ID))
		if err != nil {
			return fmt.Errorf("modify monitor %s: %w", p.ID, err)
		}
		tr, err := p.Fn(m)
		if err != nil {
			return err
		}
		if m.ID != p.ID || m.ProjectID != p.ProjectID {
			return fmt.Errorf("modify monitor %s: the ID and project of a monitor cannot change", p.ID)
		}
		w := writeSet{monitors: []*monitors.Monitor{m}, fullRow: true}
		if tr != nil {
			w.changes = []change{{m: m, tr: tr}}
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("modify monitor %s: %w", p.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// MonitorDelete deletes a monitor of the project with its pings, runs,
// incidents and incident events.
func (s *Store) MonitorDelete(ctx context.Context, projectID, id string) error {
	tag, err := s.pool.Exec(ctx, qMonitorDelete, projectID, id)
	if err != nil {
		return fmt.Errorf("delete monitor %s: %w", id, interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete monitor %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

// checkMonitor returns monitors.ErrNotFound unless the project has the
// monitor.
func (s *Store) checkMonitor(ctx context.Context, projectID, id string) error {
	var ok bool
	if err := s.pool.QueryRow(ctx, qMonitorExists, projectID, id).Scan(&ok); err != nil {
		return interpret(err)
	}
	if !ok {
		return monitors.ErrNotFound
	}
	return nil
}

// monitorArgs returns the arguments of qMonitorInsert and qMonitorUpdate.
// NextDeadlineAt is derived from the state here, so the stored deadline
// never disagrees with it.
func monitorArgs(m *monitors.Monitor) ([]any, error) {
	m.NextDeadlineAt = m.NextDeadline()
	state, err := encodeState(m.State)
	if err != nil {
		return nil, err
	}
	retry, err := encodeRetryPolicy(m.RetryPolicy)
	if err != nil {
		return nil, err
	}
	return []any{
		m.ID, m.ProjectID, m.Name, m.Slug, nonNil(m.Tags), string(m.Schedule.Kind), m.Schedule.Expr,
		m.Schedule.TZ, m.Schedule.EverySeconds, m.GraceSeconds, m.MaxRuntimeSeconds, m.DeadlineSeconds,
		string(m.AlertOnFailure), m.FailureThreshold, m.RecoveryThreshold, string(m.Overlap),
		nonNil(m.Channels), m.Paused, m.Source, m.Discovered, retry, m.PingKey,
		m.CreatedAt.UTC(), m.UpdatedAt.UTC(), string(m.State.Status), state, timeOrNil(m.State.LastPingAt),
		timeOrNil(m.State.Expected), ceilMicro(m.NextDeadlineAt), string(m.Schedule.Dialect),
	}, nil
}

// scanMonitor reads a row of monitorCols.
func scanMonitor(r pgx.Row) (*monitors.Monitor, error) {
	var (
		m                    monitors.Monitor
		kind, alert, overlap string
		dialect              string
		retry, state         []byte
		nextDeadline         *time.Time
	)
	err := r.Scan(&m.ID, &m.ProjectID, &m.Name, &m.Slug, &m.Tags, &kind, &m.Schedule.Expr, &m.Schedule.TZ,
		&m.Schedule.EverySeconds, &m.GraceSeconds, &m.MaxRuntimeSeconds, &m.DeadlineSeconds, &alert,
		&m.FailureThreshold, &m.RecoveryThreshold, &overlap, &m.Channels, &m.Paused, &m.Source, &m.Discovered,
		&retry, &m.PingKey, &m.CreatedAt, &m.UpdatedAt, &state, &nextDeadline, &dialect)
	if err != nil {
		return nil, interpret(err)
	}
	m.Schedule.Kind, m.Schedule.Dialect = monitors.ScheduleKind(kind), monitors.Dialect(dialect)
	m.AlertOnFailure, m.Overlap = monitors.AlertOnFailure(alert), monitors.OverlapPolicy(overlap)
	m.CreatedAt, m.UpdatedAt, m.NextDeadlineAt = utc(m.CreatedAt), utc(m.UpdatedAt), utcPtr(nextDeadline)
	if retry != nil {
		m.RetryPolicy = new(monitors.RetryPolicy)
		if err := json.Unmarshal(retry, m.RetryPolicy); err != nil {
			return nil, fmt.Errorf("decode retry policy of monitor %s: %w", m.ID, err)
		}
	}
	if err := decodeState(state, &m.State); err != nil {
		return nil, fmt.Errorf("monitor %s: %w", m.ID, err)
	}
	return &m, nil
}

var errNoMonitor = errors.New("ping names no monitor: give a ping key, or a project ping key and a slug")
