package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// The store methods of the management API: channels, person fields,
// declarations, counts for metrics and badge keys.

const (
	channelCols    = `id, project_id, kind, name, config, is_default, created_at, updated_at`
	qChannelCreate = `INSERT INTO channels (` + channelCols + `) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)`
	qChannelGet    = `SELECT ` + channelCols + ` FROM channels WHERE project_id = $1 AND id = $2`
	qChannelList   = `SELECT ` + channelCols + ` FROM channels WHERE project_id = $1 ORDER BY name, id
		LIMIT $2 OFFSET $3`
	qChannelGetForUpdate = qChannelGet + ` FOR UPDATE`
	qChannelUpdate       = `UPDATE channels SET name = $3, config = $4::jsonb, is_default = $5, updated_at = $6
		WHERE project_id = $1 AND id = $2`
	// qChannelUsers lists the monitors that name a channel; the channel row
	// is locked first, so a delete and a check see the same monitors.
	qChannelUsers  = `SELECT slug FROM monitors WHERE project_id = $1 AND channels @> ARRAY[$2::text] ORDER BY slug`
	qChannelDelete = `DELETE FROM channels WHERE project_id = $1 AND id = $2`

	qMonitorPersonFieldsGet = `SELECT person_fields FROM monitors WHERE project_id = $1 AND id = $2`
	qMonitorPersonFieldsSet = `UPDATE monitors SET person_fields = $3 WHERE project_id = $1 AND id = $2`
	qMonitorPersonFields    = `SELECT id, person_fields FROM monitors
		WHERE project_id = $1 AND id = ANY($2::text[]) AND cardinality(person_fields) > 0`
	// qSourceLock serializes the declarations of one source in one
	// project, across replicas, until the transaction ends.
	qSourceLock = `SELECT pg_advisory_xact_lock($1)`
	// qMonitorSyncLock loads and locks the monitors a declaration may
	// touch, in ID order like every other multi-row lock of the store.
	qMonitorSyncLock = `SELECT ` + monitorCols + `, person_fields FROM monitors
		WHERE project_id = $1 AND (source = $2 OR slug = ANY($3::text[])) ORDER BY id FOR UPDATE`

	// qMonitorCountByStatus derives late like MonitorList: up, with the
	// expected time passed.
	qMonitorCountByStatus = `SELECT CASE WHEN status = 'up' AND next_expected_at <= $1 THEN 'late' ELSE status END,
		count(*) FROM monitors GROUP BY 1`
	qIncidentCountByKind = `SELECT kind, count(*), count(*) FILTER (WHERE resolved_at IS NULL) FROM incidents
		GROUP BY kind ORDER BY kind`

	qProjectBadgeKey = `SELECT coalesce(badge_key, '') FROM projects WHERE id = $1`
	// qProjectBadgeKeySet keeps a key another replica set first.
	qProjectBadgeKeySet = `UPDATE projects SET badge_key = coalesce(badge_key, $2) WHERE id = $1 RETURNING badge_key`
)

// ChannelCreate stores a new channel. A name already used in the project
// (or an ID already used) is monitors.ErrConflict; an unknown project is
// monitors.ErrNotFound. A zero p.Now is the current time.
func (s *Store) ChannelCreate(ctx context.Context, p *monitors.ChannelCreateParams) (*monitors.Channel, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC().Truncate(time.Microsecond)
	c := &monitors.Channel{ID: p.ID, ProjectID: p.ProjectID, Kind: p.Kind, Name: p.Name, Config: p.Config,
		IsDefault: p.IsDefault, CreatedAt: now, UpdatedAt: now}
	_, err := s.pool.Exec(ctx, qChannelCreate, c.ID, c.ProjectID, c.Kind, c.Name, configArg(c.Config), c.IsDefault,
		c.CreatedAt, c.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("create channel: %w", interpret(err))
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

// ChannelGet returns a channel of the project.
func (s *Store) ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	c, err := scanChannel(s.pool.QueryRow(ctx, qChannelGet, projectID, id))
	if err != nil {
		return nil, fmt.Errorf("get channel %s: %w", id, err)
	}
	return c, nil
}

// ChannelList returns the project's channels by name.
func (s *Store) ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error) {
	rows, err := s.pool.Query(ctx, qChannelList, p.ProjectID, limitArg(p.Limit), max(p.Offset, 0))
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Channel, error) { return scanChannel(r) })
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	return out, nil
}

