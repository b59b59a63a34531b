package monitors

import "context"

// MaintenanceStore keeps the maintenance windows of each project. The
// planning layer reads them when it applies a ping or the time to a
// monitor (see [Monitor.Maintenance]).
type MaintenanceStore interface {
	// MaintenanceWindowCreate stores a new window, whose ID, project and
	// timestamps the caller has set.
	MaintenanceWindowCreate(ctx context.Context, w *MaintenanceWindow) error
	MaintenanceWindowGet(ctx context.Context, projectID, id string) (*MaintenanceWindow, error)
	// MaintenanceWindowList returns the project's windows, by ID.
	MaintenanceWindowList(ctx context.Context, projectID string) ([]*MaintenanceWindow, error)
	// MaintenanceWindowModify loads a window under a lock, lets fn change
	// it and writes it; an error from fn is returned as is, and nothing is
	// written.
	MaintenanceWindowModify(ctx context.Context, projectID, id string, fn func(w *MaintenanceWindow) error) (*MaintenanceWindow, error)
	MaintenanceWindowDelete(ctx context.Context, projectID, id string) error
}
