// Package pagerduty sends Vigil notifications to PagerDuty's Events API v2:
// a trigger event when an incident opens (and on updates and reminders), a
// resolve event when it resolves, both with dedup_key = the incident id, so
// that a retried delivery never pages twice.
package pagerduty

import (
	"context"
	"errors"
	"fmt"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "pagerduty"

// apiURLDefault is the Events API; the path is /v2/enqueue.
const apiURLDefault = "https://events.pagerduty.com"

// Severities of a trigger event.
const (
	SeverityCritical = "critical"
	SeverityError    = "error"
	SeverityWarning  = "warning"
	SeverityInfo     = "info"
)

// Config is a PagerDuty channel's configuration (PROTOCOL §2).
type Config struct {
	// RoutingKey is the Integration Key of an Events API v2 integration.
	RoutingKey string `json:"routing_key"`
	// Severity of trigger events: critical (the default), error, warning or
	// info.
	Severity string `json:"severity,omitempty"`
}

// Validate checks c, naming each key at fault.
func (c *Config) Validate() error {
	var errs []error
	if err := notifiers.ValidateSecret("routing_key", c.RoutingKey); err != nil {
		errs = append(errs, err)
	}
	switch c.Severity {
	case "", SeverityCritical, SeverityError, SeverityWarning, SeverityInfo:
	default:
		errs = append(errs, fmt.Errorf("severity: %q is not one of critical, error, warning, info", c.Severity))
	}
	return errors.Join(errs...)
}

// Notifier sends events to one PagerDuty integration.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] replaces
// https://events.pagerduty.com.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("pagerduty config: %w", err)
	}
	if cfg.Severity == "" {
		cfg.Severity = SeverityCritical
	}
	return &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}, nil
}

// Event is an Events API v2 request body.
type Event struct {
	RoutingKey  string   `json:"routing_key"`
	EventAction string   `json:"event_action"`
	DedupKey    string   `json:"dedup_key"`
	Payload     *Payload `json:"payload,omitempty"`
	Client      string   `json:"client,omitempty"`
	ClientURL   string   `json:"client_url,omitempty"`
	Links       []Link   `json:"links,omitempty"`
}

// Payload is the "payload" of a trigger event.
type Payload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// Link is one of an event's "links".
type Link struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// NewEvent builds the event for n. The routing key is left empty.
func (p *Notifier) NewEvent(n *notifiers.Notification) Event {
	e := Event{EventAction: "trigger", DedupKey: notifiers.Truncate(n.DedupKey(), 255)}
	if n.Event == notifiers.EventResolved {
		e.EventAction = "resolve"
		return e
	}
	severity := p.cfg.Severity
	if n.Event == notifiers.EventTest {
		severity = SeverityInfo
	}
	summary := n.Incident.Summary
	if summary == "" || n.Event == notifiers.EventTest {
		summary = n.Headline()
	}
	source := n.Monitor.Slug
	if source == "" {
		source = n.MonitorName()
	}
	details := map[string]any{
		"event":   string(n.Event),
		"monitor": n.MonitorName(),
		"status":  n.Monitor.Status,
	}
	if n.Incident.Details != "" {
		details["details"] = n.Incident.Details
	}
	for _, f := range n.Facts() {
		details[f.Label] = f.Value
	}
	// custom_details is JSON: the output goes as it is, bounded so that
	// the event stays far below PagerDuty's 512 KB.
	if out, cut := n.OutputFor(outputLines, outputChars, nil); out != "" {
		details["output"] = out
		details["output_cut"] = cut
	}
	if link := n.RunURL(); link != "" {
		details["run_url"] = link
	}
	e.Payload = &Payload{
		Summary:       notifiers.Truncate(summary, 1024),
		Source:        notifiers.Truncate(source, 255),
		Severity:      severity,
		Component:     n.MonitorName(),
		Class:         string(n.Incident.Kind),
		CustomDetails: details,
	}
	if !n.Incident.OpenedAt.IsZero() {
		e.Payload.Timestamp = n.Incident.OpenedAt.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	if len(n.Monitor.Tags) > 0 {
		e.Payload.Group = n.Monitor.Tags[0]
	}
	e.Client = "Vigil"
	e.ClientURL = n.BaseURL
	if link := n.Link(); link != "" {
		e.Links = []Link{{Href: link, Text: "Open " + n.MonitorName() + " in Vigil"}}
	}
	if link := n.RunURL(); link != "" {
		e.Links = append(e.Links, Link{Href: link, Text: "The run in Vigil"})
	}
	if link := n.SnoozeURL; link != "" {
		e.Links = append(e.Links, Link{Href: link, Text: notifiers.SnoozeLinkText + " in Vigil (no sign-in)"})
	}
	return e
}

// Notify sends one event. PagerDuty answers 202 when it accepted it.
func (p *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	// A monitor event is news, not an alert, and this channel pages:
	// delivery routes none here (plan.Route), and one that came anyway
	// fails for good rather than page anyone.
	if n.Event.IsMonitorEvent() {
		return notifiers.Permanent(fmt.Errorf("%s is not sent to PagerDuty, which pages: it is news about a monitor, not an alert", n.Event))
	}
	// Each incident is its own alert here, so that its resolve closes it:
	// a channel that pages has no grouping (monitors.Channel.Validate).
	if n.Event == notifiers.EventGrouped {
		return notifiers.Permanent(fmt.Errorf("%s is not sent to PagerDuty, which pages: each incident is its own alert there", n.Event))
	}
	if n.Event.IsReport() {
		return notifiers.Permanent(fmt.Errorf("%s is not sent to PagerDuty, which pages: a report is a summary, not an alert", n.Event))
	}
	ctx, cancel := notifiers.AttemptContext(ctx, p.opts.Timeout)
	defer cancel()
	event := p.NewEvent(n)
	event.RoutingKey = p.cfg.RoutingKey
	req, err := notifiers.NewJSONRequest(ctx, p.opts.APIBase(apiURLDefault)+"/v2/enqueue", event)
	if err != nil {
		return notifiers.RedactError(err, p.cfg.RoutingKey)
	}
	if err := notifiers.SendHTTP(p.opts.HTTPClient, req, p.cfg.RoutingKey); err != nil {
		return fmt.Errorf("send pagerduty %s event: %w", event.EventAction, err)
	}
	p.opts.LogSent(Kind, n)
	return nil
}

// Bounds of the output an event carries: the last lines of a failing
// run's output.
const (
	outputLines = 50
	outputChars = 4000
)
