// Package discord sends Vigil notifications to a Discord channel webhook as
// an embed, red when an incident opens and green when it resolves.
package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "discord"

// Config is a Discord channel's configuration (PROTOCOL §2).
type Config struct {
	// WebhookURL is the channel webhook (https://discord.com/api/webhooks/…).
	// It is the credential.
	WebhookURL string `json:"webhook_url"`
}

// Validate checks c, naming the key at fault.
func (c *Config) Validate() error {
	return notifiers.ValidateHTTPURL("webhook_url", c.WebhookURL)
}

// Notifier posts to one Discord webhook.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] does not apply:
// the URL is the channel's own.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("discord config: %w", err)
	}
	return &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}, nil
}

// Message is a webhook execution body
// (https://discord.com/developers/docs/resources/webhook#execute-webhook).
type Message struct {
	Username        string          `json:"username,omitempty"`
	Content         string          `json:"content,omitempty"`
	Embeds          []Embed         `json:"embeds"`
	AllowedMentions AllowedMentions `json:"allowed_mentions"`
}

// AllowedMentions with an empty Parse stops @everyone and role pings that a
// monitor name or a job's output might contain.
type AllowedMentions struct {
	Parse []string `json:"parse"`
}

// Embed is a rich message block.
type Embed struct {
	Title       string       `json:"title"`
	URL         string       `json:"url,omitempty"`
	Description string       `json:"description,omitempty"`
	Color       int          `json:"color"`
	Fields      []EmbedField `json:"fields,omitempty"`
	Timestamp   string       `json:"timestamp,omitempty"`
	Footer      *EmbedFooter `json:"footer,omitempty"`
}

// EmbedField is one name/value pair of an embed.
type EmbedField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

// EmbedFooter is an embed's footer.
type EmbedFooter struct {
	Text string `json:"text"`
}

// Embed colours, as Discord wants them: 0xRRGGBB as a number.
const (
	ColorDown   = 0xD92D20
	ColorUp     = 0x12B76A
	ColorUpdate = 0xF79009
	ColorNotice = 0x2E90FA
	ColorTest   = 0x667085
)

// NewMessage builds the message for n.
func NewMessage(n *notifiers.Notification) Message {
	color := ColorUpdate
	switch n.Tone() {
	case notifiers.ToneDown:
		color = ColorDown
	case notifiers.ToneUp:
		color = ColorUp
	case notifiers.ToneNotice:
		color = ColorNotice
	case notifiers.ToneTest:
		color = ColorTest
	}
	description := n.Summary()
	if n.Incident.Details != "" && n.Event != notifiers.EventResolved {
		description += "\n\n" + n.Incident.Details
	}
	embed := Embed{
		Title:       notifiers.Truncate(n.Headline(), 256),
		URL:         n.Link(),
		Description: notifiers.Truncate(escape(description), 4096),
		Color:       color,
		Timestamp:   n.SentAt.UTC().Format("2006-01-02T15:04:05Z07:00"),
		Footer:      &EmbedFooter{Text: "Vigil"},
	}
	for _, f := range n.Facts() {
		if len(embed.Fields) == 23 { // 25 at most, with the two below
			break
		}
		embed.Fields = append(embed.Fields, EmbedField{
			Name:   notifiers.Truncate(f.Label, 256),
			Value:  notifiers.Truncate(escape(f.Value), 1024),
			Inline: true,
		})
	}
	if n.Event != notifiers.EventResolved {
		// A field value holds 1024 characters, the fence included.
		if out, cut := n.OutputFor(outputLines, 1024-8, escapeCode); out != "" {
			name := "Output"
			if cut {
				name = "Output (last lines)"
			}
			embed.Fields = append(embed.Fields, EmbedField{Name: name, Value: "```\n" + out + "\n```"})
		}
		if link := n.RunURL(); link != "" && len(link) < 1000 {
			embed.Fields = append(embed.Fields, EmbedField{Name: "Run", Value: "[Open the run in Vigil](" + link + ")"})
		}
		if link := n.SnoozeURL; link != "" && len(link) < 1000 {
			embed.Fields = append(embed.Fields, EmbedField{Name: "Snooze", Value: "[" + notifiers.SnoozeLinkText + "](" + link + ")"})
		}
	}
	return Message{
		Username:        "Vigil",
		Embeds:          []Embed{embed},
		AllowedMentions: AllowedMentions{Parse: []string{}},
	}
}

// outputLines is how many of the last lines of a failing run's output a
// message shows at most.
const outputLines = 15

// escapeCode keeps output inside its code block, where markdown is not
// read: only a ``` would end the block early.
func escapeCode(s string) string {
	return strings.ReplaceAll(s, "```", "`\u200b`\u200b`")
}

// escape keeps Discord markdown from formatting user text: a job named
// "nightly_import_v2" must not turn italic.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`, ">", `\>`).Replace(s)
}

// Notify posts one message. Discord answers 204 No Content on success.
func (d *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, d.opts.Timeout)
	defer cancel()
	secrets := notifiers.URLSecrets(d.cfg.WebhookURL)
	req, err := notifiers.NewJSONRequest(ctx, d.cfg.WebhookURL, NewMessage(n))
	if err != nil {
		return notifiers.RedactError(err, secrets...)
	}
	if err := notifiers.SendHTTP(d.opts.HTTPClient, req, secrets...); err != nil {
		return fmt.Errorf("post discord message: %w", err)
	}
	d.opts.LogSent(Kind, n)
	return nil
}
