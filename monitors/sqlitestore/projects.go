package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// ProjectCreate stores a new project. A zero p.Now defaults to the current
// time. An ID or ping key already in use is monitors.ErrConflict.
func (s *Store) ProjectCreate(ctx context.Context, p *monitors.ProjectCreateParams) (*monitors.Project, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	pr := &monitors.Project{ID: p.ID, Name: p.Name, PingKey: p.PingKey, CreatedAt: fromMicros(micros(now))}
	if _, err := s.w.ExecContext(ctx, qProjectCreate, pr.ID, pr.Name, pr.PingKey, micros(pr.CreatedAt)); err != nil {
		return nil, fmt.Errorf("create project: %w", interpret(err))
	}
	return pr, nil
}

// ProjectGet returns the project with that ID.
func (s *Store) ProjectGet(ctx context.Context, id string) (*monitors.Project, error) {
	pr, err := scanProject(s.r.QueryRowContext(ctx, qProjectGet, id))
	if err != nil {
		return nil, fmt.Errorf("get project %s: %w", id, err)
	}
	return pr, nil
}

// ProjectGetByPingKey returns the project with that project ping key.
func (s *Store) ProjectGetByPingKey(ctx context.Context, pingKey string) (*monitors.Project, error) {
	pr, err := scanProject(s.r.QueryRowContext(ctx, qProjectGetByPingKey, pingKey))
	if err != nil {
		return nil, fmt.Errorf("get project by ping key: %w", err)
	}
	return pr, nil
}

// ProjectList returns every project, oldest first.
func (s *Store) ProjectList(ctx context.Context) ([]*monitors.Project, error) {
	out, err := queryAll(ctx, s.r, qProjectList, nil, scanProject)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

func scanProject(r scanner) (*monitors.Project, error) {
	var (
		pr      monitors.Project
		created int64
	)
	if err := r.Scan(&pr.ID, &pr.Name, &pr.PingKey, &created); err != nil {
		return nil, interpret(err)
	}
	pr.CreatedAt = fromMicros(created)
	return &pr, nil
}

// APIKeyCreate stores a new API key. A zero p.Now defaults to the current
// time. An unknown project is monitors.ErrNotFound; a hash already stored is
// monitors.ErrConflict.
func (s *Store) APIKeyCreate(ctx context.Context, p *monitors.APIKeyCreateParams) (*monitors.APIKey, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	k := &monitors.APIKey{ID: p.ID, ProjectID: p.ProjectID, Name: p.Name, Prefix: p.Prefix, Hash: p.Hash,
		ReadOnly: p.ReadOnly, CreatedAt: fromMicros(micros(now))}
	_, err := s.w.ExecContext(ctx, qAPIKeyCreate, k.ID, k.ProjectID, k.Name, k.Prefix, k.Hash, k.ReadOnly, micros(k.CreatedAt))
	if err != nil {
		return nil, fmt.Errorf("create api key: %w", interpret(err))
	}
	return k, nil
}

// APIKeyGetByHash returns the unrevoked key with that hash.
func (s *Store) APIKeyGetByHash(ctx context.Context, hash string) (*monitors.APIKey, error) {
	k, err := scanAPIKey(s.r.QueryRowContext(ctx, qAPIKeyGetByHash, hash))
	if err != nil {
		return nil, fmt.Errorf("get api key: %w", err)
	}
	return k, nil
}

// APIKeyList returns the project's keys, revoked ones included, oldest
// first.
func (s *Store) APIKeyList(ctx context.Context, projectID string) ([]*monitors.APIKey, error) {
	out, err := queryAll(ctx, s.r, qAPIKeyList, []any{projectID}, scanAPIKey)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

// APIKeyRevoke revokes a key of the project at the given time. Revoking a
// key again keeps its first revocation time.
func (s *Store) APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error {
	res, err := s.w.ExecContext(ctx, qAPIKeyRevoke, projectID, id, micros(at))
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, interpret(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("revoke api key %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

func scanAPIKey(r scanner) (*monitors.APIKey, error) {
	var (
		k                 monitors.APIKey
		created           int64
		lastUsed, revoked sql.NullInt64
	)
	err := r.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Prefix, &k.Hash, &k.ReadOnly, &created, &lastUsed, &revoked)
	if err != nil {
		return nil, interpret(err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMicros(created), fromNullMicros(lastUsed), fromNullMicros(revoked)
	return &k, nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// querier is a *sql.DB or *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// queryAll runs q and scans every row with scan.
func queryAll[T any](ctx context.Context, db querier, q string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows, scan)
}

func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}
