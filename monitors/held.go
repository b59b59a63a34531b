package monitors

import (
	"slices"
	"strings"
	"time"
)

// Held notifications: an incident that opens, and is recorded and shown,
// but whose notification waits until a condition ends. Two conditions hold
// one, each decided here and nowhere else:
//
//   - the monitor is snoozed (SnoozedUntil is in the future); the snooze
//     ends by itself at that time, or when a person ends it;
//   - a monitor it depends on (DependsOn) has an open incident (Parents,
//     set by the planning layer): the new incident is suppressed under it,
//     until no monitor it depends on has one;
//   - the monitor is flapping (State.Flapping): the incident waits until
//     the monitor is stable again, and is notified then if still open.
//
// While an incident is held, its opened event is recorded but delivered to
// no channel, nor its updates, nor reminders; if it resolves while held,
// it closes without a word (no one was told it opened). When the last
// condition ends and the incident is still open, the state machine emits
// IncidentRelease, once: the planning layer delivers the incident's opened
// event then. A suppressed incident is looked at again every
// SuppressRecheck while it is held, and the planning layer also wakes its
// monitor when a parent's incident ends, so it cannot stay held by a
// parent that recovered: holding never hides an outage for longer than its
// condition lasts.

// Bounds of a snooze and of suppression.
const (
	// SnoozeMax is the longest snooze a person can set at once.
	SnoozeMax = 7 * 24 * time.Hour
	// SuppressRecheck is how often a suppressed incident's parents are
	// looked at again, should the wake-up on a parent's recovery be missed
	// (another transaction held the child at that moment).
	SuppressRecheck = time.Minute
	// DependsOnMax bounds how many monitors one may depend on.
	DependsOnMax = 50
)

// HeldNotice is why an open incident's notification is held.
type HeldNotice struct {
	// Snooze: it opened while the monitor was snoozed; it waits for the
	// snooze to end.
	Snooze bool `json:"snooze,omitempty"`
	// Parent is the incident of a monitor it depends on that it is
	// suppressed under; it waits until no monitor it depends on has an
	// open incident. Empty when not suppressed.
	Parent string `json:"parent,omitempty"`
	// CheckAt is when a suppressed incident's parents are looked at again.
	CheckAt time.Time `json:"check_at,omitzero"`
	// Flapping: it opened, or its hold was to end, while the monitor was
	// flapping; it waits for the monitor to be stable (ruleStable).
	Flapping bool `json:"flapping,omitempty"`
}

// ParentIncident is an open incident of a monitor another depends on.
type ParentIncident struct {
	MonitorID  string
	IncidentID string
	Kind       IncidentKind
}

// Snoozed reports whether m is snoozed at t.
func (m *Monitor) Snoozed(t time.Time) bool {
	return m.SnoozedUntil != nil && t.Before(*m.SnoozedUntil)
}

// holdAt returns why an incident opening at t would be held, if it would.
func (x *machine) holdAt(t time.Time) (HeldNotice, bool) {
	var h HeldNotice
	h.Snooze = x.m.Snoozed(t)
	if len(x.m.Parents) > 0 {
		h.Parent = x.m.Parents[0].IncidentID
		h.CheckAt = t.Add(SuppressRecheck)
	}
	h.Flapping = x.s.IsFlapping()
	return h, h.Snooze || h.Parent != "" || h.Flapping
}

// isHeld reports whether the open incident of kind is held.
func (x *machine) isHeld(kind IncidentKind) bool {
	_, ok := x.s.Held[kind]
	return ok
}

// release ends the holds whose condition is over at now, and emits an
// IncidentRelease for each incident no longer held: the one time its
// opened event goes out. A suppressed incident whose parents are still
// open is looked at again SuppressRecheck later.
func (x *machine) release(now time.Time) {
	for _, k := range IncidentKinds {
		h, ok := x.s.Held[k]
		if !ok {
			continue
		}
		if h.Snooze && !x.m.Snoozed(now) {
			h.Snooze = false
		}
		if h.Parent != "" {
			if len(x.m.Parents) == 0 {
				h.Parent, h.CheckAt = "", time.Time{}
			} else if !now.Before(h.CheckAt) {
				h.CheckAt = now.Add(SuppressRecheck)
			}
		}
		// A flapping monitor's incidents wait for it to be stable.
		h.Flapping = x.s.IsFlapping()
		if h.Snooze || h.Parent != "" || h.Flapping {
			x.s.Held[k] = h
			continue
		}
		delete(x.s.Held, k)
		if !x.isOpen(k) {
			continue
		}
		x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentRelease, Kind: k, At: now})
	}
}

