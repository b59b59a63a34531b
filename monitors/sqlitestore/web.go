package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// The dashboard's queries: users, memberships, sessions, and the recent
// runs its list draws as sparklines.
const (
	userCols          = `id, email, password_hash, created_at, disabled_at`
	qUserInsert       = `INSERT INTO users (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)`
	qUserCount        = `SELECT count(*) FROM users`
	qUserGet          = `SELECT ` + userCols + ` FROM users WHERE id = ?`
	qUserGetByEmail   = `SELECT ` + userCols + ` FROM users WHERE email = ?`
	qUserExists       = `SELECT EXISTS (SELECT 1 FROM users)`
	qProjectMemberAdd = `INSERT INTO project_members (project_id, user_id, created_at) VALUES (?, ?, ?)
		ON CONFLICT (project_id, user_id) DO NOTHING`
	qProjectListByUser = `SELECT p.id, p.name, p.ping_key, p.created_at FROM projects p
		JOIN project_members pm ON pm.project_id = p.id WHERE pm.user_id = ? ORDER BY p.created_at, p.id`
	qProjectRename = `UPDATE projects SET name = ?2 WHERE id = ?1 RETURNING id, name, ping_key, created_at`

	sessionCols    = `id, user_id, token_hash, csrf_token, created_at, expires_at`
	qSessionInsert = `INSERT INTO sessions (id, user_id, token_hash, csrf_token, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`
	qSessionGet           = `SELECT ` + sessionCols + ` FROM sessions WHERE token_hash = ? AND expires_at > ?`
	qSessionExtend        = `UPDATE sessions SET expires_at = ?2 WHERE id = ?1`
	qSessionDelete        = `DELETE FROM sessions WHERE token_hash = ?`
	qSessionDeleteExpired = `DELETE FROM sessions WHERE expires_at <= ?`

	// qRunListRecent takes the newest runs of each monitor. SQLite has no
	// LATERAL join: the bound on seq, the seq of the run just too old to
	// be kept, depends only on the monitor, so it is computed once per
	// monitor and the runs are read as one range of the primary key.
	qRunListRecent = `SELECT r.monitor_id, r.seq, r.rid, r.started_at, r.finished_at, r.outcome, r.duration_ms,
			r.attempt, r.exit_code, r.will_retry, r.stuck
		FROM monitors m JOIN runs r ON r.monitor_id = m.id AND r.seq > coalesce(
			(SELECT r2.seq FROM runs r2 WHERE r2.monitor_id = m.id ORDER BY r2.seq DESC LIMIT 1 OFFSET ?3), -1)
		WHERE m.project_id = ?1 AND m.id IN (SELECT value FROM json_each(?2))
		ORDER BY r.monitor_id, r.seq DESC`
)

// UserCreate stores a new user and their memberships in one transaction.
// With p.OnlyFirst the check that no user exists runs in the same write
// transaction, which holds SQLite's only write lock: no other account can
// be made between the check and the insert.
func (s *Store) UserCreate(ctx context.Context, p *monitors.UserCreateParams) (*monitors.User, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	u := &monitors.User{ID: p.ID, Email: monitors.NormalizeEmail(p.Email), PasswordHash: p.PasswordHash,
		CreatedAt: fromMicros(micros(now))}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if p.OnlyFirst {
			var exists bool
			if err := tx.QueryRowContext(ctx, qUserExists).Scan(&exists); err != nil {
				return fmt.Errorf("count users: %w", err)
			}
			if exists {
				return fmt.Errorf("a user exists already: %w", monitors.ErrConflict)
			}
		}
		if _, err := tx.ExecContext(ctx, qUserInsert, u.ID, u.Email, u.PasswordHash, micros(u.CreatedAt)); err != nil {
			return interpret(err)
		}
		for _, pid := range p.ProjectIDs {
			if _, err := tx.ExecContext(ctx, qProjectMemberAdd, pid, u.ID, micros(u.CreatedAt)); err != nil {
				return fmt.Errorf("add to project %s: %w", pid, interpret(err))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// UserCount returns how many users there are.
func (s *Store) UserCount(ctx context.Context) (int, error) {
	var n int
	if err := s.r.QueryRowContext(ctx, qUserCount).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// UserGet returns the user with that ID.
func (s *Store) UserGet(ctx context.Context, id string) (*monitors.User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, qUserGet, id))
	if err != nil {
		return nil, fmt.Errorf("get user %s: %w", id, err)
	}
	return u, nil
}

// UserGetByEmail returns the user with that email, compared in lower case.
func (s *Store) UserGetByEmail(ctx context.Context, email string) (*monitors.User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, qUserGetByEmail, monitors.NormalizeEmail(email)))
	if err != nil {
		return nil, fmt.Errorf("get user by email: %w", err)
	}
	return u, nil
}

func scanUser(r scanner) (*monitors.User, error) {
	var (
		u        monitors.User
		created  int64
		disabled sql.NullInt64
	)
	if err := r.Scan(&u.ID, &u.Email, &u.PasswordHash, &created, &disabled); err != nil {
		return nil, interpret(err)
	}
	u.CreatedAt, u.DisabledAt = fromMicros(created), fromNullMicros(disabled)
	return &u, nil
}

