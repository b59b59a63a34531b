package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// The dashboard's queries: users, memberships, sessions, and the recent
// runs its list draws as sparklines.
const (
	userCols          = `id, email, password_hash, created_at, disabled_at`
	qUserInsert       = `INSERT INTO users (id, email, password_hash, created_at) VALUES ($1, $2, $3, $4)`
	qUserCount        = `SELECT count(*) FROM users`
	qUserGet          = `SELECT ` + userCols + ` FROM users WHERE id = $1`
	qUserGetByEmail   = `SELECT ` + userCols + ` FROM users WHERE email = $1`
	qUserLockFirst    = `LOCK TABLE users IN SHARE ROW EXCLUSIVE MODE`
	qUserExists       = `SELECT EXISTS (SELECT 1 FROM users)`
	qProjectMemberAdd = `INSERT INTO project_members (project_id, user_id, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (project_id, user_id) DO NOTHING`
	qProjectListByUser = `SELECT p.id, p.name, p.ping_key, p.created_at FROM projects p
		JOIN project_members pm ON pm.project_id = p.id WHERE pm.user_id = $1 ORDER BY p.created_at, p.id`
	qProjectRename = `UPDATE projects SET name = $2 WHERE id = $1 RETURNING id, name, ping_key, created_at`

	sessionCols    = `id, user_id, token_hash, csrf_token, created_at, expires_at`
	qSessionInsert = `INSERT INTO sessions (id, user_id, token_hash, csrf_token, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`
	qSessionGet           = `SELECT ` + sessionCols + ` FROM sessions WHERE token_hash = $1 AND expires_at > $2`
	qSessionExtend        = `UPDATE sessions SET expires_at = $2 WHERE id = $1`
	qSessionDelete        = `DELETE FROM sessions WHERE token_hash = $1`
	qSessionDeleteExpired = `DELETE FROM sessions WHERE expires_at <= $1`

	// qRunListRecent takes the newest runs of each monitor through the
	// runs primary key, one index range per monitor.
	qRunListRecent = `SELECT r.monitor_id, r.seq, r.rid, r.started_at, r.finished_at, r.outcome, r.duration_ms,
			r.attempt, r.exit_code, r.will_retry, r.stuck
		FROM monitors m CROSS JOIN LATERAL (
			SELECT * FROM runs WHERE runs.monitor_id = m.id ORDER BY seq DESC LIMIT $3) r
		WHERE m.project_id = $1 AND m.id = ANY($2::text[])
		ORDER BY r.monitor_id, r.seq DESC`
)

// UserCreate stores a new user and their memberships in one transaction.
// With p.OnlyFirst, the users table is locked against other writers for
// the check, so two first accounts cannot both be made.
func (s *Store) UserCreate(ctx context.Context, p *monitors.UserCreateParams) (*monitors.User, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	u := &monitors.User{ID: p.ID, Email: monitors.NormalizeEmail(p.Email), PasswordHash: p.PasswordHash,
		CreatedAt: now.UTC().Truncate(time.Microsecond)}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if p.OnlyFirst {
			if _, err := tx.Exec(ctx, qUserLockFirst); err != nil {
				return fmt.Errorf("lock users: %w", err)
			}
			var exists bool
			if err := tx.QueryRow(ctx, qUserExists).Scan(&exists); err != nil {
				return fmt.Errorf("count users: %w", err)
			}
			if exists {
				return fmt.Errorf("a user exists already: %w", monitors.ErrConflict)
			}
		}
		if _, err := tx.Exec(ctx, qUserInsert, u.ID, u.Email, u.PasswordHash, u.CreatedAt); err != nil {
			return interpret(err)
		}
		for _, pid := range p.ProjectIDs {
			if _, err := tx.Exec(ctx, qProjectMemberAdd, pid, u.ID, u.CreatedAt); err != nil {
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
	var n int64
	if err := s.pool.QueryRow(ctx, qUserCount).Scan(&n); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return int(n), nil
}

// UserGet returns the user with that ID.
func (s *Store) UserGet(ctx context.Context, id string) (*monitors.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, qUserGet, id))
	if err != nil {
		return nil, fmt.Errorf("get user %s: %w", id, err)
	}
	return u, nil
}

// UserGetByEmail returns the user with that email, compared in lower case.
func (s *Store) UserGetByEmail(ctx context.Context, email string) (*monitors.User, error) {
	u, err := scanUser(s.pool.QueryRow(ctx, qUserGetByEmail, monitors.NormalizeEmail(email)))
	if err != nil {
		return nil, fmt.Errorf("get user by email: %w", err)
	}
	return u, nil
}

