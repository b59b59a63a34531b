package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vigilhq/vigil/monitors"
)

// Held notifications across monitors (see monitors/held.go for the rule):
// the planning layer gives each monitor the open incidents of the monitors
// it depends on before the state machine applies anything to it, orders a
// claim so that those are applied first, wakes the dependents of a monitor
// whose incident ended, and keeps the graph of depends_on whole (IDs of
// the project, no cycle) under a lock of the project's graph.

// dependencyLock is the name SourceLock serializes changes of a project's
// depends_on graph under; no source can be named so (a NUL byte).
const dependencyLock = "\x00depends_on"

// overlay is what a transaction did so far to the incidents it writes, by
// monitor and kind: the ID of an incident it opened, or "" for one it
// ended. Parents read through it, so a monitor applied after its parent in
// the same transaction sees the parent's new incident.
type overlay map[string]map[monitors.IncidentKind]string

func (o overlay) note(monitorID string, iw *IncidentWrite) {
	var id string
	switch iw.Change.Op {
	case monitors.IncidentOpen:
		id = iw.ID
	case monitors.IncidentResolve, monitors.IncidentClose:
	default:
		return
	}
	if o[monitorID] == nil {
		o[monitorID] = make(map[monitors.IncidentKind]string)
	}
	o[monitorID][iw.Change.Kind] = id
}

// parents gives m the open incidents of the monitors it depends on, as the
// transaction sees them: those committed, changed by b's overlay.
func (s *Scripts) parents(ctx context.Context, db DB, b *builder, m *monitors.Monitor) error {
	ps := parentSet{s: s, db: db}
	return ps.set(ctx, b, m)
}

// parentSet reads the committed open incidents of the monitors that
// monitors depend on, for many monitors in one query (a claim's), and
// gives each monitor its parents as parents does.
type parentSet struct {
	s  *Scripts
	db DB
	// read are the monitors whose open incidents open holds, oldest
	// first.
	read map[string]bool
	open []monitors.ParentIncident
}

// load reads the open incidents of the monitors that ms depend on, in
// one query, unless they were read already. It must come before the
// transaction writes incidents: set reads the transaction's own changes
// through the overlay.
func (ps *parentSet) load(ctx context.Context, ms []*monitors.Monitor) error {
	missing := false
	for _, m := range ms {
		for _, dep := range m.DependsOn {
			missing = missing || !ps.read[dep]
		}
	}
	if !missing {
		return nil
	}
	// Read those read before again with the new ones, so that the list
	// stays in the query's order (oldest first).
	ids := slices.Collect(maps.Keys(ps.read))
	for _, m := range ms {
		for _, dep := range m.DependsOn {
			if !ps.read[dep] && !slices.Contains(ids, dep) {
				ids = append(ids, dep)
			}
		}
	}
	open, err := All(ctx, ps.db, func(r Row) (p monitors.ParentIncident, err error) {
		return p, r.Scan(&p.MonitorID, &p.IncidentID, &p.Kind)
	}, ps.s.Q.ParentIncidents, ids)
	if err != nil {
		return fmt.Errorf("read the incidents of the monitors %s depend on: %w", strings.Join(ids, ", "), err)
	}
	if ps.read == nil {
		ps.read = make(map[string]bool, len(ids))
	}
	for _, id := range ids {
		ps.read[id] = true
	}
	ps.open = open
	return nil
}

// set gives m its parents: the open incidents read, changed by b's
// overlay.
func (ps *parentSet) set(ctx context.Context, b *builder, m *monitors.Monitor) error {
	m.Parents = nil
	if len(m.DependsOn) == 0 {
		return nil
	}
	if err := ps.load(ctx, []*monitors.Monitor{m}); err != nil {
		return err
	}
	var ov overlay
	if b != nil {
		ov = b.overlay
	}
	for _, p := range ps.open {
		if !slices.Contains(m.DependsOn, p.MonitorID) {
			continue
		}
		if id, ok := ov[p.MonitorID][p.Kind]; ok && id != p.IncidentID {
			continue // ended (or replaced) in this transaction
		}
		m.Parents = append(m.Parents, p)
	}
	for _, dep := range m.DependsOn {
		for _, k := range monitors.IncidentKinds {
			id := ov[dep][k]
			if id == "" || slices.ContainsFunc(m.Parents, func(p monitors.ParentIncident) bool { return p.IncidentID == id }) {
				continue
			}
			m.Parents = append(m.Parents, monitors.ParentIncident{MonitorID: dep, IncidentID: id, Kind: k})
		}
	}
	return nil
}

// dependencyOrder orders ms so that a monitor comes after those of ms it
// depends on, otherwise keeping their order.
func dependencyOrder(ms []*monitors.Monitor) []*monitors.Monitor {
	in := make(map[string]bool, len(ms))
	any := false
	for _, m := range ms {
		in[m.ID] = true
		any = any || len(m.DependsOn) > 0
	}
	if !any {
		return ms
	}
	out := make([]*monitors.Monitor, 0, len(ms))
	placed := make(map[string]bool, len(ms))
	var visit func(m *monitors.Monitor, depth int)
	byID := make(map[string]*monitors.Monitor, len(ms))
	for _, m := range ms {
		byID[m.ID] = m
	}
	visit = func(m *monitors.Monitor, depth int) {
		if placed[m.ID] || depth > len(ms) {
			return
		}
		for _, d := range m.DependsOn {
			if p := byID[d]; p != nil {
				visit(p, depth+1)
			}
		}
		if !placed[m.ID] {
			placed[m.ID] = true
			out = append(out, m)
		}
	}
	for _, m := range ms {
		visit(m, 0)
	}
	return out
}

