package sqlitestore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// The store methods of the management API: channels, person fields,
// declarations, counts for metrics and badge keys.

const (
	channelCols    = `id, project_id, kind, name, config, is_default, created_at, updated_at`
	qChannelCreate = `INSERT INTO channels (` + channelCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`
	qChannelGet    = `SELECT ` + channelCols + ` FROM channels WHERE project_id = ? AND id = ?`
	qChannelList   = `SELECT ` + channelCols + ` FROM channels WHERE project_id = ? ORDER BY name, id
		LIMIT ? OFFSET ?`
	qChannelUpdate = `UPDATE channels SET name = ?3, config = ?4, is_default = ?5, updated_at = ?6
		WHERE project_id = ?1 AND id = ?2`
	qChannelUsers = `SELECT slug FROM monitors WHERE project_id = ?1
		AND EXISTS (SELECT 1 FROM json_each(channels) WHERE value = ?2) ORDER BY slug`
	qChannelDelete = `DELETE FROM channels WHERE project_id = ? AND id = ?`

	qMonitorPersonFieldsGet = `SELECT person_fields FROM monitors WHERE project_id = ? AND id = ?`
	qMonitorPersonFieldsSet = `UPDATE monitors SET person_fields = ?3 WHERE project_id = ?1 AND id = ?2`
	qMonitorPersonFields    = `SELECT id, person_fields FROM monitors
		WHERE project_id = ?1 AND id IN (SELECT value FROM json_each(?2)) AND person_fields <> '[]'`
	// qMonitorSyncLock loads the monitors a declaration may touch. No FOR
	// UPDATE: the write transaction holds SQLite's only write lock.
	qMonitorSyncLock = `SELECT ` + monitorCols + `, person_fields FROM monitors
		WHERE project_id = ?1 AND (source = ?2 OR slug IN (SELECT value FROM json_each(?3))) ORDER BY id`

	// qMonitorCountByStatus derives late like MonitorList: up, with the
	// expected time passed.
	qMonitorCountByStatus = `SELECT CASE WHEN status = 'up' AND next_expected_at <= ? THEN 'late' ELSE status END,
		count(*) FROM monitors GROUP BY 1`
	qIncidentCountByKind = `SELECT kind, count(*), sum(resolved_at IS NULL) FROM incidents GROUP BY kind ORDER BY kind`

	qProjectBadgeKey = `SELECT coalesce(badge_key, '') FROM projects WHERE id = ?`
	// qProjectBadgeKeySet keeps a key another process set first.
	qProjectBadgeKeySet = `UPDATE projects SET badge_key = coalesce(badge_key, ?2) WHERE id = ?1 RETURNING badge_key`
)

// ChannelCreate stores a new channel. A name already used in the project
// (or an ID already used) is monitors.ErrConflict; an unknown project is
// monitors.ErrNotFound. A zero p.Now is the current time.
func (s *Store) ChannelCreate(ctx context.Context, p *monitors.ChannelCreateParams) (*monitors.Channel, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	_, err := s.w.ExecContext(ctx, qChannelCreate, p.ID, p.ProjectID, p.Kind, p.Name, configArg(p.Config), p.IsDefault,
		micros(now), micros(now))
	if err != nil {
		return nil, fmt.Errorf("create channel: %w", interpret(err))
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

// ChannelGet returns a channel of the project.
func (s *Store) ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	c, err := scanChannel(s.r.QueryRowContext(ctx, qChannelGet, projectID, id))
	if err != nil {
		return nil, fmt.Errorf("get channel %s: %w", id, err)
	}
	return c, nil
}

// ChannelList returns the project's channels by name.
func (s *Store) ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error) {
	out, err := queryAll(ctx, s.r, qChannelList, []any{p.ProjectID, limitArg(p.Limit), max(p.Offset, 0)}, scanChannel)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return out, nil
}

// ChannelModify changes a channel in a write transaction.
func (s *Store) ChannelModify(ctx context.Context, p *monitors.ChannelModifyParams) (*monitors.Channel, error) {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		c, err := scanChannel(tx.QueryRowContext(ctx, qChannelGet, p.ProjectID, p.ID))
		if err != nil {
			return fmt.Errorf("modify channel %s: %w", p.ID, err)
		}
		if err := p.Fn(c); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qChannelUpdate, p.ProjectID, p.ID, c.Name, configArg(c.Config), c.IsDefault,
			micros(c.UpdatedAt)); err != nil {
			return fmt.Errorf("modify channel %s: %w", p.ID, interpret(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

// ChannelDelete deletes a channel that no monitor of its project names.
func (s *Store) ChannelDelete(ctx context.Context, projectID, id string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := scanChannel(tx.QueryRowContext(ctx, qChannelGet, projectID, id)); err != nil {
			return fmt.Errorf("delete channel %s: %w", id, err)
		}
		users, err := queryAll(ctx, tx, qChannelUsers, []any{projectID, id}, func(r scanner) (string, error) {
			var slug string
			return slug, r.Scan(&slug)
		})
		if err != nil {
			return fmt.Errorf("delete channel %s: %w", id, interpret(err))
		}
		if len(users) > 0 {
			return &monitors.ChannelInUseError{ChannelID: id, Monitors: users}
		}
		if _, err := tx.ExecContext(ctx, qChannelDelete, projectID, id); err != nil {
			return fmt.Errorf("delete channel %s: %w", id, interpret(err))
		}
		return nil
	})
}

func scanChannel(r scanner) (*monitors.Channel, error) {
	var (
		c                monitors.Channel
		config           string
		created, updated int64
	)
	if err := r.Scan(&c.ID, &c.ProjectID, &c.Kind, &c.Name, &config, &c.IsDefault, &created, &updated); err != nil {
		return nil, interpret(err)
	}
	c.Config, c.CreatedAt, c.UpdatedAt = []byte(config), fromMicros(created), fromMicros(updated)
	return &c, nil
}

func configArg(raw []byte) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// MonitorPatch changes a monitor and its person fields in one write
// transaction.
func (s *Store) MonitorPatch(ctx context.Context, p *monitors.MonitorPatchParams) (*monitors.Monitor, []string, error) {
	var (
		m      *monitors.Monitor
		fields []string
	)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var (
			err error
			pf  string
		)
		m, err = scanMonitor(tx.QueryRowContext(ctx, qMonitorGet, p.ProjectID, p.ID))
		if err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, err)
		}
		if err := tx.QueryRowContext(ctx, qMonitorPersonFieldsGet, p.ProjectID, p.ID).Scan(&pf); err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, interpret(err))
		}
		if fields, err = decodeStrings(pf); err != nil {
			return fmt.Errorf("patch monitor %s: person fields: %w", p.ID, err)
		}
		tr, newFields, err := p.Fn(m, fields)
		if err != nil {
			return err
		}
		if m.ID != p.ID || m.ProjectID != p.ProjectID {
			return fmt.Errorf("patch monitor %s: the ID and project of a monitor cannot change", p.ID)
		}
		fields = newFields
		if fields == nil {
			fields = []string{}
		}
		w := writeSet{monitors: []*monitors.Monitor{m}, fullRow: true}
		if tr != nil {
			w.changes = []change{{m: m, tr: tr}}
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, err)
		}
		enc, err := encodeStrings(fields)
		if err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, err)
		}
		if _, err := tx.ExecContext(ctx, qMonitorPersonFieldsSet, p.ProjectID, p.ID, enc); err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, interpret(err))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return m, fields, nil
}

// MonitorPersonFields returns the person fields of monitors of the project.
func (s *Store) MonitorPersonFields(ctx context.Context, projectID string, ids []string) (map[string][]string, error) {
	out := make(map[string][]string)
	if len(ids) == 0 {
		return out, nil
	}
	list, err := encodeStrings(ids)
	if err != nil {
		return nil, fmt.Errorf("get person fields: %w", err)
	}
	rows, err := s.r.QueryContext(ctx, qMonitorPersonFields, projectID, list)
	if err != nil {
		return nil, fmt.Errorf("get person fields: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, pf string
		if err := rows.Scan(&id, &pf); err != nil {
			return nil, fmt.Errorf("get person fields: %w", err)
		}
		if out[id], err = decodeStrings(pf); err != nil {
			return nil, fmt.Errorf("get person fields of monitor %s: %w", id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("get person fields: %w", err)
	}
	return out, nil
}

// MonitorSync applies a declaration in one write transaction. SQLite has
// one writer, so declarations (and everything else) take turns, and the
// monitors read here cannot change before the commit.
func (s *Store) MonitorSync(ctx context.Context, p *monitors.MonitorSyncParams) error {
	slugs, err := encodeStrings(p.Slugs)
	if err != nil {
		return fmt.Errorf("sync monitors of source %q: %w", p.Source, err)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, qMonitorSyncLock, p.ProjectID, p.Source, slugs)
		if err != nil {
			return fmt.Errorf("load monitors of source %q: %w", p.Source, interpret(err))
		}
		var current []*monitors.Monitor
		fields := make(map[string][]string)
		for rows.Next() {
			var pf string
			m, err := scanMonitor(extraRow{rows, []any{&pf}})
			if err != nil {
				rows.Close()
				return fmt.Errorf("load monitors of source %q: %w", p.Source, err)
			}
			current = append(current, m)
			if list, err := decodeStrings(pf); err != nil {
				rows.Close()
				return fmt.Errorf("person fields of monitor %s: %w", m.ID, err)
			} else if len(list) > 0 {
				fields[m.ID] = list
			}
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("load monitors of source %q: %w", p.Source, err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("load monitors of source %q: %w", p.Source, interpret(err))
		}
		plan, err := p.Fn(current, fields)
		if err != nil || plan == nil {
			return err
		}
		if err := s.checkRoom(ctx, tx, p.ProjectID, len(plan.Insert)); err != nil {
			return err
		}
		for _, m := range plan.Insert {
			args, err := monitorArgs(m)
			if err != nil {
				return fmt.Errorf("insert monitor %q: %w", m.Slug, err)
			}
			if _, err := tx.ExecContext(ctx, qMonitorInsert, args...); err != nil {
				return fmt.Errorf("insert monitor %q: %w", m.Slug, interpret(err))
			}
		}
		w := writeSet{fullRow: true}
		for _, u := range plan.Update {
			if u.Monitor.ProjectID != p.ProjectID {
				return fmt.Errorf("sync monitor %s: it belongs to another project", u.Monitor.ID)
			}
			w.monitors = append(w.monitors, u.Monitor)
			if u.Transition != nil {
				w.changes = append(w.changes, change{m: u.Monitor, tr: u.Transition})
			}
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("sync monitors of source %q: %w", p.Source, err)
		}
		return nil
	})
}

// extraRow scans a row of monitorCols followed by more columns.
type extraRow struct {
	r     scanner
	extra []any
}

func (e extraRow) Scan(dest ...any) error { return e.r.Scan(append(dest, e.extra...)...) }

// MonitorCountByStatus counts monitors by status at now.
func (s *Store) MonitorCountByStatus(ctx context.Context, now time.Time) (map[monitors.Status]int64, error) {
	rows, err := s.r.QueryContext(ctx, qMonitorCountByStatus, micros(now))
	if err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	defer rows.Close()
	out := make(map[monitors.Status]int64)
	for rows.Next() {
		var (
			st string
			n  int64
		)
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count monitors: %w", err)
		}
		out[monitors.Status(st)] += n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	return out, nil
}

// IncidentCountByKind counts incidents by kind.
func (s *Store) IncidentCountByKind(ctx context.Context) ([]monitors.IncidentCount, error) {
	out, err := queryAll(ctx, s.r, qIncidentCountByKind, nil, func(r scanner) (monitors.IncidentCount, error) {
		var (
			c    monitors.IncidentCount
			kind string
		)
		err := r.Scan(&kind, &c.Opened, &c.Open)
		c.Kind = monitors.IncidentKind(kind)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("count incidents: %w", err)
	}
	return out, nil
}

// ProjectBadgeKey returns the project's badge key, making one on first use.
func (s *Store) ProjectBadgeKey(ctx context.Context, projectID string) (string, error) {
	var key string
	if err := s.r.QueryRowContext(ctx, qProjectBadgeKey, projectID).Scan(&key); err != nil {
		return "", fmt.Errorf("get badge key of project %s: %w", projectID, interpret(err))
	}
	if key != "" {
		return key, nil
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	if err := s.w.QueryRowContext(ctx, qProjectBadgeKeySet, projectID, base64.RawURLEncoding.EncodeToString(b)).Scan(&key); err != nil {
		return "", fmt.Errorf("set badge key of project %s: %w", projectID, interpret(err))
	}
	return key, nil
}
