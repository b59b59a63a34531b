package plan

import (
	"context"
	"fmt"
	"slices"

	"github.com/vigilhq/vigil/monitors"
)

// lateSet reads, once per project within one transaction, which channels
// take the monitor.late warning, and tells each monitor whether one of
// its channels does (monitors.Monitor.NotifyLate), so that the state
// machine watches for lateness only where someone is told.
type lateSet struct {
	s  *Scripts
	tx Tx
	// project holds, by project, its channels with notify_late: by ID,
	// whether the channel is a default one.
	project map[string]map[string]bool
}

// set gives m its NotifyLate.
func (l *lateSet) set(ctx context.Context, m *monitors.Monitor) error {
	if err := l.load(ctx, []string{m.ProjectID}); err != nil {
		return err
	}
	m.NotifyLate = false
	for id, isDefault := range l.project[m.ProjectID] {
		if len(m.Channels) == 0 && isDefault || slices.Contains(m.Channels, id) {
			m.NotifyLate = true
			return nil
		}
	}
	return nil
}

// load reads the late channels of those projects not read yet, in one
// query.
func (l *lateSet) load(ctx context.Context, projects []string) error {
	var missing []string
	for _, p := range projects {
		if _, ok := l.project[p]; !ok && !slices.Contains(missing, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if l.project == nil {
		l.project = make(map[string]map[string]bool)
	}
	for _, p := range missing {
		l.project[p] = map[string]bool{}
	}
	type row struct {
		project, id string
		isDefault   bool
	}
	rows, err := All(ctx, l.tx, func(r Row) (c row, err error) { return c, r.Scan(&c.project, &c.id, &c.isDefault) },
		l.s.Q.LateChannels, missing)
	if err != nil {
		return fmt.Errorf("read the channels that take late warnings: %w", err)
	}
	for _, r := range rows {
		l.project[r.project][r.id] = r.isDefault
	}
	return nil
}

// prepare gives every monitor of w its NotifyLate (reading each project
// once) and derives its next deadline again where that changed it. w is
// from builder.done, which derived every deadline from the state as it
// is.
func (l *lateSet) prepare(ctx context.Context, w *WriteSet) error {
	projects := make([]string, 0, 1)
	for _, m := range w.Monitors {
		if !slices.Contains(projects, m.ProjectID) {
			projects = append(projects, m.ProjectID)
		}
	}
	if err := l.load(ctx, projects); err != nil {
		return err
	}
	for _, m := range w.Monitors {
		was := m.NotifyLate
		if err := l.set(ctx, m); err != nil {
			return err
		}
		if m.NotifyLate != was {
			m.NextDeadlineAt = m.NextDeadline()
		}
	}
	return nil
}
