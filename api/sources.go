package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// SourceMaxLen bounds a source's name.
const SourceMaxLen = 100

// checkSource validates a source name: 1 to 100 printable characters, no
// slash (it is a path segment).
func checkSource(s, field string) error {
	if s == "" && field == "source" {
		return nil // taking a monitor from its source
	}
	if s == "" || len(s) > SourceMaxLen {
		return invalidf(field, "must be 1 to %d characters", SourceMaxLen)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '/' {
			return invalidf(field, "%q must be printable characters without a slash", s)
		}
	}
	return nil
}

// declare answers PUT /api/v1/sources/{source}/monitors: the source's
// complete set of monitors. See the package documentation for the rules.
func (h *Handler) declare(c echo.Context, rq *request) error {
	source := pathParam(c, "source")
	if err := checkSource(source, "source (in the path)"); err != nil {
		return err
	}
	b, err := h.readBody(c)
	if err != nil {
		return err
	}
	var top struct {
		Monitors []json.RawMessage `json:"monitors"`
	}
	if _, err := decodeJSON(b, &top, "", nil); err != nil {
		return err
	}
	if top.Monitors == nil {
		return invalidf("monitors", "is required: the complete set of the source's monitors ([] for none)")
	}
	ctx := c.Request().Context()
	readOnly := readOnlyFields(Monitor{}, DeclaredMonitor{})
	want := make([]*monitors.Monitor, len(top.Monitors))
	where := make(map[string]int, len(top.Monitors))
	for i, raw := range top.Monitors {
		path := fmt.Sprintf("monitors[%d]", i)
		var in DeclaredMonitor
		obj, err := decodeJSON(raw, &in, path, readOnly)
		if err != nil {
			return err
		}
		if obj.isNull("retry_policy") {
			delete(obj, "retry_policy") // left out: none
		}
		if in.Slug == nil || *in.Slug == "" {
			return invalidf(join(path, "slug"), "is required: a source's monitors are keyed by slug")
		}
		if j, dup := where[*in.Slug]; dup {
			return invalidf(join(path, "slug"), "%q is declared twice (also monitors[%d])", *in.Slug, j)
		}
		where[*in.Slug] = i
		m := newMonitor(rq.key.ProjectID)
		if _, err := applyFields(m, &in.MonitorFields, obj, path); err != nil {
			return err
		}
		finishNew(m)
		if err := validateMonitor(m, path); err != nil {
			return err
		}
		want[i] = m
	}
	for i, m := range want {
		if err := h.checkChannels(ctx, rq, m.Channels, fmt.Sprintf("monitors[%d].channels", i)); err != nil {
			return err
		}
	}

	slugs := make([]string, len(want))
	for i, m := range want {
		slugs[i] = m.Slug
	}
	var outcome *declaration
	err = h.store.MonitorSync(ctx, &monitors.MonitorSyncParams{
		ProjectID: rq.key.ProjectID, Source: source, Slugs: slugs,
		Fn: func(current []*monitors.Monitor, pf map[string][]string) (*monitors.MonitorSyncPlan, error) {
			var err error
			outcome, err = planDeclaration(source, want, current, pf, h.now())
			if err != nil {
				return nil, err
			}
			return &outcome.plan, nil
		},
	})
	if err != nil {
		return err
	}
	res := DeclarationResult{}
	if res.Monitors, err = h.renderMonitors(c, rq, outcome.declared, outcome.personFields); err != nil {
		return err
	}
	for i := range res.Monitors {
		res.Monitors[i].OverriddenFields = outcome.overridden[i]
	}
	if res.Undeclared, err = h.renderMonitors(c, rq, outcome.undeclared, outcome.personFields); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, res)
}

// declaration is what a declaration does: the plan to write, and the
// monitors it leaves, for the answer.
type declaration struct {
	plan monitors.MonitorSyncPlan
	// declared are the declared monitors as they will be, in the order
	// declared, with the fields a person's setting overrides in each.
	declared   []*monitors.Monitor
	overridden [][]string
	// undeclared are the source's monitors it no longer declares.
	undeclared   []*monitors.Monitor
	personFields map[string][]string
}

// planDeclaration decides what a source's declaration of want does to the
// current monitors (those of the source, and any with a declared slug),
// at now:
//
//   - A slug no monitor has is created, as discovered.
//   - A slug of a monitor of another source, or of one a person made, is a
//     conflict: nothing is written.
//   - A monitor of the source takes the declared settings, except those a
//     person set (its person fields), and is discovered again; if it was
//     paused because its source stopped declaring it, it resumes, unless
//     a person paused it.
//   - A monitor of the source that is not declared any more is marked as
//     not discovered and paused (its history is kept).
//
// A monitor that the declaration does not change is not written, so the
// same declaration twice changes nothing the second time.
func planDeclaration(source string, want, current []*monitors.Monitor, personFields map[string][]string, now time.Time) (*declaration, error) {
	d := &declaration{personFields: map[string][]string{}}
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
			d.declared = append(d.declared, &m)
			d.overridden = append(d.overridden, nil)
			d.personFields[m.ID] = []string{}
			continue
		case cur.Source != source:
			field := fmt.Sprintf("monitors[%d].slug", i)
			if cur.Source == "" {
				return nil, conflictf(field, "%q is the slug of a monitor a person created (%s); a source does not take it over: delete it, change its slug, or hand it to this source with PATCH /api/v1/monitors/%s {\"source\": %q}",
					w.Slug, cur.ID, cur.ID, source)
			}
			return nil, conflictf(field, "%q is the slug of a monitor declared by source %q", w.Slug, cur.Source)
		}
		pf := personFields[cur.ID]
		m := *cur
		var overridden []string
		for _, f := range configFields {
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
		resume := !cur.Discovered && cur.Paused && !slices.Contains(pf, pausedField)
		switch {
		case resume:
			tr, err = monitors.Resume(&m, now)
		case stateChanged(cur, &m):
			tr, err = monitors.Reconfigure(&m, now)
		}
		if err != nil {
			return nil, fmt.Errorf("declare monitor %q: %w", w.Slug, err)
		}
		if resume || !cur.Discovered || configChanged(cur, &m) {
			m.UpdatedAt = now
			d.plan.Update = append(d.plan.Update, monitors.MonitorSyncUpdate{Monitor: &m, Transition: tr})
		}
		d.declared = append(d.declared, &m)
		d.overridden = append(d.overridden, overridden)
		d.personFields[m.ID] = nonNil(pf)
	}
	for _, cur := range current {
		if cur.Source != source || declared[cur.Slug] {
			continue
		}
		m := *cur
		d.personFields[m.ID] = nonNil(personFields[m.ID])
		if cur.Discovered {
			m.Discovered, m.UpdatedAt = false, now
			tr, err := monitors.Pause(&m, now)
			if err != nil {
				return nil, fmt.Errorf("undeclare monitor %q: %w", m.Slug, err)
			}
			d.plan.Update = append(d.plan.Update, monitors.MonitorSyncUpdate{Monitor: &m, Transition: tr})
		}
		d.undeclared = append(d.undeclared, &m)
	}
	slices.SortFunc(d.undeclared, func(a, b *monitors.Monitor) int { return strings.Compare(a.Slug, b.Slug) })
	return d, nil
}
