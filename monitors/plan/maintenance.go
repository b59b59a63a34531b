package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// Maintenance windows are stored whole, as JSON documents: what a window
// covers and when is decided here and in package monitors, never in SQL.

func scanWindow(r Row) (*monitors.MaintenanceWindow, error) {
	var doc string
	if err := r.Scan(&doc); err != nil {
		return nil, err
	}
	return DecodeWindow([]byte(doc))
}

// DecodeWindow reads a maintenance window's stored document.
func DecodeWindow(doc []byte) (*monitors.MaintenanceWindow, error) {
	w := &monitors.MaintenanceWindow{}
	if err := json.Unmarshal(doc, w); err != nil {
		return nil, fmt.Errorf("read maintenance window: %w", err)
	}
	return w, nil
}

func windowDoc(w *monitors.MaintenanceWindow) (string, error) {
	w.StartsAt, w.EndsAt = w.StartsAt.UTC(), w.EndsAt.UTC()
	if w.EndedAt != nil {
		e := w.EndedAt.UTC()
		w.EndedAt = &e
	}
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.UTC(), w.UpdatedAt.UTC()
	b, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("encode maintenance window: %w", err)
	}
	return string(b), nil
}

// MaintenanceWindowCreate stores a new window after validating it.
func (s *Scripts) MaintenanceWindowCreate(ctx context.Context, w *monitors.MaintenanceWindow) error {
	if err := w.Validate(); err != nil {
		return err
	}
	doc, err := windowDoc(w)
	if err != nil {
		return err
	}
	if _, err := s.w().Exec(ctx, s.Q.MaintenanceInsert, w.ID, w.ProjectID, doc); err != nil {
		return fmt.Errorf("create maintenance window: %w", err)
	}
	return nil
}

// MaintenanceWindowGet returns one window of the project.
func (s *Scripts) MaintenanceWindowGet(ctx context.Context, projectID, id string) (*monitors.MaintenanceWindow, error) {
	return wrap(One(ctx, s.r(), scanWindow, s.Q.MaintenanceGet, projectID, id))("get maintenance window %s", id)
}

// MaintenanceWindowList returns the project's windows.
func (s *Scripts) MaintenanceWindowList(ctx context.Context, projectID string) ([]*monitors.MaintenanceWindow, error) {
	ws, err := All(ctx, s.r(), scanWindow, s.Q.MaintenanceList, projectID)
	if err != nil {
		return nil, fmt.Errorf("list maintenance windows: %w", err)
	}
	if ws == nil {
		ws = []*monitors.MaintenanceWindow{}
	}
	return ws, nil
}

// MaintenanceWindowModify changes a window under a lock; fn's change is
// validated before it is written, and its ID and project kept.
func (s *Scripts) MaintenanceWindowModify(ctx context.Context, projectID, id string, fn func(w *monitors.MaintenanceWindow) error) (*monitors.MaintenanceWindow, error) {
	var w *monitors.MaintenanceWindow
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		var err error
		if w, err = One(ctx, tx, scanWindow, s.Q.MaintenanceLock, projectID, id); err != nil {
			return fmt.Errorf("modify maintenance window %s: %w", id, err)
		}
		if err := fn(w); err != nil {
			return &fnError{err}
		}
		w.ID, w.ProjectID = id, projectID
		if err := w.Validate(); err != nil {
			return &fnError{err}
		}
		doc, err := windowDoc(w)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.Q.MaintenanceUpdate, projectID, id, doc); err != nil {
			return fmt.Errorf("modify maintenance window %s: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, wrapUnlessFn(err, "modify maintenance window")
	}
	return w, nil
}

// MaintenanceWindowDelete deletes a window of the project.
func (s *Scripts) MaintenanceWindowDelete(ctx context.Context, projectID, id string) error {
	n, err := s.w().Exec(ctx, s.Q.MaintenanceDelete, projectID, id)
	if err != nil {
		return fmt.Errorf("delete maintenance window %s: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("delete maintenance window %s: %w", id, monitors.ErrNotFound)
	}
	return nil
}

// windows reads, once per project within one transaction, the windows
// that monitors are judged under.
type windows struct {
	s       *Scripts
	tx      Tx
	project map[string][]*monitors.MaintenanceWindow
}

// set gives m the periods of its project's windows that cover it at now.
func (w *windows) set(ctx context.Context, m *monitors.Monitor, now time.Time) error {
	ws, ok := w.project[m.ProjectID]
	if !ok {
		var err error
		ws, err = All(ctx, w.tx, scanWindow, w.s.Q.MaintenanceList, m.ProjectID)
		if err != nil {
			return fmt.Errorf("read maintenance windows of project %s: %w", m.ProjectID, err)
		}
		if w.project == nil {
			w.project = make(map[string][]*monitors.MaintenanceWindow)
		}
		w.project[m.ProjectID] = ws
	}
	m.Maintenance = monitors.MaintenanceOf(ws, m, now)
	return nil
}
