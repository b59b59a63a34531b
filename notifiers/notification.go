package notifiers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A Notifier delivers one notification in one attempt. Retrying is the
// caller's business: see the package documentation for how errors are
// classified.
type Notifier interface {
	Notify(ctx context.Context, n *Notification) error
}

// Event says why a notification is sent. The values are part of Vigil's
// public contract (the webhook payload's "event" field).
type Event string

// The events of an incident's life, and the test notification sent from the
// API.
const (
	EventOpened   Event = "incident.opened"
	EventResolved Event = "incident.resolved"
	EventUpdated  Event = "incident.updated"
	EventReminder Event = "incident.reminder"
	EventTest     Event = "test"
)

// Valid reports whether e is one of the known events.
func (e Event) Valid() bool {
	switch e {
	case EventOpened, EventResolved, EventUpdated, EventReminder, EventTest:
		return true
	}
	return false
}

// IncidentKind is why an incident was opened.
type IncidentKind string

// Incident kinds, as in PROTOCOL §3.
const (
	IncidentMissed   IncidentKind = "missed"
	IncidentFailed   IncidentKind = "failed"
	IncidentStuck    IncidentKind = "stuck"
	IncidentDeadline IncidentKind = "deadline"
	IncidentOverlap  IncidentKind = "overlap"
)

// Valid reports whether k is one of the known incident kinds.
func (k IncidentKind) Valid() bool {
	switch k {
	case IncidentMissed, IncidentFailed, IncidentStuck, IncidentDeadline, IncidentOverlap:
		return true
	}
	return false
}

// Notification is everything a channel needs to tell someone about an
// incident. It is plain data, built by the delivery layer from the store, so
// that every kind renders the same facts.
type Notification struct {
	// Event is why this notification is sent.
	Event Event
	// Incident is the incident it is about. For EventTest it may be empty.
	Incident Incident
	// Monitor is the monitor the incident belongs to.
	Monitor Monitor
	// SentAt is the time of this attempt. It stamps the webhook signature
	// and the message dates, and is "now" for anything that is measured up
	// to the present (how long an incident has been open at a reminder).
	SentAt time.Time
	// BaseURL is the public URL of this Vigil (VIGIL_BASE_URL), used for
	// links when Monitor.URL is empty.
	BaseURL string
	// DeliveryID names this notification to this channel, the same for
	// every attempt at it, so that a receiver can drop a duplicate (the
	// webhook's Vigil-Delivery-Id header). It is empty when unknown.
	DeliveryID string
}

// Incident is the part of a notification that describes the incident.
type Incident struct {
	ID         string
	Kind       IncidentKind
	OpenedAt   time.Time
	ResolvedAt *time.Time
	// Summary is one line saying what happened, for example
	// "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)".
	Summary string
	// Details is optional longer text: when the run was expected, what was
	// last seen, the output of a failed run.
	Details string
}

// Monitor is the part of a notification that describes the monitor.
type Monitor struct {
	ID     string
	Name   string
	Slug   string
	Status string
	Tags   []string
	// URL is the monitor's page on the dashboard.
	URL string
	// Schedule is human readable, for example "0 2 * * * (Europe/Berlin)".
	Schedule       string
	LastPingAt     *time.Time
	NextExpectedAt *time.Time
}

// DedupKey is the key that lets a receiver recognise notifications about the
// same incident (PagerDuty's dedup_key, Opsgenie's alias, the e-mail thread):
// the incident id. A test notification without an incident gets a key made
// from its monitor and time, so that a retried test is still one alert.
func (n *Notification) DedupKey() string {
	if n.Incident.ID != "" {
		return n.Incident.ID
	}
	return "vigil-test-" + n.Monitor.ID + "-" + strconv.FormatInt(n.SentAt.UnixNano(), 36)
}

// Downtime is how long the incident lasted: ResolvedAt minus OpenedAt, or
// zero while it is still open.
func (n *Notification) Downtime() time.Duration {
	if n.Incident.ResolvedAt == nil {
		return 0
	}
	return max(n.Incident.ResolvedAt.Sub(n.Incident.OpenedAt), 0)
}

// OpenFor is how long the incident has been open: its downtime once
// resolved, otherwise SentAt minus OpenedAt.
func (n *Notification) OpenFor() time.Duration {
	if n.Incident.ResolvedAt != nil {
		return n.Downtime()
	}
	if n.Incident.OpenedAt.IsZero() || n.SentAt.IsZero() {
		return 0
	}
	return max(n.SentAt.Sub(n.Incident.OpenedAt), 0)
}

// IsResolved reports whether the notification announces a recovery.
func (n *Notification) IsResolved() bool { return n.Event == EventResolved }

// MonitorName is the monitor's name, or its slug, or its id, whichever is
// set first.
func (n *Notification) MonitorName() string {
	switch {
	case n.Monitor.Name != "":
		return n.Monitor.Name
	case n.Monitor.Slug != "":
		return n.Monitor.Slug
	case n.Monitor.ID != "":
		return n.Monitor.ID
	}
	return "monitor"
}

