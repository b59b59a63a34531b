// Package teams sends Vigil notifications to Microsoft Teams through a
// Workflows webhook ("When a Teams webhook request is received"): a message
// with one Adaptive Card attachment.
package teams

import (
	"context"
	"fmt"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "teams"

// Config is a Teams channel's configuration (PROTOCOL §2).
type Config struct {
	// WebhookURL is the Workflows webhook URL. Its signature query
	// parameter (sig=) is the credential.
	WebhookURL string `json:"webhook_url"`
}

// Validate checks c, naming the key at fault.
func (c *Config) Validate() error {
	return notifiers.ValidateHTTPURL("webhook_url", c.WebhookURL)
}

// Notifier posts to one Teams webhook.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] does not apply:
// the URL is the channel's own.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("teams config: %w", err)
	}
	return &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}, nil
}

// ContentTypeAdaptiveCard is the attachment content type of an Adaptive
// Card.
const ContentTypeAdaptiveCard = "application/vnd.microsoft.card.adaptive"

// Message is the body a Workflows webhook takes.
type Message struct {
	Type        string       `json:"type"`
	Attachments []Attachment `json:"attachments"`
}

// Attachment carries the card.
type Attachment struct {
	ContentType string  `json:"contentType"`
	ContentURL  *string `json:"contentUrl"`
	Content     Card    `json:"content"`
}

// Card is an Adaptive Card (https://adaptivecards.io/explorer/AdaptiveCard.html).
type Card struct {
	Schema  string         `json:"$schema"`
	Type    string         `json:"type"`
	Version string         `json:"version"`
	Body    []any          `json:"body"`
	Actions []Action       `json:"actions,omitempty"`
	MSTeams map[string]any `json:"msteams,omitempty"`
}

// Container groups elements under one style.
type Container struct {
	Type  string `json:"type"`
	Style string `json:"style,omitempty"`
	Bleed bool   `json:"bleed,omitempty"`
	Items []any  `json:"items"`
}

// TextBlock is a paragraph.
type TextBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Wrap     bool   `json:"wrap"`
	Weight   string `json:"weight,omitempty"`
	Size     string `json:"size,omitempty"`
	Color    string `json:"color,omitempty"`
	IsSubtle bool   `json:"isSubtle,omitempty"`
	Spacing  string `json:"spacing,omitempty"`
}

// RichTextBlock is a paragraph of TextRuns (Adaptive Cards 1.2).
type RichTextBlock struct {
	Type    string    `json:"type"`
	Inlines []TextRun `json:"inlines"`
}

// TextRun is plain text with its own style; unlike a TextBlock's, its text
// is not read as markdown.
type TextRun struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	FontType string `json:"fontType,omitempty"`
	Size     string `json:"size,omitempty"`
}

// Bounds of the output a card shows: the last lines of a failing run's
// output.
const (
	outputLines = 20
	outputChars = 2000
)

// FactSet is a list of label/value pairs.
type FactSet struct {
	Type  string `json:"type"`
	Facts []Fact `json:"facts"`
}

// Fact is one line of a FactSet.
type Fact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// Action is a button.
type Action struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	URL   string `json:"url"`
}

// NewMessage builds the message for n. The header is styled "attention"
// (red) when an incident opens, "good" (green) when it resolves,
// "warning" for updates and reminders, and "accent" (blue) for news about
// a monitor (monitor.undeclared, monitor.redeclared).
func NewMessage(n *notifiers.Notification) Message {
	style, color := "warning", "Warning"
	switch n.Tone() {
	case notifiers.ToneDown:
		style, color = "attention", "Attention"
	case notifiers.ToneUp:
		style, color = "good", "Good"
	case notifiers.ToneNotice:
		style, color = "accent", "Accent"
	case notifiers.ToneTest:
		style, color = "emphasis", "Default"
	}
	body := []any{
		Container{Type: "Container", Style: style, Bleed: true, Items: []any{
			TextBlock{Type: "TextBlock", Text: n.Headline(), Wrap: true, Weight: "Bolder", Size: "Large", Color: color},
		}},
		TextBlock{Type: "TextBlock", Text: notifiers.Truncate(n.Summary(), 2000), Wrap: true},
	}
	if n.Incident.Details != "" && n.Event != notifiers.EventResolved {
		body = append(body, TextBlock{Type: "TextBlock", Text: notifiers.Truncate(n.Incident.Details, 4000), Wrap: true, IsSubtle: true})
	}
	if facts := n.Facts(); len(facts) > 0 {
		set := FactSet{Type: "FactSet"}
		for _, f := range facts {
			set.Facts = append(set.Facts, Fact{Title: f.Label, Value: f.Value})
		}
		body = append(body, set)
	}
	if n.Event != notifiers.EventResolved {
		// A TextRun is plain text: no markdown is read in it, so the
		// output needs no escaping.
		if out, cut := n.OutputFor(outputLines, outputChars, nil); out != "" {
			label := "Output"
			if cut {
				label = "Output (last lines)"
			}
			body = append(body,
				TextBlock{Type: "TextBlock", Text: label, Wrap: true, Weight: "Bolder", Spacing: "Medium"},
				RichTextBlock{Type: "RichTextBlock", Inlines: []TextRun{{Type: "TextRun", Text: out, FontType: "Monospace", Size: "Small"}}})
		}
	}
	card := Card{
		Schema:  "http://adaptivecards.io/schemas/adaptive-card.json",
		Type:    "AdaptiveCard",
		Version: "1.4",
		Body:    body,
		MSTeams: map[string]any{"width": "Full"},
	}
	if link := n.Link(); link != "" {
		card.Actions = []Action{{Type: "Action.OpenUrl", Title: "Open in Vigil", URL: link}}
	}
	if link := n.RunURL(); link != "" && n.Event != notifiers.EventResolved {
		card.Actions = append(card.Actions, Action{Type: "Action.OpenUrl", Title: "Open the run", URL: link})
	}
	if link := n.SnoozeURL; link != "" {
		card.Actions = append(card.Actions, Action{Type: "Action.OpenUrl", Title: notifiers.SnoozeLinkText, URL: link})
	}
	return Message{
		Type:        "message",
		Attachments: []Attachment{{ContentType: ContentTypeAdaptiveCard, Content: card}},
	}
}

// Notify posts one message. Workflows answers 202 Accepted.
func (tm *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, tm.opts.Timeout)
	defer cancel()
	secrets := notifiers.URLSecrets(tm.cfg.WebhookURL)
	req, err := notifiers.NewJSONRequest(ctx, tm.cfg.WebhookURL, NewMessage(n))
	if err != nil {
		return notifiers.RedactError(err, secrets...)
	}
	if err := notifiers.SendHTTP(tm.opts.HTTPClient, req, secrets...); err != nil {
		return fmt.Errorf("post teams message: %w", err)
	}
	tm.opts.LogSent(Kind, n)
	return nil
}