func scanUser(r pgx.Row) (*monitors.User, error) {
	var u monitors.User
	if err := r.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.CreatedAt, &u.DisabledAt); err != nil {
		return nil, interpret(err)
	}
	u.CreatedAt, u.DisabledAt = utc(u.CreatedAt), utcPtr(u.DisabledAt)
	return &u, nil
}

// ProjectMemberAdd makes a user a member of a project.
func (s *Store) ProjectMemberAdd(ctx context.Context, p *monitors.ProjectMemberAddParams) error {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	if _, err := s.pool.Exec(ctx, qProjectMemberAdd, p.ProjectID, p.UserID, now.UTC()); err != nil {
		return fmt.Errorf("add member to project %s: %w", p.ProjectID, interpret(err))
	}
	return nil
}

// ProjectListByUser returns the projects the user is a member of, oldest
// first.
func (s *Store) ProjectListByUser(ctx context.Context, userID string) ([]*monitors.Project, error) {
	rows, err := s.pool.Query(ctx, qProjectListByUser, userID)
	if err != nil {
		return nil, fmt.Errorf("list projects of user: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Project, error) { return scanProject(r) })
	if err != nil {
		return nil, fmt.Errorf("list projects of user: %w", err)
	}
	return out, nil
}

// ProjectRename changes a project's name.
func (s *Store) ProjectRename(ctx context.Context, p *monitors.ProjectRenameParams) (*monitors.Project, error) {
	pr, err := scanProject(s.pool.QueryRow(ctx, qProjectRename, p.ID, p.Name))
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
		CreatedAt: now.UTC().Truncate(time.Microsecond), ExpiresAt: p.ExpiresAt.UTC().Truncate(time.Microsecond)}
	_, err := s.pool.Exec(ctx, qSessionInsert, se.ID, se.UserID, se.TokenHash, se.CSRFToken, se.CreatedAt, se.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("create session: %w", interpret(err))
	}
	return se, nil
}

// SessionGet returns the unexpired session with that token hash.
func (s *Store) SessionGet(ctx context.Context, p *monitors.SessionGetParams) (*monitors.Session, error) {
	var se monitors.Session
	err := s.pool.QueryRow(ctx, qSessionGet, p.TokenHash, p.Now.UTC()).Scan(&se.ID, &se.UserID, &se.TokenHash,
		&se.CSRFToken, &se.CreatedAt, &se.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("get session: %w", interpret(err))
	}
	se.CreatedAt, se.ExpiresAt = utc(se.CreatedAt), utc(se.ExpiresAt)
	return &se, nil
}

// SessionExtend moves a session's expiry.
func (s *Store) SessionExtend(ctx context.Context, id string, expiresAt time.Time) error {
	tag, err := s.pool.Exec(ctx, qSessionExtend, id, expiresAt.UTC())
	if err != nil {
		return fmt.Errorf("extend session: %w", interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("extend session: %w", monitors.ErrNotFound)
	}
	return nil
}

// SessionDelete ends the session with that token hash.
func (s *Store) SessionDelete(ctx context.Context, tokenHash string) error {
	if _, err := s.pool.Exec(ctx, qSessionDelete, tokenHash); err != nil {
		return fmt.Errorf("delete session: %w", interpret(err))
	}
	return nil
}

// SessionDeleteExpired deletes the sessions expired at now.
func (s *Store) SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, qSessionDeleteExpired, now.UTC())
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", interpret(err))
	}
	return tag.RowsAffected(), nil
}

// RunListRecent returns the newest runs of each monitor, by monitor ID.
func (s *Store) RunListRecent(ctx context.Context, p *monitors.RunListRecentParams) (map[string][]*monitors.Run, error) {
	out := make(map[string][]*monitors.Run)
	if len(p.MonitorIDs) == 0 || p.PerMonitor <= 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, qRunListRecent, p.ProjectID, p.MonitorIDs, p.PerMonitor)
	if err != nil {
		return nil, fmt.Errorf("list recent runs: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Run, error) {
		var (
			run      monitors.Run
			outcome  string
			attempt  int32
			exitCode *int32
		)
		err := r.Scan(&run.MonitorID, &run.Seq, &run.RID, &run.StartedAt, &run.FinishedAt, &outcome, &run.DurationMS,
			&attempt, &exitCode, &run.WillRetry, &run.Stuck)
		if err != nil {
			return nil, err
		}
		run.Outcome, run.Attempt, run.ExitCode = monitors.RunOutcome(outcome), int(attempt), intPtr(exitCode)
		run.StartedAt, run.FinishedAt = utcPtr(run.StartedAt), utcPtr(run.FinishedAt)
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
