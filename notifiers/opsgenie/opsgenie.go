// Package opsgenie sends Vigil notifications to Opsgenie's Alert API: an
// alert created with alias = the incident id when an incident opens (again
// on updates and reminders, which Opsgenie de-duplicates by alias), and
// closed by alias when it resolves.
package opsgenie

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "opsgenie"

// API base URLs by region.
const (
	APIURLUS = "https://api.opsgenie.com"
	APIURLEU = "https://api.eu.opsgenie.com"
)

// Config is an Opsgenie channel's configuration (PROTOCOL §2).
type Config struct {
	// APIKey is the key of an API integration (not an account key).
	APIKey string `json:"api_key"`
	// Region is "us" (the default) or "eu".
	Region string `json:"region,omitempty"`
}

// Validate checks c, naming each key at fault.
func (c *Config) Validate() error {
	var errs []error
	if err := notifiers.ValidateSecret("api_key", c.APIKey); err != nil {
		errs = append(errs, err)
	}
	switch c.Region {
	case "", "us", "eu":
	default:
		errs = append(errs, fmt.Errorf("region: %q is not one of us, eu", c.Region))
	}
	return errors.Join(errs...)
}

// Notifier sends alerts through one Opsgenie integration.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] replaces the
// region's API URL.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("opsgenie config: %w", err)
	}
	return &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}, nil
}

// CreateAlert is the body of POST /v2/alerts.
type CreateAlert struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Source      string            `json:"source"`
	Priority    string            `json:"priority,omitempty"`
	Note        string            `json:"note,omitempty"`
}

// CloseAlert is the body of POST /v2/alerts/{alias}/close.
type CloseAlert struct {
	Source string `json:"source"`
	Note   string `json:"note,omitempty"`
}

// NewCreateAlert builds the alert for n. Priority is left to the
// integration's rules, except that a test is P5.
func NewCreateAlert(n *notifiers.Notification) CreateAlert {
	var desc strings.Builder
	desc.WriteString(n.Summary())
	if n.Incident.Details != "" {
		desc.WriteString("\n\n" + n.Incident.Details)
	}
	desc.WriteString("\n")
	for _, f := range n.Facts() {
		desc.WriteString("\n" + f.Label + ": " + f.Value)
	}
	out, cut := n.OutputFor(outputLines, outputChars, nil)
	if out != "" {
		label := "Output:"
		if cut {
			label = "Output (last lines):"
		}
		desc.WriteString("\n\n" + label + "\n" + out)
	}
	if link := n.Link(); link != "" {
		desc.WriteString("\n\n" + link)
	}
	if link := n.RunURL(); link != "" {
		desc.WriteString("\nThe run: " + link)
	}
	if link := n.SnoozeURL; link != "" {
		desc.WriteString("\n" + notifiers.SnoozeLinkText + ": " + link)
	}
	details := map[string]string{"event": string(n.Event), "monitor": n.MonitorName()}
	if n.Incident.Kind != "" {
		details["incident_kind"] = string(n.Incident.Kind)
	}
	if link := n.Link(); link != "" {
		details["url"] = link
	}
	if n.Monitor.Schedule != "" {
		details["schedule"] = n.Monitor.Schedule
	}
	for _, f := range n.Facts() {
		switch f.Label {
		case "Exit status", "Attempt", "Duration", "Expected", "Last ping":
			details[strings.ToLower(strings.ReplaceAll(f.Label, " ", "_"))] = f.Value
		}
	}
	if link := n.RunURL(); link != "" {
		details["run_url"] = link
	}
	if link := n.SnoozeURL; link != "" {
		details["snooze_url"] = link
	}
	if out != "" {
		// Opsgenie bounds the details as a whole: a shorter tail there,
		// the longer one in the description.
		details["output"], _ = n.OutputFor(10, 1000, nil)
	}
	tags := []string{"vigil"}
	for _, t := range n.Monitor.Tags {
		if len(tags) == 20 {
			break
		}
		tags = append(tags, notifiers.Truncate(t, 50))
	}
	a := CreateAlert{
		Message:     notifiers.Truncate(n.Headline(), 130),
		Alias:       notifiers.Truncate(n.DedupKey(), 512),
		Description: notifiers.Truncate(desc.String(), 15000),
		Tags:        tags,
		Details:     details,
		Entity:      notifiers.Truncate(n.MonitorName(), 512),
		Source:      "Vigil",
	}
	if n.Event == notifiers.EventTest {
		a.Priority = "P5"
	}
	if n.Event == notifiers.EventUpdated || n.Event == notifiers.EventReminder {
		a.Note = notifiers.Truncate(n.Headline(), 25000)
	}
	return a
}

// Notify creates or closes the incident's alert. Opsgenie answers 202
// Accepted and processes the request asynchronously.
func (o *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	// A monitor event is news, not an alert, and this channel pages:
	// delivery routes none here (plan.Route), and one that came anyway
	// fails for good rather than page anyone.
	if n.Event.IsMonitorEvent() {
		return notifiers.Permanent(fmt.Errorf("%s is not sent to Opsgenie, which pages: it is news about a monitor, not an alert", n.Event))
	}
	// Each incident is its own alert here, so that its resolve closes it:
	// a channel that pages has no grouping (monitors.Channel.Validate).
	if n.Event == notifiers.EventGrouped {
		return notifiers.Permanent(fmt.Errorf("%s is not sent to Opsgenie, which pages: each incident is its own alert there", n.Event))
	}
	if n.Event.IsReport() {
		return notifiers.Permanent(fmt.Errorf("%s is not sent to Opsgenie, which pages: a report is a summary, not an alert", n.Event))
	}
	ctx, cancel := notifiers.AttemptContext(ctx, o.opts.Timeout)
	defer cancel()

	base := o.baseURL()

	target, body, action := base+"/v2/alerts", any(NewCreateAlert(n)), "create"
	if n.Event == notifiers.EventResolved {
		action = "close"
		target = base + "/v2/alerts/" + url.PathEscape(n.DedupKey()) + "/close?identifierType=alias"
		note := n.Headline()
		body = CloseAlert{Source: "Vigil", Note: note}
	}
	req, err := notifiers.NewJSONRequest(ctx, target, body)
	if err != nil {
		return notifiers.RedactError(err, o.cfg.APIKey)
	}
	req.Header.Set("Authorization", "GenieKey "+o.cfg.APIKey)
	if err := notifiers.SendHTTP(o.opts.HTTPClient, req, o.cfg.APIKey); err != nil {
		return fmt.Errorf("%s opsgenie alert: %w", action, err)
	}
	o.opts.LogSent(Kind, n)
	return nil
}

// baseURL is the region's API, unless the options replace it.
func (o *Notifier) baseURL() string {
	if o.cfg.Region == "eu" {
		return o.opts.APIBase(APIURLEU)
	}
	return o.opts.APIBase(APIURLUS)
}

// Bounds of the output an alert's description carries: the last lines of
// a failing run's output.
const (
	outputLines = 50
	outputChars = 4000
)
