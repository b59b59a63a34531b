package healthchecks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/manage"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers/kinds"
)

// Store is what the import needs of Vigil's store.
type Store interface {
	MonitorList(ctx context.Context, p *monitors.MonitorListParams) ([]*monitors.Monitor, error)
	MonitorGetByPingKey(ctx context.Context, pingKey string) (*monitors.Monitor, error)
	ChannelList(ctx context.Context, p *monitors.ChannelListParams) ([]*monitors.Channel, error)
	MonitorSync(ctx context.Context, p *monitors.MonitorSyncParams) error
}

// ErrReadOnlyKey is returned by [Import] for checks read with a read-only
// key: they have no UUIDs, so their ping URLs could not be kept.
var ErrReadOnlyKey = errors.New("healthchecks: the API key is read-only: Healthchecks shows such keys no check UUIDs, " +
	"so the ping URLs could not be kept; use a read-write API key of the project")

// ImportParams are the inputs of [Import].
type ImportParams struct {
	ProjectID string
	Checks    []Check
	// Integrations are the project's integrations; nil when they could not
	// be read, for IntegrationsErr.
	Integrations    []Integration
	IntegrationsErr error
	// DryRun plans and reports, and writes nothing.
	DryRun bool
	Now    time.Time
}

// Report says what an import did (or, dry, would do).
type Report struct {
	Made, Changed, Unchanged, Skipped []Item
	Integrations                      []IntegrationItem
	// IntegrationsNote says why integrations were not read ("" when they
	// were).
	IntegrationsNote string
	DryRun           bool
}

// Item is one check of the report.
type Item struct {
	UUID, Name, Slug string
	// Fields are the settings a change changed.
	Fields []string
	// Reason says why a check was skipped.
	Reason string
	// Notes are what was not kept of the check, and why.
	Notes []string
}

// IntegrationItem is one integration of the report.
type IntegrationItem struct {
	ID, Name, Kind string
	// ChannelID is the Vigil channel it is mapped to; "" when it was not
	// imported, for Reason.
	ChannelID, ChannelName string
	Reason                 string
}

// Import makes the monitors of p.Checks in project p.ProjectID, matched by
// ping key (the check's UUID): new checks are created, changed ones
// changed, the rest left alone. Checks Vigil cannot take are skipped, with
// the reason in the report; a store error writes nothing.
func Import(ctx context.Context, store Store, p *ImportParams) (*Report, error) {
	for _, c := range p.Checks {
		if c.UUID == "" && c.UniqueKey != "" {
			return nil, ErrReadOnlyKey
		}
	}
	channels, err := store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: p.ProjectID})
	if err != nil {
		return nil, fmt.Errorf("list the project's channels: %w", err)
	}
	integrations, mapped := mapIntegrations(p.Integrations, channels)

	// Which UUIDs are ping keys already: of this project (their slugs are
	// locked with the rest) or of another (skipped).
	var slugs []string
	elsewhere := map[string]string{}
	for _, c := range p.Checks {
		uuid := strings.ToLower(strings.TrimSpace(c.UUID))
		if !keys.IsPingKey(uuid) {
			continue
		}
		m, err := store.MonitorGetByPingKey(ctx, uuid)
		switch {
		case errors.Is(err, monitors.ErrNotFound):
			s := wantSlug(c, uuid)
			slugs = append(slugs, s, AltSlug(s, uuid))
		case err != nil:
			return nil, fmt.Errorf("look up ping key %s: %w", uuid, err)
		case m.ProjectID != p.ProjectID:
			elsewhere[uuid] = m.ProjectID
		default:
			slugs = append(slugs, m.Slug, wantSlug(c, uuid))
		}
	}

	pl := &planner{p: p, mapped: mapped, elsewhere: elsewhere}
	if p.IntegrationsErr != nil {
		pl.noIntegrations = true
	}
	var report *Report
	run := func(current []*monitors.Monitor, fields map[string][]string) (*monitors.MonitorSyncPlan, error) {
		plan, r, err := pl.plan(current, fields)
		report = r
		return plan, err
	}
	if p.DryRun {
		current, err := store.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: p.ProjectID, Now: p.Now})
		if err != nil {
			return nil, fmt.Errorf("list the project's monitors: %w", err)
		}
		if _, err := run(current, nil); err != nil {
			return nil, err
		}
	} else {
		// One transaction for every monitor. Source "" locks the monitors
		// people made (the import's own) and, by slug, any other it may
		// touch.
		err := store.MonitorSync(ctx, &monitors.MonitorSyncParams{ProjectID: p.ProjectID, Source: "", Slugs: slugs,
			Fn: func(current []*monitors.Monitor, fields map[string][]string) (*monitors.MonitorSyncPlan, error) {
				plan, err := run(current, fields)
				if err == nil && len(plan.Insert) == 0 && len(plan.Update) == 0 {
					return nil, nil
				}
				return plan, err
			}})
		if err != nil {
			return nil, fmt.Errorf("write the monitors: %w", err)
		}
	}
	report.Integrations, report.DryRun = integrations, p.DryRun
	if p.IntegrationsErr != nil {
		report.IntegrationsNote = fmt.Sprintf("integrations not read (%v): no channels were mapped, and the channels of monitors already imported were left alone", p.IntegrationsErr)
	}
	return report, nil
}