// releaseAt returns when time alone next ends a hold or looks at one
// again, zero when no incident is held.
func (m *Monitor) releaseAt() time.Time {
	var at time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for _, h := range m.State.Held {
		if h.Snooze && m.SnoozedUntil != nil {
			earliest(*m.SnoozedUntil)
		}
		if h.Parent != "" {
			earliest(h.CheckAt)
		}
		if !h.Snooze && h.Parent == "" && !m.State.IsFlapping() {
			// A hold whose condition ended is released at once (a
			// flapping monitor's, when it is stable: ruleStable).
			earliest(time.Unix(0, 0).UTC())
		}
	}
	return at
}

// Snooze snoozes m until until, at now: the incidents it opens from now on
// are held until then, and so are those already held (suppressed ones then
// wait for the snooze too). Incidents already notified stay as they are;
// their reminders and updates wait for the end of the snooze, their
// recovery still goes out. until must be after now (see
// [ValidateSnoozeUntil]).
func Snooze(m *Monitor, until, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	u := until.UTC().Truncate(time.Microsecond)
	m.SnoozedUntil = &u
	for k, h := range x.s.Held {
		h.Snooze = true
		x.s.Held[k] = h
	}
	return x.finish(), nil
}

// Unsnooze ends m's snooze at now: each incident held only by it is
// notified now, once.
func Unsnooze(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	m.SnoozedUntil = nil
	x.release(now)
	return x.finish(), nil
}

// ReleaseHeld ends, at now, the holds of m's incidents whose condition
// is over (m.Parents as they are now): after a change of depends_on.
func ReleaseHeld(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	if !m.Paused && !m.Undeclared() {
		x.release(now)
	}
	return x.finish(), nil
}

// ValidateSnoozeUntil checks a snooze's end: after now, and at most
// SnoozeMax later. field names the field it came from.
func ValidateSnoozeUntil(field string, until, now time.Time) error {
	if !until.After(now) {
		return invalid(field, "must be in the future")
	}
	if until.Sub(now) > SnoozeMax {
		return invalid(field, "a snooze lasts at most %s", FormatDuration(SnoozeMax))
	}
	return nil
}

// Dependency is a monitor as a dependency check sees it.
type Dependency struct {
	ID, Slug  string
	DependsOn []string
}

// ValidateDependsOn checks m.DependsOn against the monitors of its project
// (project, keyed by ID; m's own entry is replaced by m): every one exists,
// none is m itself, no ID is repeated, and no cycle forms. A cycle is
// refused naming it by slug ("depends_on: cycle a → b → a").
func ValidateDependsOn(m *Monitor, project map[string]Dependency) error {
	if len(m.DependsOn) > DependsOnMax {
		return invalid("depends_on", "at most %d monitors", DependsOnMax)
	}
	seen := make(map[string]bool, len(m.DependsOn))
	for _, id := range m.DependsOn {
		switch {
		case id == m.ID:
			return invalid("depends_on", "a monitor cannot depend on itself")
		case seen[id]:
			return invalid("depends_on", "%q is listed twice", id)
		}
		seen[id] = true
		if _, ok := project[id]; !ok {
			return invalid("depends_on", "no monitor %q in this project", id)
		}
	}
	graph := make(map[string]Dependency, len(project)+1)
	for id, d := range project {
		graph[id] = d
	}
	graph[m.ID] = Dependency{ID: m.ID, Slug: m.Slug, DependsOn: m.DependsOn}
	if cycle := findCycle(m.ID, graph); cycle != nil {
		names := make([]string, len(cycle))
		for i, id := range cycle {
			names[i] = cmpOr(graph[id].Slug, id)
		}
		return invalid("depends_on", "cycle %s", strings.Join(names, " → "))
	}
	return nil
}

// findCycle returns a cycle through start (start, ..., start), or nil.
func findCycle(start string, graph map[string]Dependency) []string {
	done := make(map[string]bool)
	var path []string
	var walk func(id string) []string
	walk = func(id string) []string {
		if id == start && len(path) > 0 {
			return append(slices.Clone(path), start)
		}
		if done[id] {
			return nil
		}
		done[id] = true
		path = append(path, id)
		for _, next := range graph[id].DependsOn {
			if c := walk(next); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		return nil
	}
	return walk(start)
}