// ChannelModify changes a channel under a row lock.
func (s *Store) ChannelModify(ctx context.Context, p *monitors.ChannelModifyParams) (*monitors.Channel, error) {
	var c *monitors.Channel
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		c, err = scanChannel(tx.QueryRow(ctx, qChannelGetForUpdate, p.ProjectID, p.ID))
		if err != nil {
			return fmt.Errorf("modify channel %s: %w", p.ID, err)
		}
		if err := p.Fn(c); err != nil {
			return err
		}
		c.UpdatedAt = c.UpdatedAt.UTC().Truncate(time.Microsecond)
		if _, err := tx.Exec(ctx, qChannelUpdate, p.ProjectID, p.ID, c.Name, configArg(c.Config), c.IsDefault, c.UpdatedAt); err != nil {
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
	return s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := scanChannel(tx.QueryRow(ctx, qChannelGetForUpdate, projectID, id)); err != nil {
			return fmt.Errorf("delete channel %s: %w", id, err)
		}
		rows, err := tx.Query(ctx, qChannelUsers, projectID, id)
		if err != nil {
			return fmt.Errorf("delete channel %s: %w", id, interpret(err))
		}
		users, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("delete channel %s: %w", id, interpret(err))
		}
		if len(users) > 0 {
			return &monitors.ChannelInUseError{ChannelID: id, Monitors: users}
		}
		if _, err := tx.Exec(ctx, qChannelDelete, projectID, id); err != nil {
			return fmt.Errorf("delete channel %s: %w", id, interpret(err))
		}
		return nil
	})
}

func scanChannel(r pgx.Row) (*monitors.Channel, error) {
	var (
		c      monitors.Channel
		config []byte
	)
	if err := r.Scan(&c.ID, &c.ProjectID, &c.Kind, &c.Name, &config, &c.IsDefault, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, interpret(err)
	}
	c.Config, c.CreatedAt, c.UpdatedAt = config, utc(c.CreatedAt), utc(c.UpdatedAt)
	return &c, nil
}

func configArg(raw []byte) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// MonitorPatch changes a monitor and its person fields under a row lock,
// in one transaction.
func (s *Store) MonitorPatch(ctx context.Context, p *monitors.MonitorPatchParams) (*monitors.Monitor, []string, error) {
	var (
		m      *monitors.Monitor
		fields []string
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		m, err = scanMonitor(tx.QueryRow(ctx, qMonitorGetForUpdate, p.ProjectID, p.ID))
		if err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, err)
		}
		if err := tx.QueryRow(ctx, qMonitorPersonFieldsGet, p.ProjectID, p.ID).Scan(&fields); err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, interpret(err))
		}
		tr, newFields, err := p.Fn(m, fields)
		if err != nil {
			return err
		}
		if m.ID != p.ID || m.ProjectID != p.ProjectID {
			return fmt.Errorf("patch monitor %s: the ID and project of a monitor cannot change", p.ID)
		}
		fields = nonNil(newFields)
		w := writeSet{monitors: []*monitors.Monitor{m}, fullRow: true}
		if tr != nil {
			w.changes = []change{{m: m, tr: tr}}
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, err)
		}
		if _, err := tx.Exec(ctx, qMonitorPersonFieldsSet, p.ProjectID, p.ID, fields); err != nil {
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
	rows, err := s.pool.Query(ctx, qMonitorPersonFields, projectID, ids)
	if err != nil {
		return nil, fmt.Errorf("get person fields: %w", err)
	}
	var (
		id     string
		fields []string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &fields}, func() error {
		out[id] = fields
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("get person fields: %w", err)
	}
	return out, nil
}

// syncAttempts bounds how often MonitorSync starts over after another
// writer inserted one of its slugs. Declarations of one source wait for
// each other, so only a person (or a ping with create=1) creating the same
// slug at the same moment makes it start over, and the second attempt
// then sees that monitor.
const syncAttempts = 3

// errSlugTaken marks an insert of a sync that lost a race for its slug.
type errSlugTaken struct{ err error }

func (e *errSlugTaken) Error() string { return e.err.Error() }
func (e *errSlugTaken) Unwrap() error { return e.err }

