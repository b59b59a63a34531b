package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

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
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkRoom(ctx, tx, m.ProjectID, 1); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, qMonitorInsert, args...)
		return interpret(err)
	})
	if err != nil {
		return fmt.Errorf("insert monitor: %w", err)
	}
	return nil
}

// MonitorGet returns a monitor of the project.
func (s *Store) MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.r.QueryRowContext(ctx, qMonitorGet, projectID, id))
	if err != nil {
		return nil, fmt.Errorf("get monitor %s: %w", id, err)
	}
	return m, nil
}

// MonitorGetBySlug returns the project's monitor with that slug.
func (s *Store) MonitorGetBySlug(ctx context.Context, projectID, slug string) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.r.QueryRowContext(ctx, qMonitorGetBySlug, projectID, slug))
	if err != nil {
		return nil, fmt.Errorf("get monitor by slug %q: %w", slug, err)
	}
	return m, nil
}

// MonitorGetByPingKey returns the monitor with that ping key.
func (s *Store) MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.r.QueryRowContext(ctx, qMonitorGetByPingKey, pingKey))
	if err != nil {
		return nil, fmt.Errorf("get monitor by ping key: %w", err)
	}
	return m, nil
}

// MonitorList returns the project's monitors that pass p's filters, ordered
// by name then ID. A Limit of 0 or less returns them all.
func (s *Store) MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error) {
	var (
		where = []string{"project_id = ?"}
		args  = []any{p.ProjectID}
	)
	if p.Tag != "" {
		where = append(where, "EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)")
		args = append(args, p.Tag)
	}
	if p.Source != "" {
		where = append(where, "source = ?")
		args = append(args, p.Source)
	}
	if len(p.Statuses) > 0 {
		var or []string
		var stored []string
		for _, st := range p.Statuses {
			switch st {
			case monitors.StatusLate:
				// Late is derived: up, with the expected time passed.
				or = append(or, "(status = 'up' AND next_expected_at <= ?)")
				args = append(args, micros(p.Now))
			case monitors.StatusUp:
				or = append(or, "(status = 'up' AND (next_expected_at IS NULL OR next_expected_at > ?))")
				args = append(args, micros(p.Now))
			default:
				stored = append(stored, string(st))
			}
		}
		if len(stored) > 0 {
			list, err := encodeStrings(stored)
			if err != nil {
				return nil, fmt.Errorf("list monitors: %w", err)
			}
			or = append(or, "status IN (SELECT value FROM json_each(?))")
			args = append(args, list)
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	q := "SELECT " + monitorCols + " FROM monitors WHERE " + strings.Join(where, " AND ") +
		" ORDER BY name, id LIMIT ? OFFSET ?"
	args = append(args, limitArg(p.Limit), max(p.Offset, 0))
	out, err := queryAll(ctx, s.r, q, args, scanMonitor)
	if err != nil {
		return nil, fmt.Errorf("list monitors: %w", err)
	}
	return out, nil
}

// MonitorModify loads a monitor in a write transaction, lets p.Fn change
// it, and writes the whole row with the transition Fn returns. Fn must not
// change the monitor's ID or project. An error from Fn is returned as is,
// and nothing is written.
func (s *Store) MonitorModify(ctx context.Context, p *monitors.MonitorModifyParams) (*monitors.Monitor, error) {
	var m *monitors.Monitor
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		// No FOR UPDATE: the write transaction holds SQLite's only write
		// lock from its BEGIN IMMEDIATE.
		m, err = scanMonitor(tx.QueryRowContext(ctx, qMonitorGet, p.ProjectID, p.ID))
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
	res, err := s.w.ExecContext(ctx, qMonitorDelete, projectID, id)
	if err != nil {
		return fmt.Errorf("delete monitor %s: %w", id, interpret(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete monitor %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("delete monitor %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

// checkMonitor returns monitors.ErrNotFound unless the project has the
// monitor.
func (s *Store) checkMonitor(ctx context.Context, projectID, id string) error {
	var ok bool
	if err := s.r.QueryRowContext(ctx, qMonitorExists, projectID, id).Scan(&ok); err != nil {
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
	tags, err := encodeStrings(m.Tags)
	if err != nil {
		return nil, err
	}
	channels, err := encodeStrings(m.Channels)
	if err != nil {
		return nil, err
	}
	return []any{
		m.ID, m.ProjectID, m.Name, m.Slug, tags, string(m.Schedule.Kind), m.Schedule.Expr,
		m.Schedule.TZ, m.Schedule.EverySeconds, m.GraceSeconds, m.MaxRuntimeSeconds, m.DeadlineSeconds,
		string(m.AlertOnFailure), m.FailureThreshold, m.RecoveryThreshold, string(m.Overlap),
		channels, m.Paused, m.Source, m.Discovered, retry, m.PingKey,
		micros(m.CreatedAt), micros(m.UpdatedAt), string(m.State.Status), state, microsOrNil(m.State.LastPingAt),
		microsOrNil(m.State.Expected), ceilMicros(m.NextDeadlineAt), string(m.Schedule.Dialect),
	}, nil
}

// scanMonitor reads a row of monitorCols.
func scanMonitor(r scanner) (*monitors.Monitor, error) {
	var (
		m                     monitors.Monitor
		kind, alert, overlap  string
		dialect               string
		tags, channels, state string
		retry                 sql.NullString
		created, updated      int64
		nextDeadline          sql.NullInt64
	)
	err := r.Scan(&m.ID, &m.ProjectID, &m.Name, &m.Slug, &tags, &kind, &m.Schedule.Expr, &m.Schedule.TZ,
		&m.Schedule.EverySeconds, &m.GraceSeconds, &m.MaxRuntimeSeconds, &m.DeadlineSeconds, &alert,
		&m.FailureThreshold, &m.RecoveryThreshold, &overlap, &channels, &m.Paused, &m.Source, &m.Discovered,
		&retry, &m.PingKey, &created, &updated, &state, &nextDeadline, &dialect)
	if err != nil {
		return nil, interpret(err)
	}
	m.Schedule.Kind, m.Schedule.Dialect = monitors.ScheduleKind(kind), monitors.Dialect(dialect)
	m.AlertOnFailure, m.Overlap = monitors.AlertOnFailure(alert), monitors.OverlapPolicy(overlap)
	m.CreatedAt, m.UpdatedAt, m.NextDeadlineAt = fromMicros(created), fromMicros(updated), fromNullMicros(nextDeadline)
	if m.Tags, err = decodeStrings(tags); err != nil {
		return nil, fmt.Errorf("monitor %s tags: %w", m.ID, err)
	}
	if m.Channels, err = decodeStrings(channels); err != nil {
		return nil, fmt.Errorf("monitor %s channels: %w", m.ID, err)
	}
	if m.RetryPolicy, err = decodeRetryPolicy(retry); err != nil {
		return nil, fmt.Errorf("monitor %s: %w", m.ID, err)
	}
	if err := decodeState(state, &m.State); err != nil {
		return nil, fmt.Errorf("monitor %s: %w", m.ID, err)
	}
	return &m, nil
}

// limitArg returns a LIMIT argument: -1, no limit, for n <= 0.
func limitArg(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

var errNoMonitor = errors.New("ping names no monitor: give a ping key, or a project ping key and a slug")