// mapIntegrations maps each integration to the Vigil channel of its kind
// and name, and says why the others were not.
func mapIntegrations(ins []Integration, channels []*monitors.Channel) ([]IntegrationItem, map[string]string) {
	var items []IntegrationItem
	mapped := map[string]string{}
	for _, in := range ins {
		item := IntegrationItem{ID: in.ID, Name: in.Name, Kind: in.Kind}
		kind, ok := VigilKind(in.Kind)
		if ok {
			if _, err := kinds.Lookup(kind); err != nil {
				ok = false
			}
		}
		switch {
		case !ok:
			item.Reason = fmt.Sprintf("Vigil has no %s channels", in.Kind)
		case in.Name == "":
			item.Reason = fmt.Sprintf("it has no name, and Healthchecks' API gives no integration's settings: create a %s channel in Vigil, "+
				"give the integration its name in Healthchecks, and run the import again", kind)
		default:
			for _, ch := range channels {
				if ch.Kind == kind && ch.Name == in.Name {
					item.ChannelID, item.ChannelName = ch.ID, ch.Name
					break
				}
			}
			if item.ChannelID == "" {
				item.Reason = fmt.Sprintf("Healthchecks' API gives no integration's settings (its URL, token or address): "+
					"create a %s channel named %q in Vigil, then run the import again to give it to its checks", kind, in.Name)
			}
		}
		if item.ChannelID != "" {
			mapped[in.ID] = item.ChannelID
		}
		items = append(items, item)
	}
	return items, mapped
}

// wantSlug is the slug of a check's monitor: its own, else one made from
// its name, else its UUID.
func wantSlug(c Check, uuid string) string {
	if c.Slug != "" {
		return c.Slug
	}
	if s := monitors.Slugify(c.Name); s != "" {
		return s
	}
	return uuid
}

// AltSlug is the slug of a check whose slug another monitor of the
// project has: Healthchecks allows two checks one slug, Vigil does not, so
// the second gets the start of its UUID appended.
func AltSlug(slug, uuid string) string {
	return strings.TrimRight(slug[:min(len(slug), 90)], "-") + "-" + uuid[:8]
}

// planner turns checks into the writes of one sync.
type planner struct {
	p              *ImportParams
	mapped         map[string]string // integration ID → channel ID
	noIntegrations bool
	elsewhere      map[string]string // ping key → the other project
}

// settings sets on m what the check says of it, and returns what was not
// kept. It reads nothing: it may run in the store's transaction.
func (pl *planner) settings(m *monitors.Monitor, c Check, uuid string) []string {
	var notes []string
	m.Name = strings.TrimSpace(c.Name)
	if m.Name == "" {
		m.Name = wantSlug(c, uuid)
	}
	m.Tags = Tags(c.Tags)
	m.Description = c.Desc
	switch {
	case c.Schedule != "":
		m.Schedule = ScheduleUpdate(m.Schedule, c.Schedule, c.TZ)
	case c.Timeout != nil:
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: *c.Timeout}
	}
	if c.Grace > 0 {
		m.GraceSeconds = c.Grace
	}
	if !pl.noIntegrations {
		chs := []string{}
		if c.Channels != nil {
			for _, id := range strings.Split(*c.Channels, ",") {
				id = strings.TrimSpace(id)
				if id == "" {
					continue
				}
				if ch, ok := pl.mapped[id]; ok {
					if !slices.Contains(chs, ch) {
						chs = append(chs, ch)
					}
				} else {
					notes = append(notes, fmt.Sprintf("integration %s not mapped (see the integrations below)", id))
				}
			}
		}
		m.Channels = chs
	}
	if c.Methods == "POST" {
		notes = append(notes, "methods POST not kept: Vigil takes pings by HEAD, GET and POST")
	}
	if !c.ManualResume {
		notes = append(notes, "manual_resume false not kept: a ping does not resume a paused monitor in Vigil; resume it on the dashboard or with the API")
	}
	if c.StartKW != "" || c.SuccessKW != "" || c.FailureKW != "" || c.FilterHTTP {
		notes = append(notes, "keyword filters not kept: Vigil does not classify pings by keywords")
	}
	if c.Subject != "" || c.SubjectFail != "" || c.FilterSubj || c.FilterBody {
		notes = append(notes, "email settings not kept: Vigil takes no pings by email")
	}
	return notes
}

