package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vigilhq/vigil/monitors"
)

var errNoMonitor = errors.New("ping names no monitor: give a ping key, or a project ping key and a slug")

// PingRecordBatch stores a batch of pings in one transaction. Each ping is
// applied with monitors.ApplyPing, in slice order, to its monitor, which is
// locked for the rest of the transaction. A ping that names no monitor,
// whose monitor cannot be created (ErrConflict when its ping key is taken),
// or that the state machine refuses, fails alone in its result and is not
// stored; the others are. On success, each stored ping's ID and monitor ID
// are set in its params and its result.
func (s *Scripts) PingRecordBatch(ctx context.Context, p *monitors.PingRecordBatchParams) ([]monitors.PingRecordResult, error) {
	results := make([]monitors.PingRecordResult, len(p.Pings))
	if len(p.Pings) == 0 {
		return results, nil
	}
	q := &PingBatchQuery{PingKeys: []string{}, ProjectKeys: []string{}, Slugs: []SlugRef{}, IDs: len(p.Pings)}
	for i, pp := range p.Pings {
		switch {
		case pp == nil:
			results[i].Err = errors.New("record ping: nil ping")
		case pp.PingKey != "":
			q.PingKeys = append(q.PingKeys, pp.PingKey)
		case pp.ProjectPingKey != "" && pp.Slug != "":
			q.ProjectKeys = append(q.ProjectKeys, pp.ProjectPingKey)
			q.Slugs = append(q.Slugs, SlugRef{pp.ProjectPingKey, pp.Slug})
		default:
			results[i].Err = fmt.Errorf("record ping: %w: %w", monitors.ErrNotFound, errNoMonitor)
		}
	}
	pings := make([]*monitors.Ping, len(p.Pings))
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		rows, err := tx.PingBatchLoad(ctx, q)
		if err != nil {
			return fmt.Errorf("load monitors: %w", err)
		}
		loaded := newMonitorIndex(rows.Projects)
		for _, m := range rows.Monitors {
			loaded.add(m)
		}
		if err := s.createMonitors(ctx, tx, p.Pings, results, loaded); err != nil {
			return err
		}
		ids := rows.PingIDs
		var b builder
		maint := windows{s: s, tx: tx, project: rows.Windows}
		for i, pp := range p.Pings {
			if results[i].Err != nil {
				continue
			}
			m := loaded.find(pp)
			if m == nil {
				results[i].Err = fmt.Errorf("record ping: %w", monitors.ErrNotFound)
				continue
			}
			if pp.Update != nil && !loaded.created[m.ID] {
				pingErr, err := s.updateMonitor(ctx, tx, &b, m, pp)
				if err != nil {
					return err
				}
				if pingErr != nil {
					results[i].Err = fmt.Errorf("update monitor %s: %w", m.ID, pingErr)
					continue
				}
			}
			ping := CleanPing(pp.Ping)
			ping.MonitorID = m.ID
			if len(ids) > 0 {
				ping.ID, ids = ids[0], ids[1:]
			}
			if err := maint.set(ctx, m, ping.At); err != nil {
				return err
			}
			if err := s.parents(ctx, tx, &b, m); err != nil {
				return err
			}
			tr, err := monitors.ApplyPing(m, &ping)
			if err != nil {
				results[i].Err = fmt.Errorf("record ping for monitor %s: %w", m.ID, err)
				continue
			}
			pings[i] = &ping
			b.w.Pings = append(b.w.Pings, &ping)
			if err := b.change(m, tr, &ping, false); err != nil {
				return err
			}
			results[i].MonitorID, results[i].Monitor, results[i].Transition = m.ID, m, tr
		}
		if err := s.writeLate(ctx, tx, b.done(), &lateSet{s: s, tx: tx, project: rows.Late}); err != nil {
			return fmt.Errorf("record pings: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, pp := range p.Pings {
		if results[i].Err == nil {
			results[i].PingID = pings[i].ID
			pp.Ping.ID, pp.Ping.MonitorID = pings[i].ID, pings[i].MonitorID
		}
	}
	return results, nil
}

// updateMonitor changes m's settings with pp.Update (a ping with
// update=1) under the batch's lock of m: the monitor's whole row and its
// person fields are written with the batch. An error of Update fails the
// ping alone (pingErr) and changes nothing; err fails the batch.
func (s *Scripts) updateMonitor(ctx context.Context, tx Tx, b *builder, m *monitors.Monitor, pp *monitors.PingRecordParams) (pingErr, err error) {
	pf, err := One(ctx, tx, scalar[[]string], s.Q.PersonFieldsGet, m.ProjectID, m.ID)
	if err != nil {
		return nil, fmt.Errorf("load person fields of monitor %s: %w", m.ID, err)
	}
	// The change is made on a copy, kept only when it succeeds: the
	// batch's other pings see m.
	c := *m
	tr, fields, err := pp.Update(&c, pf)
	if err != nil {
		return err, nil
	}
	if c.ID != m.ID || c.ProjectID != m.ProjectID {
		return errIdentity, nil
	}
	*m = c
	if fields == nil {
		fields = []string{}
	}
	if _, err := tx.Exec(ctx, s.Q.PersonFieldsSet, m.ProjectID, m.ID, fields); err != nil {
		return nil, fmt.Errorf("set person fields of monitor %s: %w", m.ID, err)
	}
	b.w.FullRow = true
	return nil, b.change(m, tr, nil, false)
}

// createMonitors creates, from NewMonitor, the monitors that create=1 pings
// name by slug and that do not exist yet. Creations go in (project, slug)
// order, the same in every transaction; one that fails fails only its
// pings. A monitor created meanwhile by another transaction is used as
// found.
func (s *Scripts) createMonitors(ctx context.Context, tx Tx, pings []*monitors.PingRecordParams, results []monitors.PingRecordResult, loaded *monitorIndex) error {
	type want struct {
		key   slugKey
		first int // the index of the first ping that asks for it
	}
	var wants []want
	seen := make(map[slugKey]bool)
	for i, pp := range pings {
		if results[i].Err != nil || !pp.Create || pp.PingKey != "" || loaded.find(pp) != nil {
			continue
		}
		pid, ok := loaded.projects[pp.ProjectPingKey]
		if !ok {
			continue // not found, later
		}
		k := slugKey{pid, pp.Slug}
		if !seen[k] {
			seen[k] = true
			wants = append(wants, want{k, i})
		}
	}
	slices.SortFunc(wants, func(a, b want) int {
		return cmp.Or(cmp.Compare(a.key.project, b.key.project), cmp.Compare(a.key.slug, b.key.slug))
	})
	failed := make(map[slugKey]error)
	for _, wt := range wants {
		m, err := NewPingMonitor(wt.key.project, wt.key.slug, pings[wt.first])
		if err == nil {
			err = s.checkRoom(ctx, tx, wt.key.project, 1)
		}
		if err == nil {
			var created bool
			if m, created, err = tx.MonitorCreate(ctx, m); err == nil {
				loaded.add(m)
				if created {
					loaded.created[m.ID] = true
				}
				results[wt.first].Created = created
				continue
			}
			err = fmt.Errorf("create monitor %q: %w", wt.key.slug, err)
		}
		failed[wt.key] = err
	}
	for i, pp := range pings {
		if results[i].Err != nil || pp.PingKey != "" {
			continue
		}
		if err, ok := failed[slugKey{loaded.projects[pp.ProjectPingKey], pp.Slug}]; ok {
			results[i].Err = err
		}
	}
	return nil
}

// NewPingMonitor returns the monitor a create=1 ping makes in the project
// under slug: its NewMonitor, named after the slug when it has no name,
// created at the ping's time when it says nothing else, and valid.
func NewPingMonitor(projectID, slug string, pp *monitors.PingRecordParams) (*monitors.Monitor, error) {
	if pp.NewMonitor == nil {
		return nil, fmt.Errorf("create monitor %q: no NewMonitor given", slug)
	}
	m := *pp.NewMonitor
	m.ProjectID, m.Slug = projectID, slug
	if m.Name == "" {
		m.Name = m.Slug
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = pp.Ping.At
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("create monitor %q: %w", slug, err)
	}
	m.NextDeadlineAt = m.NextDeadline()
	return &m, nil
}

type slugKey struct{ project, slug string }

// monitorIndex finds the loaded monitors of a batch by ping key and by slug.
type monitorIndex struct {
	projects  map[string]string // project ping key → project ID
	byPingKey map[string]*monitors.Monitor
	bySlug    map[slugKey]*monitors.Monitor
	created   map[string]bool // IDs of the monitors this batch created
}

func newMonitorIndex(projects map[string]string) *monitorIndex {
	if projects == nil {
		projects = map[string]string{}
	}
	return &monitorIndex{projects: projects, byPingKey: make(map[string]*monitors.Monitor),
		bySlug: make(map[slugKey]*monitors.Monitor), created: make(map[string]bool)}
}

func (x *monitorIndex) add(m *monitors.Monitor) {
	x.byPingKey[m.PingKey] = m
	x.bySlug[slugKey{m.ProjectID, m.Slug}] = m
}

func (x *monitorIndex) find(pp *monitors.PingRecordParams) *monitors.Monitor {
	if pp.PingKey != "" {
		return x.byPingKey[pp.PingKey]
	}
	pid, ok := x.projects[pp.ProjectPingKey]
	if !ok {
		return nil
	}
	return x.bySlug[slugKey{pid, pp.Slug}]
}

// CleanPing returns a copy of p fit to store: UTC times at the stores'
// precision (the microsecond), storable text, and its own copies of the
// pointed-to values.
func CleanPing(p monitors.Ping) monitors.Ping {
	p.At = p.At.UTC().Truncate(time.Microsecond)
	if p.RetryAt != nil {
		t := p.RetryAt.UTC().Truncate(time.Microsecond)
		p.RetryAt = &t
	}
	if p.ScheduledAt != nil {
		t := p.ScheduledAt.UTC().Truncate(time.Microsecond)
		p.ScheduledAt = &t
	}
	p.RID, p.Body = CleanText(p.RID), CleanText(p.Body)
	p.RemoteAddr, p.UserAgent = CleanText(p.RemoteAddr), CleanText(p.UserAgent)
	if p.ExitCode != nil {
		v := *p.ExitCode
		p.ExitCode = &v
	}
	if p.DurationMS != nil {
		v := *p.DurationMS
		p.DurationMS = &v
	}
	return p
}

// CleanText makes s storable as PostgreSQL text, which refuses NUL bytes
// and invalid UTF-8: one odd ping body must not fail a whole batch. Both
// stores keep the same text.
func CleanText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}
