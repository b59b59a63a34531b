package plan

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/vigilhq/vigil/monitors"
)

// deliver creates the deliveries of events in tx, which hands them to its
// enqueue hook. Every script that records incident events calls it in the
// same transaction. written are monitors the transaction has written (nil
// for none): routing takes their channels as written instead of reading
// them again.
func (s *Scripts) deliver(ctx context.Context, tx Tx, events []*monitors.IncidentEvent, written []*monitors.Monitor) error {
	if len(events) == 0 {
		return nil
	}
	known := make(map[string]MonitorTarget, len(written))
	for _, m := range written {
		known[m.ID] = MonitorTarget{ProjectID: m.ProjectID, Channels: m.Channels}
	}
	var monitorIDs, projectIDs, reminded []string
	seen := make(map[string]bool)
	for _, e := range events {
		if _, ok := known[e.MonitorID]; !ok && !seen[e.MonitorID] {
			seen[e.MonitorID] = true
			monitorIDs = append(monitorIDs, e.MonitorID)
		}
		if !slices.Contains(projectIDs, e.ProjectID) {
			projectIDs = append(projectIDs, e.ProjectID)
		}
		if e.Kind == monitors.EventReminder {
			reminded = append(reminded, e.IncidentID)
		}
	}
	t, err := tx.DeliveryTargets(ctx, monitorIDs, projectIDs, reminded)
	if err != nil {
		return fmt.Errorf("create deliveries: %w", err)
	}
	for _, e := range events {
		if mt, ok := known[e.MonitorID]; ok {
			t.Monitors[e.MonitorID] = mt
		}
	}
	if err := s.readGroups(ctx, tx, events, t); err != nil {
		return fmt.Errorf("create deliveries: %w", err)
	}
	ds := Route(events, t)
	if len(ds) == 0 {
		return nil
	}
	if _, err := tx.DeliveryInsert(ctx, ds); err != nil {
		return fmt.Errorf("create deliveries: %w", err)
	}
	return nil
}

