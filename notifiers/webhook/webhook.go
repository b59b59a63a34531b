// Package webhook POSTs Vigil notifications as JSON to a URL of the user's
// choosing, signed with HMAC-SHA256 when the channel has a secret.
//
// # Payload
//
// The default body is PROTOCOL §3's JSON ([Payload]), times in RFC 3339,
// UTC. A channel may set a Go text/template instead; it runs over the
// [notifiers.Notification] with the functions json, rfc3339 and payload
// (see [Config.Template]), restricted so that its cost is bounded (see
// template.go and [TemplateRenderBudget]).
//
// # Signature
//
// With a secret, each request carries
//
//	Vigil-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">
//
// A receiver recomputes the HMAC over the raw body, compares in constant
// time and rejects old timestamps; [Verify] does all three.
//
// # Duplicates
//
// Each request carries Vigil-Delivery-Id, which names the notification to
// this channel and is the same on every attempt at it. An attempt whose
// answer was lost (a timeout, a crash of Vigil mid-send) is made again, so
// a receiver that must act once keeps the IDs it has seen for a day.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "webhook"

// Limits on a channel's configuration.
const (
	SecretMinLength = 16
	HeadersMax      = 20
	TemplateMax     = 64 << 10
	// BodyMax caps a rendered template.
	BodyMax = 256 << 10
)

// SignatureHeader is the header that carries the signature.
const SignatureHeader = "Vigil-Signature"

// DeliveryIDHeader is the header that names the notification, the same on
// every attempt at it, so that a receiver can drop a duplicate.
const DeliveryIDHeader = "Vigil-Delivery-Id"

// Config is a webhook channel's configuration (PROTOCOL §2).
type Config struct {
	// URL receives a POST per notification.
	URL string `json:"url"`
	// Secret, when set, signs every request (Vigil-Signature).
	Secret string `json:"secret,omitempty"`
	// Headers are added to every request, for example an Authorization
	// header the receiver expects. They may replace Content-Type and
	// User-Agent, but not Host, Content-Length, Transfer-Encoding,
	// Connection or Vigil-Signature.
	Headers map[string]string `json:"headers,omitempty"`
	// Template, when set, renders the body with text/template over the
	// Notification, in place of the default JSON. Besides the fields and
	// methods of Notification ({{.Incident.Summary}}, {{.Headline}},
	// {{.DedupKey}}), it may call:
	//   - json: the value as JSON, for safe embedding ({{json .Monitor.Name}})
	//   - rfc3339: a time.Time or *time.Time in UTC, RFC 3339 ("" for nil)
	//   - payload: the default payload as a value ({{json (payload .)}})
	// and the builtins and, or, not, eq, ne, lt, le, gt, ge, len, index,
	// slice, print, printf, println, html, js and urlquery. It may not use
	// {{template}}, {{define}} or {{block}}, range over anything but a
	// field, or go past the limits of template.go; a render that passes
	// TemplateRenderBudget, TemplateStepsMax or BodyMax stops with an error.
	Template string `json:"template,omitempty"`
}

// reservedHeaders may not be set through Config.Headers.
var reservedHeaders = []string{"Host", "Content-Length", "Transfer-Encoding", "Connection", SignatureHeader, DeliveryIDHeader}

// Validate checks c, naming each key at fault. A template must parse and
// must render a sample notification without error.
func (c *Config) Validate() error { return c.validate(true) }

// validate is Validate; without samples, a template is only checked, not
// tried, as when a notifier is built from a config saved before.
func (c *Config) validate(samples bool) error {
	var errs []error
	if err := notifiers.ValidateHTTPURL("url", c.URL); err != nil {
		errs = append(errs, err)
	}
	if c.Secret != "" && len(c.Secret) < SecretMinLength {
		errs = append(errs, fmt.Errorf("secret: must be at least %d characters", SecretMinLength))
	}
	if len(c.Headers) > HeadersMax {
		errs = append(errs, fmt.Errorf("headers: must have at most %d entries, not %d", HeadersMax, len(c.Headers)))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Headers)) {
		switch {
		case !validHeaderName(name):
			errs = append(errs, fmt.Errorf("headers: %q is not a valid header name", name))
		case slices.ContainsFunc(reservedHeaders, func(r string) bool { return strings.EqualFold(r, name) }):
			errs = append(errs, fmt.Errorf("headers: %s is set by Vigil and cannot be configured", http.CanonicalHeaderKey(name)))
		case !validHeaderValue(c.Headers[name]):
			// Not the value: it may be a credential.
			errs = append(errs, fmt.Errorf("headers: the value of %s must not contain line breaks or control characters", http.CanonicalHeaderKey(name)))
		}
	}
	if c.Template != "" {
		if err := checkTemplate(c.Template, samples); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Notifier posts to one URL.
type Notifier struct {
	cfg  Config
	tmpl *boundedTemplate
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] does not apply:
// the URL is the channel's own.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.validate(false); err != nil {
		return nil, fmt.Errorf("webhook config: %w", err)
	}
	w := &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}
	if cfg.Template != "" {
		tmpl, err := compileTemplate(cfg.Template)
		if err != nil {
			return nil, fmt.Errorf("webhook config: template: %w", err)
		}
		w.tmpl = tmpl
	}
	return w, nil
}

