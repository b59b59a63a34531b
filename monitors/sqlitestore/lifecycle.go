package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// The lifecycle of accounts and keys, and the pruning of old incidents.
const (
	qUserList          = `SELECT ` + userCols + ` FROM users ORDER BY email`
	qUserSetDisabled   = `UPDATE users SET disabled_at = ?2 WHERE id = ?1 RETURNING ` + userCols
	qUserDelete        = `DELETE FROM users WHERE id = ?`
	qUserSetPassword   = `UPDATE users SET password_hash = ?2 WHERE id = ?1`
	qSessionDeleteUser = `DELETE FROM sessions WHERE user_id = ?1 AND id <> ?2`

	qMonitorRotatePingKey = `UPDATE monitors SET ping_key = ?3, updated_at = ?4 WHERE project_id = ?1 AND id = ?2
		RETURNING ` + monitorCols
	qProjectRotatePingKey = `UPDATE projects SET ping_key = ?2 WHERE id = ?1 RETURNING id, name, ping_key, created_at`
	qAPIKeyTouch          = `UPDATE api_keys SET last_used_at = ?2
		WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2)`

	// qIncidentPrune deletes one batch; the cascades take the events,
	// deliveries and attempts. An incident with a delivery still pending
	// is kept until it is sent or given up.
	qMonitorCount = `SELECT count(*) FROM monitors WHERE project_id = ?`

	qIncidentPrune = `DELETE FROM incidents WHERE id IN (
		SELECT i.id FROM incidents i
		WHERE i.resolved_at IS NOT NULL AND i.resolved_at < ?1
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.incident_id = i.id AND d.state = 'pending')
		ORDER BY i.resolved_at LIMIT ?2)`
)

// UserList returns every user, by email.
func (s *Store) UserList(ctx context.Context) ([]*monitors.User, error) {
	out, err := queryAll(ctx, s.r, qUserList, nil, scanUser)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// UserSetDisabled disables or enables a user, ending their sessions when
// disabled.
func (s *Store) UserSetDisabled(ctx context.Context, p *monitors.UserSetDisabledParams) (*monitors.User, error) {
	var u *monitors.User
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		if u, err = scanUser(tx.QueryRowContext(ctx, qUserSetDisabled, p.ID, microsPtr(p.DisabledAt))); err != nil {
			return err
		}
		if p.DisabledAt != nil {
			if _, err := tx.ExecContext(ctx, qSessionDeleteUser, p.ID, ""); err != nil {
				return fmt.Errorf("end sessions: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("set user %s disabled: %w", p.ID, err)
	}
	return u, nil
}

// UserDelete deletes a user; the foreign keys take their memberships and
// sessions.
func (s *Store) UserDelete(ctx context.Context, id string) error {
	res, err := s.w.ExecContext(ctx, qUserDelete, id)
	if err != nil {
		return fmt.Errorf("delete user %s: %w", id, interpret(err))
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("delete user %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

// UserSetPassword changes the password hash and ends the other sessions.
func (s *Store) UserSetPassword(ctx context.Context, p *monitors.UserSetPasswordParams) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, qUserSetPassword, p.ID, p.PasswordHash)
		if err != nil {
			return interpret(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return monitors.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, qSessionDeleteUser, p.ID, p.KeepSessionID); err != nil {
			return fmt.Errorf("end sessions: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set password of user %s: %w", p.ID, err)
	}
	return nil
}

// SessionDeleteByUser ends a user's sessions but p.ExceptID.
func (s *Store) SessionDeleteByUser(ctx context.Context, p *monitors.SessionDeleteByUserParams) (int64, error) {
	res, err := s.w.ExecContext(ctx, qSessionDeleteUser, p.UserID, p.ExceptID)
	if err != nil {
		return 0, fmt.Errorf("end sessions of user %s: %w", p.UserID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("end sessions of user %s: %w", p.UserID, err)
	}
	return n, nil
}

// MonitorRotatePingKey gives a monitor a new ping key. SQLite has one
// writer: pings after the commit no longer find the old key.
func (s *Store) MonitorRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Monitor, error) {
	m, err := scanMonitor(s.w.QueryRowContext(ctx, qMonitorRotatePingKey, p.ProjectID, p.ID, p.PingKey, micros(p.Now)))
	if err != nil {
		return nil, fmt.Errorf("rotate ping key of monitor %s: %w", p.ID, err)
	}
	return m, nil
}

// ProjectRotatePingKey gives a project a new project ping key.
func (s *Store) ProjectRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Project, error) {
	pr, err := scanProject(s.w.QueryRowContext(ctx, qProjectRotatePingKey, p.ProjectID, p.PingKey))
	if err != nil {
		return nil, fmt.Errorf("rotate ping key of project %s: %w", p.ProjectID, err)
	}
	return pr, nil
}

// APIKeyTouch records a use of the key.
func (s *Store) APIKeyTouch(ctx context.Context, p *monitors.APIKeyTouchParams) error {
	if _, err := s.w.ExecContext(ctx, qAPIKeyTouch, p.ID, micros(p.At)); err != nil {
		return fmt.Errorf("record use of API key %s: %w", p.ID, err)
	}
	return nil
}

// IncidentPrune deletes old resolved incidents, one batch per statement
// (and transaction), so that the single writer is never held for long.
func (s *Store) IncidentPrune(ctx context.Context, p *monitors.IncidentPruneParams) (int64, error) {
	batch := p.BatchSize
	if batch <= 0 {
		batch = monitors.IncidentPruneBatchDefault
	}
	var deleted int64
	for {
		res, err := s.w.ExecContext(ctx, qIncidentPrune, micros(p.ResolvedBefore), batch)
		if err != nil {
			return deleted, fmt.Errorf("prune incidents: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return deleted, fmt.Errorf("prune incidents: %w", err)
		}
		deleted += n
		if n < int64(batch) {
			return deleted, nil
		}
	}
}

// checkRoom returns a *monitors.LimitError when adding monitors to the
// project would pass the store's limit. SQLite has one writer, so the
// count holds until tx ends.
func (s *Store) checkRoom(ctx context.Context, tx *sql.Tx, projectID string, adding int) error {
	if s.maxMonitors <= 0 || adding == 0 {
		return nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, qMonitorCount, projectID).Scan(&n); err != nil {
		return fmt.Errorf("count monitors: %w", err)
	}
	if n+adding > s.maxMonitors {
		return &monitors.LimitError{ProjectID: projectID, Limit: s.maxMonitors}
	}
	return nil
}
