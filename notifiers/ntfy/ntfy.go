// Package ntfy publishes Vigil notifications to an ntfy topic
// (https://ntfy.sh or a self-hosted server): the message as the body, and
// Title, Priority, Tags and Click as headers.
package ntfy

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "ntfy"

// Config is an ntfy channel's configuration (PROTOCOL §2).
type Config struct {
	// URL is the server and the topic: https://ntfy.sh/my-topic. On a
	// public server without access control, the topic name is the only
	// secret.
	URL string `json:"url"`
	// Token is an access token (tk_…) sent as a Bearer token, optional.
	Token string `json:"token,omitempty"`
}

var topicPattern = regexp.MustCompile(`^[-_A-Za-z0-9]{1,64}$`)

// Validate checks c, naming each key at fault.
func (c *Config) Validate() error {
	var errs []error
	if err := notifiers.ValidateHTTPURL("url", c.URL); err != nil {
		errs = append(errs, err)
	} else {
		u, _ := url.Parse(c.URL)
		path := strings.TrimSuffix(u.Path, "/")
		topic := path[strings.LastIndex(path, "/")+1:]
		switch {
		case topic == "":
			errs = append(errs, errors.New("url: must include the topic, like https://ntfy.sh/my-topic"))
		case !topicPattern.MatchString(topic):
			errs = append(errs, errors.New("url: the topic must be 1 to 64 letters, digits, - or _"))
		case u.RawQuery != "" || u.Fragment != "":
			errs = append(errs, errors.New("url: must not have a query or fragment; set the token in token"))
		}
	}
	if c.Token != "" {
		if err := notifiers.ValidateSecret("token", c.Token); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Notifier publishes to one topic.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] does not apply:
// the URL is the channel's own.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("ntfy config: %w", err)
	}
	return &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}, nil
}

// Message is what is published: the body and the headers that go with it.
type Message struct {
	Title    string
	Body     string
	Priority string   // urgent, high, default
	Tags     []string // emoji short codes first, then the monitor's tags
	Click    string
}

// NewMessage builds the message for n. An opened incident is urgent (it
// breaks through do-not-disturb on phones that allow it), an update or a
// reminder is high, a recovery, a test and news about a monitor
// (monitor.undeclared, monitor.redeclared) are default.
func NewMessage(n *notifiers.Notification) Message {
	m := Message{Title: n.Headline(), Click: n.Link(), Priority: "high", Tags: []string{"warning"}}
	switch n.Tone() {
	case notifiers.ToneDown:
		m.Priority, m.Tags = "urgent", []string{"rotating_light"}
	case notifiers.ToneUp:
		m.Priority, m.Tags = "default", []string{"white_check_mark"}
	case notifiers.ToneNotice:
		m.Priority, m.Tags = "default", []string{"information_source"}
	case notifiers.ToneTest:
		m.Priority, m.Tags = "default", []string{"bell"}
	}
	for _, tag := range n.Monitor.Tags {
		if tag = strings.TrimSpace(strings.ReplaceAll(tag, ",", " ")); tag != "" {
			m.Tags = append(m.Tags, tag)
		}
	}
	var b strings.Builder
	b.WriteString(n.Summary())
	if n.Incident.Details != "" && n.Event != notifiers.EventResolved {
		b.WriteString("\n\n" + n.Incident.Details)
	}
	if facts := n.Facts(); len(facts) > 0 {
		b.WriteString("\n")
		for _, f := range facts {
			b.WriteString("\n" + f.Label + ": " + f.Value)
		}
	}
	if n.Event != notifiers.EventResolved {
		if out, cut := n.OutputFor(outputLines, outputChars, nil); out != "" {
			label := "Output:"
			if cut {
				label = "Output (last lines):"
			}
			b.WriteString("\n\n" + label + "\n" + out)
		}
		if run := n.RunURL(); run != "" {
			b.WriteString("\n\nThe run: " + run)
		}
		if link := n.SnoozeURL; link != "" {
			b.WriteString("\n\n" + notifiers.SnoozeLinkText + ": " + link)
		}
	}
	m.Body = notifiers.Truncate(b.String(), 4000)
	return m
}

// header encodes a header value as RFC 2047 when it is not plain ASCII,
// which ntfy decodes; ASCII values are sent as they are.
func header(v string) string {
	v = strings.NewReplacer("\r", " ", "\n", " ").Replace(v)
	return mime.QEncoding.Encode("utf-8", v)
}

// Notify publishes one message.
func (nt *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, nt.opts.Timeout)
	defer cancel()
	secrets := append(notifiers.URLSecrets(nt.cfg.URL), nt.cfg.Token)
	m := NewMessage(n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, nt.cfg.URL, strings.NewReader(m.Body))
	if err != nil {
		return notifiers.RedactError(notifiers.Permanent(fmt.Errorf("build request: %w", err)), secrets...)
	}
	req.Header.Set("Content-Type", "text/plain; charset=utf-8")
	req.Header.Set("User-Agent", "Vigil")
	req.Header.Set("Title", header(notifiers.Truncate(m.Title, 250)))
	req.Header.Set("Priority", m.Priority)
	req.Header.Set("Tags", header(strings.Join(m.Tags, ",")))
	if m.Click != "" {
		req.Header.Set("Click", m.Click)
	}
	if nt.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+nt.cfg.Token)
	}
	if err := notifiers.SendHTTP(nt.opts.HTTPClient, req, secrets...); err != nil {
		return fmt.Errorf("publish ntfy message: %w", err)
	}
	nt.opts.LogSent(Kind, n)
	return nil
}

// Bounds of the output a message shows: the last lines of a failing run's
// output, in plain text (ntfy keeps 4096 bytes of a message).
const (
	outputLines = 15
	outputChars = 1000
)