// ProjectMemberAdd makes a user a member of a project.
func (s *Store) ProjectMemberAdd(ctx context.Context, p *monitors.ProjectMemberAddParams) error {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	if _, err := s.w.ExecContext(ctx, qProjectMemberAdd, p.ProjectID, p.UserID, micros(now)); err != nil {
		return fmt.Errorf("add member to project %s: %w", p.ProjectID, interpret(err))
	}
	return nil
}

// ProjectListByUser returns the projects the user is a member of, oldest
// first.
func (s *Store) ProjectListByUser(ctx context.Context, userID string) ([]*monitors.Project, error) {
	out, err := queryAll(ctx, s.r, qProjectListByUser, []any{userID}, scanProject)
	if err != nil {
		return nil, fmt.Errorf("list projects of user: %w", err)
	}
	return out, nil
}

// ProjectRename changes a project's name.
func (s *Store) ProjectRename(ctx context.Context, p *monitors.ProjectRenameParams) (*monitors.Project, error) {
	pr, err := scanProject(s.w.QueryRowContext(ctx, qProjectRename, p.ID, p.Name))
	if err != nil {
		return nil, fmt.Errorf("rename project %s: %w", p.ID, err)
	}
	return pr, nil
}

// SessionCreate stores a new session. An unknown user is
// monitors.ErrNotFound.
func (s *Store) SessionCreate(ctx context.Context, p *monitors.SessionCreateParams) (*monitors.Session, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	se := &monitors.Session{ID: p.ID, UserID: p.UserID, TokenHash: p.TokenHash, CSRFToken: p.CSRFToken,
		CreatedAt: fromMicros(micros(now)), ExpiresAt: fromMicros(micros(p.ExpiresAt))}
	_, err := s.w.ExecContext(ctx, qSessionInsert, se.ID, se.UserID, se.TokenHash, se.CSRFToken,
		micros(se.CreatedAt), micros(se.ExpiresAt))
	if err != nil {
		return nil, fmt.Errorf("create session: %w", interpret(err))
	}
	return se, nil
}

// SessionGet returns the unexpired session with that token hash.
func (s *Store) SessionGet(ctx context.Context, p *monitors.SessionGetParams) (*monitors.Session, error) {
	var (
		se               monitors.Session
		created, expires int64
	)
	err := s.r.QueryRowContext(ctx, qSessionGet, p.TokenHash, micros(p.Now)).Scan(&se.ID, &se.UserID, &se.TokenHash,
		&se.CSRFToken, &created, &expires)
	if err != nil {
		return nil, fmt.Errorf("get session: %w", interpret(err))
	}
	se.CreatedAt, se.ExpiresAt = fromMicros(created), fromMicros(expires)
	return &se, nil
}

// SessionExtend moves a session's expiry.
func (s *Store) SessionExtend(ctx context.Context, id string, expiresAt time.Time) error {
	res, err := s.w.ExecContext(ctx, qSessionExtend, id, micros(expiresAt))
	if err != nil {
		return fmt.Errorf("extend session: %w", interpret(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("extend session: %w", err)
	} else if n == 0 {
		return fmt.Errorf("extend session: %w", monitors.ErrNotFound)
	}
	return nil
}

// SessionDelete ends the session with that token hash.
func (s *Store) SessionDelete(ctx context.Context, tokenHash string) error {
	if _, err := s.w.ExecContext(ctx, qSessionDelete, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", interpret(err))
	}
	return nil
}

// SessionDeleteExpired deletes the sessions expired at now.
func (s *Store) SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.w.ExecContext(ctx, qSessionDeleteExpired, micros(now))
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", interpret(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	return n, nil
}

// RunListRecent returns the newest runs of each monitor, by monitor ID.
func (s *Store) RunListRecent(ctx context.Context, p *monitors.RunListRecentParams) (map[string][]*monitors.Run, error) {
	out := make(map[string][]*monitors.Run)
	if len(p.MonitorIDs) == 0 || p.PerMonitor <= 0 {
		return out, nil
	}
	ids, err := json.Marshal(p.MonitorIDs)
	if err != nil {
		return nil, fmt.Errorf("list recent runs: %w", err)
	}
	runs, err := queryAll(ctx, s.r, qRunListRecent, []any{p.ProjectID, string(ids), p.PerMonitor},
		func(r scanner) (*monitors.Run, error) {
			var (
				run                monitors.Run
				outcome            string
				started, finished  sql.NullInt64
				duration, exitCode sql.NullInt64
			)
			err := r.Scan(&run.MonitorID, &run.Seq, &run.RID, &started, &finished, &outcome, &duration,
				&run.Attempt, &exitCode, &run.WillRetry, &run.Stuck)
			if err != nil {
				return nil, err
			}
			run.Outcome, run.StartedAt, run.FinishedAt = monitors.RunOutcome(outcome), fromNullMicros(started), fromNullMicros(finished)
			run.DurationMS, run.ExitCode = int64FromNull(duration), intFromNull(exitCode)
			return &run, nil
		})
	if err != nil {
		return nil, fmt.Errorf("list recent runs: %w", err)
	}
	for _, r := range runs {
		out[r.MonitorID] = append(out[r.MonitorID], r)
	}
	return out, nil
}