// Notify makes one POST.
func (w *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	body, err := w.Body(n)
	if err != nil {
		return notifiers.RedactError(templateFailure(err), w.secrets()...)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, w.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return notifiers.RedactError(notifiers.Permanent(fmt.Errorf("build request: %w", err)), w.secrets()...)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Vigil")
	for name, value := range w.cfg.Headers {
		req.Header.Set(name, value)
	}
	if w.cfg.Secret != "" {
		req.Header.Set(SignatureHeader, Sign(w.cfg.Secret, n.SentAt, body))
	}
	if n.DeliveryID != "" {
		req.Header.Set(DeliveryIDHeader, n.DeliveryID)
	}
	if err := notifiers.SendHTTP(w.opts.HTTPClient, req, w.secrets()...); err != nil {
		return fmt.Errorf("post webhook: %w", err)
	}
	w.opts.LogSent(Kind, n)
	return nil
}

// secrets are what must never appear in an error: the signing secret, the
// header values, which often hold credentials, and the URL's path and query,
// which may hold a token and which receivers like to echo.
func (w *Notifier) secrets() []string {
	s := append([]string{w.cfg.Secret}, notifiers.URLSecrets(w.cfg.URL)...)
	for _, v := range w.cfg.Headers {
		s = append(s, v)
	}
	return s
}

// Body renders the request body for n: the channel's template, or the
// default JSON payload.
func (w *Notifier) Body(n *notifiers.Notification) ([]byte, error) {
	if w.tmpl == nil && n.Event.IsReport() {
		body, err := json.Marshal(NewReportPayload(n))
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		return body, nil
	}
	if w.tmpl == nil {
		body, err := json.Marshal(NewPayload(n))
		if err != nil {
			return nil, fmt.Errorf("encode payload: %w", err)
		}
		return body, nil
	}
	body, err := w.tmpl.render(n)
	if err != nil {
		return nil, fmt.Errorf("render template: %w", err)
	}
	return body, nil
}

// Payload is the default webhook body, PROTOCOL §3.
type Payload struct {
	Event string `json:"event"`
	// Incident is the incident the event is about; null for a monitor
	// event (monitor.undeclared, monitor.redeclared), which has none.
	Incident *PayloadIncident `json:"incident"`
	// MonitorEvent is set, and only, for a monitor event: when it
	// happened and what it says.
	MonitorEvent *PayloadMonitorEvent `json:"monitor_event,omitempty"`
	Monitor      PayloadMonitor       `json:"monitor"`
	// Run is the run the incident concerns (a failed or stuck run), null
	// when none.
	Run *PayloadRun `json:"run"`
	// Ping is the ping that opened the incident (for a failure, the
	// failing ping), null when time opened it.
	Ping *PayloadPing `json:"ping"`
	// Incidents is set, and only, for incidents.grouped: every incident
	// of the group with its monitor, in the order they opened. Its
	// "incident" and "monitor" are the first's, so that a template made
	// for single incidents still renders.
	Incidents []PayloadGroupItem `json:"incidents,omitempty"`
	SentAt    time.Time          `json:"sent_at"`
}

// PayloadGroupItem is one incident of an incidents.grouped payload.
type PayloadGroupItem struct {
	Incident PayloadIncident `json:"incident"`
	Monitor  PayloadMonitor  `json:"monitor"`
}

// PayloadRun is the payload's "run", with the fields of a run in the
// API's history.
type PayloadRun struct {
	RID        string     `json:"rid"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Outcome    string     `json:"outcome"`
	DurationMS *int64     `json:"duration_ms"`
	Attempt    int        `json:"attempt"`
	ExitCode   *int       `json:"exit_code"`
	WillRetry  bool       `json:"will_retry"`
	Stuck      bool       `json:"stuck"`
	URL        string     `json:"url"`
}

// PayloadPing is the payload's "ping", with the fields of a ping in the
// API's history. Body is the tail of the ping's body (the run's output):
// its last PingBodyLines lines, at most PingBodyChars characters, and ""
// when the monitor's notify_output is off; BodyTruncated says that more
// was sent.
type PayloadPing struct {
	ID            int64      `json:"id"`
	Kind          string     `json:"kind"`
	At            time.Time  `json:"at"`
	RID           string     `json:"rid"`
	Attempt       int        `json:"attempt"`
	RetryAt       *time.Time `json:"retry_at"`
	ExitCode      *int       `json:"exit_code"`
	DurationMS    *int64     `json:"duration_ms"`
	Body          string     `json:"body"`
	BodyTruncated bool       `json:"body_truncated"`
}

// Bounds of PayloadPing.Body.
const (
	PingBodyLines = 100
	PingBodyChars = 16000
)

// PayloadIncident is the payload's "incident".
type PayloadIncident struct {
	ID         string     `json:"id"`
	Kind       string     `json:"kind"`
	OpenedAt   time.Time  `json:"opened_at"`
	ResolvedAt *time.Time `json:"resolved_at"`
	Summary    string     `json:"summary"`
	// SnoozeURL is a signed link that snoozes the monitor for an hour
	// without a sign-in; omitted on a recovery.
	SnoozeURL string `json:"snooze_url,omitempty"`
}

// PayloadMonitorEvent is the payload's "monitor_event": At is when the
// monitor's source stopped (monitor.undeclared) or started again
// (monitor.redeclared) declaring it, and Summary says so in a sentence
// that names the source and, for monitor.undeclared, when the monitor was
// last declared.
type PayloadMonitorEvent struct {
	At      time.Time `json:"at"`
	Summary string    `json:"summary"`
}

// PayloadMonitor is the payload's "monitor". Source is the source that
// declares it, omitted when a person made it.
type PayloadMonitor struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Slug   string   `json:"slug"`
	Status string   `json:"status"`
	Tags   []string `json:"tags"`
	Source string   `json:"source,omitempty"`
	URL    string   `json:"url"`
}

// NewPayload builds the default payload for n, with times in UTC and tags
// as [] rather than null.
func NewPayload(n *notifiers.Notification) Payload {
	p := Payload{
		Event:   string(n.Event),
		Monitor: payloadMonitor(n.Monitor, n.Link()),
		SentAt:  n.SentAt.UTC(),
	}
	if n.Event == notifiers.EventGrouped {
		p.Monitor.URL = n.Monitor.URL
		first := payloadIncident(n.Incident)
		p.Incident = &first
		for _, g := range n.Group {
			p.Incidents = append(p.Incidents, PayloadGroupItem{Incident: payloadIncident(g.Incident),
				Monitor: payloadMonitor(g.Monitor, g.Monitor.URL)})
		}
		return p
	}
	if n.Event.IsMonitorEvent() {
		p.MonitorEvent = &PayloadMonitorEvent{At: n.EventAt.UTC(), Summary: n.Summary()}
		return p
	}
	in := payloadIncident(n.Incident)
	p.Incident = &in
	p.Incident.SnoozeURL = n.SnoozeURL
	if r := n.Run; r != nil {
		p.Run = &PayloadRun{RID: r.RID, StartedAt: utc(r.StartedAt), FinishedAt: utc(r.FinishedAt), Outcome: r.Outcome,
			DurationMS: r.DurationMS, Attempt: r.Attempt, ExitCode: r.ExitCode, WillRetry: r.WillRetry, Stuck: r.Stuck,
			URL: r.URL}
	}
	if pg := n.Ping; pg != nil {
		body, cut := n.OutputTail(PingBodyLines, PingBodyChars)
		p.Ping = &PayloadPing{ID: pg.ID, Kind: pg.Kind, At: pg.At.UTC(), RID: pg.RID, Attempt: pg.Attempt,
			RetryAt: utc(pg.RetryAt), ExitCode: pg.ExitCode, DurationMS: pg.DurationMS, Body: body, BodyTruncated: cut}
	}
	return p
}

func payloadMonitor(m notifiers.Monitor, url string) PayloadMonitor {
	return PayloadMonitor{ID: m.ID, Name: m.Name, Slug: m.Slug, Status: m.Status, Tags: append([]string{}, m.Tags...),
		Source: m.Source, URL: url}
}

func payloadIncident(in notifiers.Incident) PayloadIncident {
	p := PayloadIncident{ID: in.ID, Kind: string(in.Kind), OpenedAt: in.OpenedAt.UTC(), Summary: in.Summary}
	if in.ResolvedAt != nil {
		resolved := in.ResolvedAt.UTC()
		p.ResolvedAt = &resolved
	}
	return p
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// sampleNotification is what a template is tried on when it is saved.
func sampleNotification() *notifiers.Notification {
	opened := time.Date(2026, 1, 2, 2, 5, 0, 0, time.UTC)
	resolved := opened.Add(12 * time.Minute)
	return &notifiers.Notification{
		Event: notifiers.EventResolved,
		Incident: notifiers.Incident{ID: "sample", Kind: notifiers.IncidentMissed, OpenedAt: opened,
			ResolvedAt: &resolved, Summary: "sample did not run at 02:00 UTC (grace 5m)", Details: "sample"},
		Monitor: notifiers.Monitor{ID: "sample", Name: "sample", Slug: "sample", Status: "up", Tags: []string{"sample"},
			URL: "https://vigil.example.com/monitors/sample", Schedule: "0 2 * * * (UTC)",
			LastPingAt: &opened, NextExpectedAt: &resolved},
		SentAt:  resolved,
		BaseURL: "https://vigil.example.com",
	}
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", r) {
			return false
		}
	}
	return true
}

func validHeaderValue(v string) bool {
	for _, r := range v {
		if (r < ' ' && r != '\t') || r == 0x7f {
			return false
		}
	}
	return true
}