// readGroups reads, when events open incidents, the pending groups of
// the channels of their projects that gather incidents, under GroupLock.
func (s *Scripts) readGroups(ctx context.Context, tx Tx, events []*monitors.IncidentEvent, t *Targets) error {
	var ids []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.Kind != monitors.EventOpened || seen[e.ProjectID] {
			continue
		}
		seen[e.ProjectID] = true
		for _, c := range t.Channels[e.ProjectID] {
			if c.GroupSeconds > 0 {
				ids = append(ids, c.ID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	if err := tx.GroupLock(ctx, ids); err != nil {
		return fmt.Errorf("lock the groups of channels: %w", err)
	}
	type row struct {
		channel string
		at      time.Time
	}
	rows, err := All(ctx, tx, func(r Row) (g row, err error) { return g, r.Scan(&g.channel, &g.at) }, s.Q.DeliveryGroupsOpen, ids)
	if err != nil {
		return fmt.Errorf("read the groups of channels: %w", err)
	}
	t.Groups = make(map[string]time.Time, len(rows))
	for _, r := range rows {
		t.Groups[r.channel] = r.at
	}
	return nil
}

// Route returns the deliveries of events, ordered by event and channel
// (delivery routing): one per channel the event's monitor names, or per
// default channel of its project when it names none. A reminder skips a
// channel that still has a delivery of the incident pending, so reminders
// do not pile up behind a receiver that is down. A channel that does not
// exist (any more) gets nothing. A monitor event (monitor.undeclared, ...)
// is news, not an alert: channels that page someone get none of them, and
// monitor.late goes only to channels with notify_late.
//
// An incident.opened to a channel with group_seconds joins the channel's
// pending group when that goes out after the event (t.Groups), or begins
// one that goes out group_seconds after it: so the first incident of a
// group waits group_seconds, and the others less.
func Route(events []*monitors.IncidentEvent, t *Targets) []*monitors.Delivery {
	var out []*monitors.Delivery
	groups := maps.Clone(t.Groups)
	if groups == nil {
		groups = map[string]time.Time{}
	}
	for _, e := range events {
		mt, ok := t.Monitors[e.MonitorID]
		if !ok {
			continue
		}
		var chans []string
		gather := map[string]int{}
		for _, c := range t.Channels[e.ProjectID] {
			if e.Kind.IsMonitorEvent() && Pages(c.Kind) {
				continue
			}
			if e.Kind == monitors.EventMonitorLate && !c.NotifyLate {
				continue
			}
			if c.GroupSeconds > 0 && !Pages(c.Kind) {
				gather[c.ID] = c.GroupSeconds
			}
			if len(mt.Channels) == 0 && c.IsDefault || len(mt.Channels) > 0 && slices.Contains(mt.Channels, c.ID) {
				chans = append(chans, c.ID)
			}
		}
		slices.Sort(chans)
		for _, c := range chans {
			if e.Kind == monitors.EventReminder && t.Pending[e.IncidentID][c] {
				continue
			}
			next := e.At
			d := &monitors.Delivery{ProjectID: e.ProjectID, IncidentID: e.IncidentID,
				MonitorID: e.MonitorID, ChannelID: c, EventID: e.ID, Event: e.Kind, EventAt: e.At,
				Summary: e.Summary, State: monitors.DeliveryPending, CreatedAt: e.At, NextAttemptAt: &next}
			if secs := gather[c]; secs > 0 && e.Kind == monitors.EventOpened {
				at, ok := groups[c]
				if !ok || !e.At.Before(at) {
					at = e.At.Add(time.Duration(secs) * time.Second).UTC().Truncate(time.Microsecond)
					groups[c] = at
				}
				d.GroupAt = &at
			}
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b *monitors.Delivery) int {
		return cmp.Or(cmp.Compare(a.EventID, b.EventID), cmp.Compare(a.ChannelID, b.ChannelID))
	})
	return out
}

// Pages reports whether a channel kind wakes someone up
// ([monitors.ChannelPages]).
func Pages(kind string) bool { return monitors.ChannelPages(kind) }

// IncidentRemind records an incident.reminder event for each open incident
// opened, or last reminded, p.Interval or more before p.Now, with its
// deliveries, in one transaction, and returns the events.
func (s *Scripts) IncidentRemind(ctx context.Context, p *monitors.IncidentRemindParams) ([]*monitors.IncidentEvent, error) {
	if p.Interval <= 0 {
		return nil, errors.New("remind incidents: the interval must be positive")
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	now := p.Now.UTC().Truncate(time.Microsecond)
	var events []*monitors.IncidentEvent
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		var err error
		if events, err = tx.IncidentRemindDue(ctx, now, now.Add(-p.Interval), limit); err != nil {
			return fmt.Errorf("remind incidents: %w", err)
		}
		send, err := s.notFlapping(ctx, tx, events)
		if err != nil {
			return fmt.Errorf("remind incidents: %w", err)
		}
		return s.deliver(ctx, tx, send, nil)
	})
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = []*monitors.IncidentEvent{}
	}
	return events, nil
}

// notFlapping returns the events whose monitor is not flapping: a
// flapping monitor's reminders are recorded, as its incidents are, but not
// sent (its incidents' notifications are held by the state machine).
func (s *Scripts) notFlapping(ctx context.Context, tx Tx, events []*monitors.IncidentEvent) ([]*monitors.IncidentEvent, error) {
	flapping := map[string]bool{}
	out := events[:0:0]
	for _, e := range events {
		f, ok := flapping[e.MonitorID]
		if !ok {
			m, err := One(ctx, tx, ScanMonitorRow, s.Q.MonitorGet, e.ProjectID, e.MonitorID)
			if err != nil {
				return nil, fmt.Errorf("read monitor %s: %w", e.MonitorID, err)
			}
			f = m.State.IsFlapping()
			flapping[e.MonitorID] = f
		}
		if !f {
			out = append(out, e)
		}
	}
	return out, nil
}

// DeliveryAttemptRecord logs one attempt of a pending delivery, numbered
// after the attempts before it, and moves the delivery on, under a lock on
// its row. A delivery that is not pending any more is ErrConflict: a sent
// delivery is never sent again.
func (s *Scripts) DeliveryAttemptRecord(ctx context.Context, p *monitors.DeliveryAttemptRecordParams) (*monitors.DeliveryAttempt, error) {
	state, next, finished, err := AttemptEffect(p)
	if err != nil {
		return nil, err
	}
	var a *monitors.DeliveryAttempt
	err = s.Driver.InTx(ctx, func(tx Tx) error {
		d, err := One(ctx, tx, scanDelivery, s.Q.DeliveryLock, p.ProjectID, p.DeliveryID)
		if err != nil {
			return fmt.Errorf("record attempt of delivery %d: %w", p.DeliveryID, err)
		}
		if d.State != monitors.DeliveryPending {
			return fmt.Errorf("record attempt of delivery %d: it is %s already: %w", p.DeliveryID, d.State, monitors.ErrConflict)
		}
		var status *int
		if p.StatusCode != 0 {
			status = &p.StatusCode
		}
		next := utcPtr(next)
		a, err = One(ctx, tx, scanAttempt, s.Q.AttemptInsert, p.DeliveryID, p.ProjectID, d.IncidentID, d.ChannelID,
			string(d.Event), d.Attempts+1, p.StartedAt.UTC(), p.FinishedAt.UTC(), string(p.Outcome), status,
			AttemptErrorText(p.Error), next)
		if err == nil {
			_, err = tx.Exec(ctx, s.Q.DeliveryUpdate, p.DeliveryID, string(state), d.Attempts+1, next, utcPtr(finished))
		}
		if err != nil {
			return fmt.Errorf("record attempt of delivery %d: %w", p.DeliveryID, err)
		}
		for _, id := range p.Also {
			o, err := One(ctx, tx, scanDelivery, s.Q.DeliveryLock, p.ProjectID, id)
			if errors.Is(err, monitors.ErrNotFound) {
				continue // its incident was deleted meanwhile
			}
			if err != nil {
				return fmt.Errorf("record attempt of delivery %d: %w", id, err)
			}
			if o.State != monitors.DeliveryPending || id == p.DeliveryID {
				continue
			}
			_, err = tx.Exec(ctx, s.Q.AttemptInsert, id, p.ProjectID, o.IncidentID, o.ChannelID,
				string(o.Event), o.Attempts+1, p.StartedAt.UTC(), p.FinishedAt.UTC(), string(p.Outcome), status,
				AttemptErrorText(p.Error), next)
			if err == nil {
				_, err = tx.Exec(ctx, s.Q.DeliveryUpdate, id, string(state), o.Attempts+1, next, utcPtr(finished))
			}
			if err != nil {
				return fmt.Errorf("record attempt of delivery %d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// AttemptEffect checks p and returns the delivery's state, next attempt and
// finish time after the attempt.
func AttemptEffect(p *monitors.DeliveryAttemptRecordParams) (monitors.DeliveryState, *time.Time, *time.Time, error) {
	finished := p.FinishedAt
	switch p.Outcome {
	case monitors.AttemptSuccess:
		return monitors.DeliverySent, nil, &finished, nil
	case monitors.AttemptFailed:
		return monitors.DeliveryFailed, nil, &finished, nil
	case monitors.AttemptRetry:
		if p.NextAttemptAt == nil {
			return "", nil, nil, errors.New("record attempt: a retry needs the time of the next attempt")
		}
		return monitors.DeliveryPending, p.NextAttemptAt, nil, nil
	}
	return "", nil, nil, fmt.Errorf("record attempt: unknown outcome %q", p.Outcome)
}

// AttemptErrorText makes an attempt's error storable and bounded.
func AttemptErrorText(s string) string {
	s = CleanText(s)
	if utf8.RuneCountInString(s) <= monitors.DeliveryErrorMax {
		return s
	}
	return string([]rune(s)[:monitors.DeliveryErrorMax-1]) + "…"
}

// AttachAttempts gives each delivery its attempts, in the order given.
func AttachAttempts(ds []*monitors.Delivery, as []*monitors.DeliveryAttempt) {
	byID := make(map[int64]*monitors.Delivery, len(ds))
	for _, d := range ds {
		d.AttemptLog = []*monitors.DeliveryAttempt{}
		byID[d.ID] = d
	}
	for _, a := range as {
		if d := byID[a.DeliveryID]; d != nil {
			d.AttemptLog = append(d.AttemptLog, a)
		}
	}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// Inserted gathers what a store's insert of routed deliveries returns of
// each row, its ID and its key (event or report, and channel), into the
// deliveries as routed: the rest of a row is what was routed (pending, no
// attempt, created and first due at its event's time), so a store need
// not read it back.
type Inserted struct {
	routed map[insertedKey]*monitors.Delivery
	got    []*monitors.Delivery

	// The row being read.
	id, event       int64
	report, channel string
}

type insertedKey struct {
	event           int64
	report, channel string
}

// NewInserted returns the gatherer of the insert of ds.
func NewInserted(ds []*monitors.Delivery) *Inserted {
	in := &Inserted{routed: make(map[insertedKey]*monitors.Delivery, len(ds)), got: make([]*monitors.Delivery, 0, len(ds))}
	for _, w := range ds {
		in.routed[insertedKey{w.EventID, w.ReportID, w.ChannelID}] = w
	}
	return in
}

// Dest is where a row is scanned: ID, event ID (0 for none), report ID
// ("" for none), channel ID.
func (in *Inserted) Dest() []any { return []any{&in.id, &in.event, &in.report, &in.channel} }

// Row takes the row scanned into Dest.
func (in *Inserted) Row() error {
	w := in.routed[insertedKey{in.event, in.report, in.channel}]
	if w == nil {
		return fmt.Errorf("insert deliveries: delivery %d (event %d, report %q, channel %s) is none of those routed",
			in.id, in.event, in.report, in.channel)
	}
	d := *w
	d.ID = in.id
	in.got = append(in.got, &d)
	return nil
}

// Deliveries returns the deliveries inserted, in the order of their IDs,
// which is the order they were routed in.
func (in *Inserted) Deliveries() []*monitors.Delivery {
	slices.SortFunc(in.got, func(a, b *monitors.Delivery) int { return cmp.Compare(a.ID, b.ID) })
	return in.got
}