// Link is the page to send a reader to: the monitor's dashboard URL, or the
// base URL of this Vigil when the monitor has none.
func (n *Notification) Link() string {
	if n.Monitor.URL != "" {
		return n.Monitor.URL
	}
	return n.BaseURL
}

// Headline is the one-line title every kind uses, for example
// "DOWN nightly-import: missed" or "UP nightly-import: recovered after 12m".
func (n *Notification) Headline() string {
	name := n.MonitorName()
	switch n.Event {
	case EventResolved:
		if d := n.Downtime(); d > 0 {
			return fmt.Sprintf("UP %s: recovered after %s", name, FormatDuration(d))
		}
		return fmt.Sprintf("UP %s: recovered", name)
	case EventReminder:
		if d := n.OpenFor(); d > 0 {
			return fmt.Sprintf("STILL DOWN %s: %s for %s", name, n.Incident.Kind, FormatDuration(d))
		}
		return fmt.Sprintf("STILL DOWN %s: %s", name, n.Incident.Kind)
	case EventUpdated:
		return fmt.Sprintf("DOWN %s: %s (update)", name, n.Incident.Kind)
	case EventTest:
		return fmt.Sprintf("TEST %s: test notification from Vigil", name)
	}
	return fmt.Sprintf("DOWN %s: %s", name, n.Incident.Kind)
}

// Summary is the incident's summary, or a sentence made from the event when
// the incident has none.
func (n *Notification) Summary() string {
	if n.Incident.Summary != "" {
		return n.Incident.Summary
	}
	switch n.Event {
	case EventTest:
		return "This is a test notification from Vigil. If you can read it, the channel works."
	case EventResolved:
		return n.MonitorName() + " is up again."
	}
	return fmt.Sprintf("%s: incident (%s).", n.MonitorName(), n.Incident.Kind)
}

// Fact is one labelled line of a message ("Last ping", "3 Jan 02:05 UTC").
type Fact struct {
	Label string
	Value string
}

// Facts lists the details every kind shows under the summary, in order:
// the schedule, when a run was expected, when the monitor was last seen,
// when the incident opened, and on recovery how long it lasted. Empty
// values are left out.
func (n *Notification) Facts() []Fact {
	var facts []Fact
	add := func(label, value string) {
		if value != "" {
			facts = append(facts, Fact{Label: label, Value: value})
		}
	}
	add("Schedule", n.Monitor.Schedule)
	if n.Event != EventResolved {
		add("Expected", formatOptionalTime(n.Monitor.NextExpectedAt))
	}
	if n.Event != EventTest {
		last := "never"
		if n.Monitor.LastPingAt != nil {
			last = FormatTime(*n.Monitor.LastPingAt)
		}
		add("Last ping", last)
	}
	if !n.Incident.OpenedAt.IsZero() {
		add("Opened", FormatTime(n.Incident.OpenedAt))
	}
	if n.Event == EventResolved {
		add("Resolved", formatOptionalTime(n.Incident.ResolvedAt))
		if d := n.Downtime(); d > 0 {
			add("Downtime", FormatDuration(d))
		}
	}
	if len(n.Monitor.Tags) > 0 {
		add("Tags", strings.Join(n.Monitor.Tags, ", "))
	}
	return facts
}

// Validate reports a notification that no channel could render correctly.
// Kinds call it first and return its error as permanent.
func (n *Notification) Validate() error {
	var errs []error
	if !n.Event.Valid() {
		errs = append(errs, fmt.Errorf("event %q is not one of incident.opened, incident.resolved, incident.updated, incident.reminder, test", n.Event))
	}
	if n.Event != EventTest {
		if n.Incident.ID == "" {
			errs = append(errs, errors.New("incident id is empty"))
		}
		if !n.Incident.Kind.Valid() {
			errs = append(errs, fmt.Errorf("incident kind %q is not one of missed, failed, stuck, deadline, overlap", n.Incident.Kind))
		}
		if n.Incident.OpenedAt.IsZero() {
			errs = append(errs, errors.New("incident opened_at is zero"))
		}
	}
	if n.Event == EventResolved && n.Incident.ResolvedAt == nil {
		errs = append(errs, errors.New("resolved notification has no resolved_at"))
	}
	if n.SentAt.IsZero() {
		errs = append(errs, errors.New("sent_at is zero"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid notification: %w", err)
	}
	return nil
}

// FormatTime renders t for people, in UTC: "2026-01-03 02:05 UTC".
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 MST")
}

func formatOptionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return FormatTime(*t)
}

// FormatDuration renders d for people, to the two largest units:
// "45s", "12m", "1h 5m", "3d 2h".
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	d = d.Round(time.Minute)
	days := d / (24 * time.Hour)
	hours := (d % (24 * time.Hour)) / time.Hour
	minutes := (d % time.Hour) / time.Minute
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%dd %dh", days, hours)
	case days > 0:
		return fmt.Sprintf("%dd", days)
	case hours > 0 && minutes > 0:
		return fmt.Sprintf("%dh %dm", hours, minutes)
	case hours > 0:
		return fmt.Sprintf("%dh", hours)
	}
	return fmt.Sprintf("%dm", minutes)
}
