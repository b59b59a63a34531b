package manage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// Declaration is what a declaration did: the monitors it leaves, for the
// answer.
type Declaration struct {
	plan monitors.MonitorSyncPlan
	// Declared are the declared monitors as they are now, in the order
	// declared, with the fields a person's setting overrides in each.
	Declared   []*monitors.Monitor
	Overridden [][]string
	// Undeclared are the source's monitors it no longer declares.
	Undeclared   []*monitors.Monitor
	PersonFields map[string][]string
}

// DeclareParams are a source's declaration: the complete set of its
// monitors, each validated already.
type DeclareParams struct {
	ProjectID string
	Source    string
	Monitors  []*monitors.Monitor
	// AllowMassUndeclare lets the declaration undeclare more than half of
	// the source's monitors, or all of them.
	AllowMassUndeclare bool
}

// Declare writes a source's declaration in one transaction: see
// planDeclaration for the rules.
func (s *Service) Declare(ctx context.Context, p *DeclareParams) (*Declaration, error) {
	slugs := make([]string, len(p.Monitors))
	for i, m := range p.Monitors {
		slugs[i] = m.Slug
	}
	var outcome *Declaration
	err := s.store.MonitorSync(ctx, &monitors.MonitorSyncParams{
		ProjectID: p.ProjectID, Source: p.Source, Slugs: slugs, Declared: p.Monitors,
		Fn: func(current []*monitors.Monitor, pf map[string][]string) (*monitors.MonitorSyncPlan, error) {
			var err error
			outcome, err = planDeclaration(p.Source, p.Monitors, current, pf, s.now(), p.AllowMassUndeclare)
			if err != nil {
				return nil, err
			}
			return &outcome.plan, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return outcome, nil
}

// planDeclaration decides what a source's declaration of want does to the
// current monitors (those of the source, and any with a declared slug),
// at now:
//
//   - A slug no monitor has is created, as discovered.
//   - A slug of a monitor of another source, or of one a person made, is a
//     conflict: nothing is written.
//   - A monitor of the source takes the declared settings, except those a
//     person set (its person fields), and is discovered again; an
//     undeclared one is declared again ([monitors.Redeclare]), and one
//     paused because its source stopped declaring it (before undeclared
//     was a status of its own) resumes, unless a person paused it.
//   - A monitor of the source that is not declared any more is undeclared
//     ([monitors.Undeclare]: status undeclared, its history kept, its
//     incidents closed without a recovery notice, monitor.undeclared sent).
//   - Undeclaring more than half of the source's declared monitors, or
//     all of them, is refused ([monitors.CheckMassUndeclare]) unless
//     allowMass.
//
// A monitor that the declaration does not change is not written, so the
// same declaration twice changes nothing the second time.
func planDeclaration(source string, want, current []*monitors.Monitor, personFields map[string][]string, now time.Time, allowMass bool) (*Declaration, error) {
	d := &Declaration{PersonFields: map[string][]string{}}
	bySlug := make(map[string]*monitors.Monitor, len(current))
	for _, m := range current {
		bySlug[m.Slug] = m
	}
	declared := make(map[string]bool, len(want))
	for i, w := range want {
		declared[w.Slug] = true
		cur := bySlug[w.Slug]
		switch {
		case cur == nil:
			m := *w
			m.ID, m.PingKey = keys.NewID(), keys.NewPingKey()
			m.Source, m.Discovered, m.Paused = source, true, false
			m.CreatedAt, m.UpdatedAt = now, now
			m.State = monitors.State{Status: monitors.StatusNew}
			d.plan.Insert = append(d.plan.Insert, &m)
			d.Declared = append(d.Declared, &m)
			d.Overridden = append(d.Overridden, nil)
			d.PersonFields[m.ID] = []string{}
			continue
		case cur.Source != source:
			field := fmt.Sprintf("monitors[%d].slug", i)
			if cur.Source == "" {
				return nil, monitors.Conflictf(field, "%q is the slug of a monitor a person created (%s); a source does not take it over: delete it, change its slug, or hand it to this source with PATCH /api/v1/monitors/%s {\"source\": %q}",
					w.Slug, cur.ID, cur.ID, source)
			}
			return nil, monitors.Conflictf(field, "%q is the slug of a monitor declared by source %q", w.Slug, cur.Source)
		}
		pf := personFields[cur.ID]
		m := *cur
		var overridden []string
		for _, f := range ConfigFields {
			if slices.Contains(pf, f.Name) {
				if !f.Equal(cur, w) {
					overridden = append(overridden, f.Name)
				}
				continue
			}
			f.Copy(&m, w)
		}
		m.Discovered = true
		var (
			tr  *monitors.Transition
			err error
		)
		resume := !cur.Discovered && !cur.Undeclared() && cur.Paused && !slices.Contains(pf, PausedField)
		switch {
		case cur.Undeclared():
			tr, err = monitors.Redeclare(&m, now)
		case resume:
			tr, err = monitors.Resume(&m, now)
		case StateChanged(cur, &m):
			tr, err = monitors.Reconfigure(&m, now)
		}
		if err != nil {
			return nil, fmt.Errorf("declare monitor %q: %w", w.Slug, err)
		}
		if resume || !cur.Discovered || cur.Undeclared() || ConfigChanged(cur, &m) {
			m.UpdatedAt = now
			d.plan.Update = append(d.plan.Update, monitors.MonitorSyncUpdate{Monitor: &m, Transition: tr})
		}
		d.Declared = append(d.Declared, &m)
		d.Overridden = append(d.Overridden, overridden)
		d.PersonFields[m.ID] = nonNil(pf)
	}
	undeclaring, declaredNow := 0, 0
	for _, cur := range current {
		if cur.Source != source || !cur.Discovered {
			continue
		}
		declaredNow++
		if !declared[cur.Slug] {
			undeclaring++
		}
	}
	if !allowMass {
		if err := monitors.CheckMassUndeclare(source, undeclaring, declaredNow); err != nil {
			return nil, err
		}
	}
	for _, cur := range current {
		if cur.Source != source || declared[cur.Slug] {
			continue
		}
		m := *cur
		d.PersonFields[m.ID] = nonNil(personFields[m.ID])
		if cur.Discovered {
			tr, err := monitors.Undeclare(&m, now)
			if err != nil {
				return nil, fmt.Errorf("undeclare monitor %q: %w", m.Slug, err)
			}
			m.UpdatedAt = now
			d.plan.Update = append(d.plan.Update, monitors.MonitorSyncUpdate{Monitor: &m, Transition: tr})
		}
		d.Undeclared = append(d.Undeclared, &m)
	}
	slices.SortFunc(d.Undeclared, func(a, b *monitors.Monitor) int { return strings.Compare(a.Slug, b.Slug) })
	return d, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