// MonitorSync applies a declaration under a transaction-level advisory lock
// on (project, source), so two replicas of one application declaring at
// once take turns and the second finds the monitors the first created.
func (s *Store) MonitorSync(ctx context.Context, p *monitors.MonitorSyncParams) error {
	h := fnv.New64a()
	h.Write([]byte("vigil-source\x00" + p.ProjectID + "\x00" + p.Source))
	lockKey := int64(h.Sum64())
	for attempt := 1; ; attempt++ {
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, qSourceLock, lockKey); err != nil {
				return fmt.Errorf("lock source %q: %w", p.Source, interpret(err))
			}
			rows, err := tx.Query(ctx, qMonitorSyncLock, p.ProjectID, p.Source, nonNil(p.Slugs))
			if err != nil {
				return fmt.Errorf("lock monitors of source %q: %w", p.Source, interpret(err))
			}
			var current []*monitors.Monitor
			fields := make(map[string][]string)
			for rows.Next() {
				var pf []string
				m, err := scanMonitor(extraRow{rows, []any{&pf}})
				if err != nil {
					rows.Close()
					return fmt.Errorf("lock monitors of source %q: %w", p.Source, err)
				}
				current = append(current, m)
				if len(pf) > 0 {
					fields[m.ID] = pf
				}
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("lock monitors of source %q: %w", p.Source, interpret(err))
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
				// A savepoint would not help: the conflict means another
				// writer committed this slug, and the whole plan was made
				// without it.
				if _, err := tx.Exec(ctx, qMonitorInsert, args...); err != nil {
					err = fmt.Errorf("insert monitor %q: %w", m.Slug, interpret(err))
					if errors.Is(err, monitors.ErrConflict) {
						return &errSlugTaken{err}
					}
					return err
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
		var taken *errSlugTaken
		if errors.As(err, &taken) && attempt < syncAttempts {
			continue
		}
		if err != nil {
			return err
		}
		return nil
	}
}

// extraRow scans a row of monitorCols followed by more columns.
type extraRow struct {
	r     pgx.Row
	extra []any
}

func (e extraRow) Scan(dest ...any) error { return e.r.Scan(append(dest, e.extra...)...) }

// MonitorCountByStatus counts monitors by status at now.
func (s *Store) MonitorCountByStatus(ctx context.Context, now time.Time) (map[monitors.Status]int64, error) {
	rows, err := s.pool.Query(ctx, qMonitorCountByStatus, now.UTC())
	if err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	out := make(map[monitors.Status]int64)
	var (
		st string
		n  int64
	)
	if _, err := pgx.ForEachRow(rows, []any{&st, &n}, func() error {
		out[monitors.Status(st)] += n
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count monitors: %w", err)
	}
	return out, nil
}

// IncidentCountByKind counts incidents by kind.
func (s *Store) IncidentCountByKind(ctx context.Context) ([]monitors.IncidentCount, error) {
	rows, err := s.pool.Query(ctx, qIncidentCountByKind)
	if err != nil {
		return nil, fmt.Errorf("count incidents: %w", err)
	}
	var (
		out  = []monitors.IncidentCount{}
		kind string
		c    monitors.IncidentCount
	)
	if _, err := pgx.ForEachRow(rows, []any{&kind, &c.Opened, &c.Open}, func() error {
		c.Kind = monitors.IncidentKind(kind)
		out = append(out, c)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("count incidents: %w", err)
	}
	return out, nil
}

// ProjectBadgeKey returns the project's badge key, making one on first use.
func (s *Store) ProjectBadgeKey(ctx context.Context, projectID string) (string, error) {
	var key string
	if err := s.pool.QueryRow(ctx, qProjectBadgeKey, projectID).Scan(&key); err != nil {
		return "", fmt.Errorf("get badge key of project %s: %w", projectID, interpret(err))
	}
	if key != "" {
		return key, nil
	}
	if err := s.pool.QueryRow(ctx, qProjectBadgeKeySet, projectID, newBadgeKey()).Scan(&key); err != nil {
		return "", fmt.Errorf("set badge key of project %s: %w", projectID, interpret(err))
	}
	return key, nil
}

// newBadgeKey returns 256 random bits, URL-safe.
func newBadgeKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return base64.RawURLEncoding.EncodeToString(b)
}
