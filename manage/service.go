package manage

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// Store is what the service needs of the store.
type Store interface {
	MonitorInsert(ctx context.Context, m *monitors.Monitor) error
	MonitorPatch(ctx context.Context, p *monitors.MonitorPatchParams) (*monitors.Monitor, []string, error)
	MonitorDelete(ctx context.Context, projectID, id string) error
	ChannelCreate(ctx context.Context, p *monitors.ChannelCreateParams) (*monitors.Channel, error)
	ChannelModify(ctx context.Context, p *monitors.ChannelModifyParams) (*monitors.Channel, error)
	APIKeyCreate(ctx context.Context, p *monitors.APIKeyCreateParams) (*monitors.APIKey, error)
	APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error
	MonitorSync(ctx context.Context, p *monitors.MonitorSyncParams) error
	MonitorGet(ctx context.Context, projectID, id string) (*monitors.Monitor, error)
	StatusPageCreate(ctx context.Context, p *monitors.StatusPage) error
	StatusPageModify(ctx context.Context, projectID, id string, fn func(p *monitors.StatusPage) error) (*monitors.StatusPage, error)
	StatusPageDelete(ctx context.Context, projectID, id string) error
	IncidentNoteCreate(ctx context.Context, n *monitors.IncidentNote) error
	IncidentNoteDelete(ctx context.Context, projectID, id string) error
}

// Service makes the changes a person asks for.
type Service struct {
	store Store
	now   func() time.Time
}

// New returns a Service on store, with now as its clock (nil: time.Now).
func New(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// MonitorCreate validates a new monitor made by a person and stores it. A
// slug in use is monitors.ErrConflict.
func (s *Service) MonitorCreate(ctx context.Context, m *monitors.Monitor) error {
	if err := m.Validate(); err != nil {
		return err
	}
	return s.store.MonitorInsert(ctx, m)
}

// MonitorDelete deletes a monitor and its history.
func (s *Service) MonitorDelete(ctx context.Context, projectID, id string) error {
	return s.store.MonitorDelete(ctx, projectID, id)
}

// MonitorChange is a person's change of a monitor.
type MonitorChange struct {
	ProjectID, ID string
	// Apply changes the monitor's settings, and returns the names (of
	// ConfigFields) of those the person set. Nil changes none. An error
	// aborts the change and is returned as is.
	Apply func(m *monitors.Monitor) (set []string, err error)
	// Paused, when set, pauses or resumes the monitor.
	Paused *bool
	// Source, when set, hands the monitor to another source, or with ""
	// takes it from its source.
	Source *string
	// PersonFields, when set, replaces the person fields the settings set
	// are added to.
	PersonFields *[]string
}

// MonitorChange makes a person's change of a monitor in one transaction:
// the settings set become person fields (so the monitor's source leaves
// them alone), a pause or resume is the person field "paused", a change of
// what the state machine judges by reconfigures it, and the slug of a
// monitor a source declares stays the source's unless the change takes the
// monitor from its source. It returns the monitor and its person fields.
func (s *Service) MonitorChange(ctx context.Context, c *MonitorChange) (*monitors.Monitor, []string, error) {
	return s.store.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: c.ProjectID, ID: c.ID,
		Fn: ChangeFunc(c, s.now())})
}

// ChangeFunc returns the rules of MonitorChange as a function of the
// monitor and its person fields, for a store to run under its lock: the
// Fn of MonitorChange's MonitorPatchParams, and the Update of a ping with
// update=1 (monitors.PingRecordParams). now is the time of the change.
func ChangeFunc(c *MonitorChange, now time.Time) func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
	return func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
		old := *m
		var set []string
		if c.Apply != nil {
			var err error
			if set, err = c.Apply(m); err != nil {
				return nil, nil, err
			}
		}
		if m.Slug != old.Slug && old.Source != "" && (c.Source == nil || *c.Source != "") {
			return nil, nil, &monitors.ValidationError{Field: "slug", Message: fmt.Sprintf("the slug of a monitor declared by source %q is the source's: change it there, or take the monitor from the source with \"source\": \"\"", old.Source)}
		}
		if c.Source != nil && *c.Source != old.Source {
			// The monitor is the new source's once it declares it.
			m.Source, m.Discovered = *c.Source, false
		}
		if err := m.Validate(); err != nil {
			return nil, nil, err
		}
		base := pf
		if c.PersonFields != nil {
			base = *c.PersonFields
		}
		fields := MergeFields(base, set)
		var (
			tr  *monitors.Transition
			err error
		)
		switch {
		case c.Paused != nil && *c.Paused:
			fields = MergeFields(fields, []string{PausedField})
			tr, err = monitors.Pause(m, now)
		case c.Paused != nil:
			fields = without(fields, PausedField)
			if m.Paused {
				tr, err = monitors.Resume(m, now)
			}
		case StateChanged(&old, m):
			tr, err = monitors.Reconfigure(m, now)
		}
		if err != nil {
			return nil, nil, err
		}
		if ConfigChanged(&old, m) || m.Paused != old.Paused || m.Source != old.Source || m.Slug != old.Slug ||
			!slices.Equal(fields, MergeFields(pf)) {
			m.UpdatedAt = now
		}
		return tr, fields, nil
	}
}

// MonitorSetPaused pauses or resumes a monitor as a person: a monitor a
// person paused stays paused when its source declares it again, until a
// person resumes it.
func (s *Service) MonitorSetPaused(ctx context.Context, projectID, id string, paused bool) (*monitors.Monitor, []string, error) {
	now := s.now()
	return s.store.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: projectID, ID: id,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			fields := without(pf, PausedField)
			if paused {
				fields = MergeFields(pf, []string{PausedField})
			}
			if m.Paused == paused {
				return nil, fields, nil
			}
			m.UpdatedAt = now
			if paused {
				tr, err := monitors.Pause(m, now)
				return tr, fields, err
			}
			tr, err := monitors.Resume(m, now)
			return tr, fields, err
		}})
}

// ChannelCreate validates a new channel and stores it; its name is
// trimmed, and without group_seconds it gathers incidents as its kind
// does by default (monitors.ChannelGroupDefault). A name in use in the
// project is monitors.ErrConflict.
func (s *Service) ChannelCreate(ctx context.Context, p *monitors.ChannelCreateParams) (*monitors.Channel, error) {
	q := *p
	q.Name = strings.TrimSpace(q.Name)
	if q.Now.IsZero() {
		q.Now = s.now()
	}
	if q.GroupSeconds == nil {
		g := monitors.ChannelGroupDefault(q.Kind)
		q.GroupSeconds = &g
	}
	c := &monitors.Channel{ProjectID: q.ProjectID, Kind: q.Kind, Name: q.Name, Config: q.Config, IsDefault: q.IsDefault,
		NotifyLate: q.NotifyLate, GroupSeconds: *q.GroupSeconds, Report: q.Report}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return s.store.ChannelCreate(ctx, &q)
}

// ChannelModify changes a channel under a lock with p.Fn, and validates it
// before it is written; its name is trimmed.
func (s *Service) ChannelModify(ctx context.Context, p *monitors.ChannelModifyParams) (*monitors.Channel, error) {
	return s.store.ChannelModify(ctx, &monitors.ChannelModifyParams{ProjectID: p.ProjectID, ID: p.ID,
		Fn: func(c *monitors.Channel) error {
			if err := p.Fn(c); err != nil {
				return err
			}
			c.Name = strings.TrimSpace(c.Name)
			return c.Validate()
		}})
}
