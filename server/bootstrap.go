package server

import (
	"context"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// Bootstrap is what Vigil creates on an empty database.
type Bootstrap struct {
	Project *monitors.Project
	// APIKey is the admin key in clear. It is shown once and never stored.
	APIKey string
}

// BootstrapIfEmpty creates a default project and a read-write admin API key
// when the database has no project yet. It returns nil when there was
// already one. Replicas starting together on one empty database may each
// create a project; the first one is then the default.
func BootstrapIfEmpty(ctx context.Context, store monitors.Store, now time.Time) (*Bootstrap, error) {
	projects, err := store.ProjectList(ctx)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	if len(projects) > 0 {
		return nil, nil
	}
	p, err := store.ProjectCreate(ctx, &monitors.ProjectCreateParams{
		ID: keys.NewID(), Name: "Default", PingKey: keys.NewProjectPingKey(), Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("create default project: %w", err)
	}
	key, prefix, hash := keys.NewAPIKey()
	if _, err := store.APIKeyCreate(ctx, &monitors.APIKeyCreateParams{
		ID: keys.NewID(), ProjectID: p.ID, Name: "admin (created at first start)", Prefix: prefix, Hash: hash, Now: now,
	}); err != nil {
		return nil, fmt.Errorf("create admin API key: %w", err)
	}
	return &Bootstrap{Project: p, APIKey: key}, nil
}