// wakeDependents moves the next deadline of the dependents of each
// monitor whose incident w ended to that time, so that their held
// incidents are looked at again at once.
func (s *Scripts) wakeDependents(ctx context.Context, tx Tx, w *WriteSet) error {
	type ended struct{ project, monitor string }
	seen := make(map[ended]bool)
	for _, iw := range w.Incidents {
		if op := iw.Change.Op; op != monitors.IncidentResolve && op != monitors.IncidentClose {
			continue
		}
		k := ended{iw.ProjectID, iw.MonitorID}
		if seen[k] {
			continue
		}
		seen[k] = true
		if _, err := tx.Exec(ctx, s.Q.DependentsWake, k.project, k.monitor, iw.Change.At.UTC()); err != nil {
			return fmt.Errorf("wake the dependents of monitor %s: %w", k.monitor, err)
		}
	}
	return nil
}

// checkDependencies resolves and checks the depends_on of ms, monitors of
// project about to be written in tx, under the lock of the project's
// graph: a slug names the monitor of the project with it and is replaced
// by its ID; then monitors.ValidateDependsOn checks each against the
// graph with ms in it. Monitors of ms whose depends_on is empty are
// checked all the same when others are (a change can close a cycle
// through any of them).
func (s *Scripts) checkDependencies(ctx context.Context, tx Tx, projectID string, ms []*monitors.Monitor) error {
	if !slices.ContainsFunc(ms, func(m *monitors.Monitor) bool { return len(m.DependsOn) > 0 }) {
		return nil
	}
	deps, err := s.dependencyGraph(ctx, tx, projectID)
	if err != nil {
		return err
	}
	graph := make(map[string]monitors.Dependency, len(deps)+len(ms))
	bySlug := make(map[string]string, len(deps)+len(ms))
	for _, d := range deps {
		graph[d.ID] = d
		bySlug[d.Slug] = d.ID
	}
	for _, m := range ms {
		if old, ok := graph[m.ID]; ok && old.Slug != m.Slug {
			delete(bySlug, old.Slug)
		}
		graph[m.ID] = monitors.Dependency{ID: m.ID, Slug: m.Slug, DependsOn: m.DependsOn}
		bySlug[m.Slug] = m.ID
	}
	for _, m := range ms {
		for i, ref := range m.DependsOn {
			if _, ok := graph[ref]; ok {
				continue
			}
			if id, ok := bySlug[ref]; ok {
				m.DependsOn[i] = id
			}
		}
		graph[m.ID] = monitors.Dependency{ID: m.ID, Slug: m.Slug, DependsOn: m.DependsOn}
	}
	for _, m := range ms {
		if err := monitors.ValidateDependsOn(m, graph); err != nil {
			return err
		}
	}
	return nil
}

// dependencyGraph takes the lock of project's depends_on graph for the
// rest of tx and reads the graph.
func (s *Scripts) dependencyGraph(ctx context.Context, tx Tx, projectID string) ([]monitors.Dependency, error) {
	if err := tx.SourceLock(ctx, projectID, dependencyLock); err != nil {
		return nil, fmt.Errorf("lock the dependencies of project %s: %w", projectID, err)
	}
	deps, err := All(ctx, tx, func(r Row) (d monitors.Dependency, err error) {
		return d, r.Scan(&d.ID, &d.Slug, &d.DependsOn)
	}, s.Q.DependencyGraph, projectID)
	if err != nil {
		return nil, fmt.Errorf("read the dependencies of project %s: %w", projectID, err)
	}
	return deps, nil
}

// resolveDeclared replaces the slugs in the DependsOn of declared monitors
// that name monitors of the project by their IDs (see
// monitors.MonitorSyncParams.Declared). Slugs of monitors the declaration
// creates are left to checkDependencies.
func (s *Scripts) resolveDeclared(ctx context.Context, tx Tx, projectID string, declared []*monitors.Monitor) error {
	if !slices.ContainsFunc(declared, func(m *monitors.Monitor) bool { return len(m.DependsOn) > 0 }) {
		return nil
	}
	deps, err := s.dependencyGraph(ctx, tx, projectID)
	if err != nil {
		return err
	}
	ids := make(map[string]bool, len(deps))
	bySlug := make(map[string]string, len(deps))
	for _, d := range deps {
		ids[d.ID] = true
		bySlug[d.Slug] = d.ID
	}
	for _, m := range declared {
		for i, ref := range m.DependsOn {
			if id, ok := bySlug[ref]; ok && !ids[ref] {
				m.DependsOn[i] = id
			}
		}
	}
	return nil
}
