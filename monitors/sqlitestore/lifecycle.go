package sqlitestore

import (
	"context"

	"github.com/vigilhq/vigil/monitors"
)

// The lifecycle of accounts and keys, the monitor limit and the pruning of
// old incidents.
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

	// qMonitorCount needs no lock beside the write transaction's: SQLite
	// has one writer.
	qMonitorCount = `SELECT count(*) FROM monitors WHERE project_id = ?`

	// qIncidentPruneBatch deletes one batch; the foreign keys' cascades
	// take the events, deliveries and attempts.
	qIncidentPruneBatch = `DELETE FROM incidents WHERE id IN (
		SELECT i.id FROM incidents i
		WHERE i.resolved_at IS NOT NULL AND i.resolved_at < ?1
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.incident_id = i.id AND d.state = 'pending')
		ORDER BY i.resolved_at LIMIT ?2)`
)

// UserList returns every user, by email.
func (s *Store) UserList(ctx context.Context) ([]*monitors.User, error) {
	return list(ctx, s, scanUser, "list users", qUserList)
}

// UserDelete deletes a user; the foreign keys take their memberships and
// sessions.
func (s *Store) UserDelete(ctx context.Context, id string) error {
	_, err := exec(ctx, s, true, "delete user "+id, qUserDelete, id)
	return err
}

// SessionDeleteByUser ends a user's sessions but p.ExceptID.
func (s *Store) SessionDeleteByUser(ctx context.Context, p *monitors.SessionDeleteByUserParams) (int64, error) {
	return exec(ctx, s, false, "end sessions of user "+p.UserID, qSessionDeleteUser, p.UserID, p.ExceptID)
}

// MonitorRotatePingKey gives a monitor a new ping key. SQLite has one
// writer: pings after the commit no longer find the old key.
func (s *Store) MonitorRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Monitor, error) {
	return get(ctx, s.w, scanMonitor1, "rotate ping key of monitor "+p.ID, qMonitorRotatePingKey, p.ProjectID, p.ID, p.PingKey, micros(p.Now))
}

// ProjectRotatePingKey gives a project a new project ping key.
func (s *Store) ProjectRotatePingKey(ctx context.Context, p *monitors.PingKeyRotateParams) (*monitors.Project, error) {
	return get(ctx, s.w, scanProject, "rotate ping key of project "+p.ProjectID, qProjectRotatePingKey, p.ProjectID, p.PingKey)
}

// APIKeyTouch records a use of the key, unless a later one is recorded.
func (s *Store) APIKeyTouch(ctx context.Context, p *monitors.APIKeyTouchParams) error {
	_, err := exec(ctx, s, false, "record use of API key "+p.ID, qAPIKeyTouch, p.ID, micros(p.At))
	return err
}

// IncidentPruneBatch deletes one batch of old resolved incidents.
func (s *Store) IncidentPruneBatch(ctx context.Context, p *monitors.IncidentPruneParams, limit int) (int64, error) {
	return exec(ctx, s, false, "prune incidents", qIncidentPruneBatch, micros(p.ResolvedBefore), limit)
}

// MonitorCount counts the project's monitors.
func (t txn) MonitorCount(ctx context.Context, projectID string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, qMonitorCount, projectID).Scan(&n)
	return n, interpret(err)
}

// UserSetDisabled sets or clears a user's disabled_at.
func (t txn) UserSetDisabled(ctx context.Context, p *monitors.UserSetDisabledParams) (*monitors.User, error) {
	return scanUser(t.tx.QueryRowContext(ctx, qUserSetDisabled, p.ID, microsPtr(p.DisabledAt)))
}

// UserSetPassword sets a user's password hash.
func (t txn) UserSetPassword(ctx context.Context, id, hash string) error {
	n, err := rowsAffected(t.tx.ExecContext(ctx, qUserSetPassword, id, hash))
	if err != nil {
		return interpret(err)
	}
	if n == 0 {
		return monitors.ErrNotFound
	}
	return nil
}

// SessionDeleteByUser deletes a user's sessions but exceptID.
func (t txn) SessionDeleteByUser(ctx context.Context, userID, exceptID string) (int64, error) {
	n, err := rowsAffected(t.tx.ExecContext(ctx, qSessionDeleteUser, userID, exceptID))
	return n, interpret(err)
}