// plan returns what to write for the checks, given the locked monitors,
// and the report of it.
func (pl *planner) plan(current []*monitors.Monitor, fields map[string][]string) (*monitors.MonitorSyncPlan, *Report, error) {
	p := pl.p
	r := &Report{}
	out := &monitors.MonitorSyncPlan{}
	byKey := map[string]*monitors.Monitor{}
	taken := map[string]string{} // slug → ping key
	for _, m := range current {
		if m.ProjectID != p.ProjectID {
			continue
		}
		byKey[m.PingKey] = m
		taken[m.Slug] = m.PingKey
	}
	seen := map[string]bool{}
	for _, c := range p.Checks {
		uuid := strings.ToLower(strings.TrimSpace(c.UUID))
		item := Item{UUID: uuid, Name: c.Name, Slug: c.Slug}
		skip := func(format string, args ...any) {
			item.Reason = fmt.Sprintf(format, args...)
			r.Skipped = append(r.Skipped, item)
		}
		switch {
		case !keys.IsPingKey(uuid):
			skip("its uuid %q is not a UUID", c.UUID)
			continue
		case seen[uuid]:
			skip("Healthchecks listed its UUID twice")
			continue
		case pl.elsewhere[uuid] != "":
			skip("its UUID is the ping key of a monitor of another Vigil project (%s)", pl.elsewhere[uuid])
			continue
		}
		seen[uuid] = true
		paused := c.Status == "paused"

		if old, ok := byKey[uuid]; ok {
			m := *old
			m.Tags, m.Channels = slices.Clone(old.Tags), slices.Clone(old.Channels)
			slug := wantSlug(c, uuid)
			change := &manage.MonitorChange{ProjectID: p.ProjectID, ID: m.ID,
				Apply: func(m *monitors.Monitor) ([]string, error) {
					item.Notes = pl.settings(m, c, uuid)
					if owner, ok := taken[slug]; !ok || owner == uuid {
						m.Slug = slug
					}
					return nil, nil
				}}
			if paused != old.Paused {
				change.Paused = &paused
			}
			tr, _, err := manage.ChangeFunc(change, p.Now)(&m, fields[m.ID])
			if err != nil {
				var ve *monitors.ValidationError
				if errors.As(err, &ve) {
					skip("Vigil cannot take it: %v", err)
					continue
				}
				return nil, nil, err
			}
			item.Slug = m.Slug
			item.Fields = manage.ChangedFields(old, &m)
			if m.Slug != old.Slug {
				item.Fields = append([]string{"slug"}, item.Fields...)
			}
			if m.Paused != old.Paused {
				item.Fields = append(item.Fields, "paused")
			}
			if len(item.Fields) == 0 {
				r.Unchanged = append(r.Unchanged, item)
				continue
			}
			delete(taken, old.Slug)
			taken[m.Slug] = uuid
			out.Update = append(out.Update, monitors.MonitorSyncUpdate{Monitor: &m, Transition: tr})
			r.Changed = append(r.Changed, item)
			continue
		}

		m := &monitors.Monitor{ID: keys.NewID(), ProjectID: p.ProjectID, PingKey: uuid,
			CreatedAt: p.Now, UpdatedAt: p.Now, Paused: paused}
		item.Notes = pl.settings(m, c, uuid)
		m.Slug = wantSlug(c, uuid)
		if _, ok := taken[m.Slug]; ok {
			alt := AltSlug(m.Slug, uuid)
			if _, ok := taken[alt]; ok {
				skip("its slug %q, and %q, are used by other monitors of the project", m.Slug, alt)
				continue
			}
			item.Notes = append(item.Notes, fmt.Sprintf("slug %q is another monitor's: this one is %q", m.Slug, alt))
			m.Slug = alt
		}
		m.ApplyDefaults()
		if err := m.Validate(); err != nil {
			skip("Vigil cannot take it: %v", err)
			continue
		}
		item.Slug = m.Slug
		taken[m.Slug] = uuid
		out.Insert = append(out.Insert, m)
		r.Made = append(r.Made, item)
	}
	return out, r, nil
}
