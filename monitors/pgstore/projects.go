package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// ProjectCreate stores a new project. A zero p.Now defaults to the current
// time. An ID or ping key already in use is monitors.ErrConflict.
func (s *Store) ProjectCreate(ctx context.Context, p *monitors.ProjectCreateParams) (*monitors.Project, error) {
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	pr := &monitors.Project{ID: p.ID, Name: p.Name, PingKey: p.PingKey, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	if _, err := s.pool.Exec(ctx, qProjectCreate, pr.ID, pr.Name, pr.PingKey, pr.CreatedAt); err != nil {
		return nil, fmt.Errorf("create project: %w", interpret(err))
	}
	return pr, nil
}

// ProjectGet returns the project with that ID.
func (s *Store) ProjectGet(ctx context.Context, id string) (*monitors.Project, error) {
	pr, err := scanProject(s.pool.QueryRow(ctx, qProjectGet, id))
	if err != nil {
		return nil, fmt.Errorf("get project %s: %w", id, err)
	}
	return pr, nil
}

// ProjectGetByPingKey returns the project with that project ping key.
func (s *Store) ProjectGetByPingKey(ctx context.Context, pingKey string) (*monitors.Project, error) {
	pr, err := scanProject(s.pool.QueryRow(ctx, qProjectGetByPingKey, pingKey))
	if err != nil {
		return nil, fmt.Errorf("get project by ping key: %w", err)
	}
	return pr, nil
}

// ProjectList returns every project, oldest first.
func (s *Store) ProjectList(ctx context.Context) ([]*monitors.Project, error) {
	rows, err := s.pool.Query(ctx, qProjectList)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Project, error) { return scanProject(r) })
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

func scanProject(r pgx.Row) (*monitors.Project, error) {
	var pr monitors.Project
	if err := r.Scan(&pr.ID, &pr.Name, &pr.PingKey, &pr.CreatedAt); err != nil {
		return nil, interpret(err)
	}
	pr.CreatedAt = utc(pr.CreatedAt)
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
		ReadOnly: p.ReadOnly, CreatedAt: now.UTC().Truncate(time.Microsecond)}
	_, err := s.pool.Exec(ctx, qAPIKeyCreate, k.ID, k.ProjectID, k.Name, k.Prefix, k.Hash, k.ReadOnly, k.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("create api key: %w", interpret(err))
	}
	return k, nil
}

// APIKeyGetByHash returns the unrevoked key with that hash.
func (s *Store) APIKeyGetByHash(ctx context.Context, hash string) (*monitors.APIKey, error) {
	k, err := scanAPIKey(s.pool.QueryRow(ctx, qAPIKeyGetByHash, hash))
	if err != nil {
		return nil, fmt.Errorf("get api key: %w", err)
	}
	return k, nil
}

// APIKeyList returns the project's keys, revoked ones included, oldest
// first.
func (s *Store) APIKeyList(ctx context.Context, projectID string) ([]*monitors.APIKey, error) {
	rows, err := s.pool.Query(ctx, qAPIKeyList, projectID)
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.APIKey, error) { return scanAPIKey(r) })
	if err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return out, nil
}

// APIKeyRevoke revokes a key of the project at the given time. Revoking a
// key again keeps its first revocation time.
func (s *Store) APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error {
	tag, err := s.pool.Exec(ctx, qAPIKeyRevoke, projectID, id, at.UTC())
	if err != nil {
		return fmt.Errorf("revoke api key %s: %w", id, interpret(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("revoke api key %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

func scanAPIKey(r pgx.Row) (*monitors.APIKey, error) {
	var k monitors.APIKey
	err := r.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Prefix, &k.Hash, &k.ReadOnly, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
	if err != nil {
		return nil, interpret(err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = utc(k.CreatedAt), utcPtr(k.LastUsedAt), utcPtr(k.RevokedAt)
	return &k, nil
}
