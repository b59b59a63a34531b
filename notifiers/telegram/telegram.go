// Package telegram sends Vigil notifications through a Telegram bot
// (sendMessage, HTML parse mode).
package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "telegram"

// apiURLDefault is the Bot API; the path is /bot<token>/sendMessage.
const apiURLDefault = "https://api.telegram.org"

// MessageMax is Telegram's limit on a message's text.
const MessageMax = 4096

// Config is a Telegram channel's configuration (PROTOCOL §2).
type Config struct {
	// BotToken is the token @BotFather gave, "123456:ABC-DEF…".
	BotToken string `json:"bot_token"`
	// ChatID is a chat's numeric id (negative for groups) or a public
	// channel's @username. JSON may give it as a number or a string.
	ChatID ChatID `json:"chat_id"`
}

// ChatID is a Telegram chat id, kept as text. It unmarshals from a JSON
// number as well as from a string, since ids are numbers and usernames are
// not.
type ChatID string

// UnmarshalJSON accepts 123, -100123 or "@channel".
func (c *ChatID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = ChatID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("chat_id: must be a number or a string")
	}
	*c = ChatID(n.String())
	return nil
}

var (
	tokenPattern    = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,}$`)
	chatIDPattern   = regexp.MustCompile(`^-?[0-9]{1,20}$`)
	usernamePattern = regexp.MustCompile(`^@[A-Za-z][A-Za-z0-9_]{3,31}$`)
)

// Validate checks c, naming each key at fault.
func (c *Config) Validate() error {
	var errs []error
	if c.BotToken == "" {
		errs = append(errs, errors.New("bot_token: must be set"))
	} else if !tokenPattern.MatchString(c.BotToken) {
		errs = append(errs, errors.New("bot_token: must look like 123456:ABC-DEF… (the token from @BotFather)"))
	}
	id := string(c.ChatID)
	switch {
	case id == "":
		errs = append(errs, errors.New("chat_id: must be set"))
	case !chatIDPattern.MatchString(id) && !usernamePattern.MatchString(id):
		errs = append(errs, fmt.Errorf("chat_id: %q is neither a numeric chat id nor a @channelusername", id))
	}
	return errors.Join(errs...)
}

// Notifier sends to one Telegram chat.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] replaces
// https://api.telegram.org.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("telegram config: %w", err)
	}
	return &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}, nil
}

// SendMessage is the body of sendMessage.
type SendMessage struct {
	ChatID             string             `json:"chat_id"`
	Text               string             `json:"text"`
	ParseMode          string             `json:"parse_mode"`
	LinkPreviewOptions LinkPreviewOptions `json:"link_preview_options"`
}

// LinkPreviewOptions turns the preview of the dashboard link off.
type LinkPreviewOptions struct {
	IsDisabled bool `json:"is_disabled"`
}

// Text renders n as Telegram HTML: every piece of user text is escaped,
// and the whole stays under MessageMax.
func Text(n *notifiers.Notification) string {
	icon := "🔴"
	switch n.Tone() {
	case notifiers.ToneUp:
		icon = "✅"
	case notifiers.ToneUpdate:
		icon = "🟠"
	case notifiers.ToneNotice:
		icon = "ℹ️"
	case notifiers.ToneTest:
		icon = "🔔"
	}
	var b strings.Builder
	b.WriteString(icon + " <b>" + html.EscapeString(notifiers.Truncate(n.Headline(), 300)) + "</b>\n")
	b.WriteString(html.EscapeString(notifiers.Truncate(n.Summary(), 1000)) + "\n")
	if n.Incident.Details != "" && n.Event != notifiers.EventResolved {
		b.WriteString("\n<i>" + html.EscapeString(notifiers.Truncate(n.Incident.Details, 1500)) + "</i>\n")
	}
	if facts := n.Facts(); len(facts) > 0 {
		b.WriteString("\n")
		for _, f := range facts {
			b.WriteString("<b>" + html.EscapeString(f.Label) + ":</b> " + html.EscapeString(notifiers.Truncate(f.Value, 200)) + "\n")
		}
	}
	if n.Event != notifiers.EventResolved {
		// A message holds 4096 characters after its entities are read.
		if out, cut := n.OutputFor(outputLines, outputChars, html.EscapeString); out != "" {
			label := "Output:"
			if cut {
				label = "Output (last lines):"
			}
			b.WriteString("\n<b>" + label + "</b>\n<pre>" + out + "</pre>\n")
		}
	}
	if link := n.Link(); link != "" && len(link) < 500 {
		b.WriteString("\n<a href=\"" + html.EscapeString(link) + "\">Open in Vigil</a>")
		if run := n.RunURL(); run != "" && len(run) < 500 && n.Event != notifiers.EventResolved {
			b.WriteString(" · <a href=\"" + html.EscapeString(run) + "\">The run</a>")
		}
		if snooze := n.SnoozeURL; snooze != "" && len(snooze) < 500 {
			b.WriteString(" · <a href=\"" + html.EscapeString(snooze) + "\">" + notifiers.SnoozeLinkText + "</a>")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// apiError is the body of a Bot API error.
type apiError struct {
	Parameters struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// Notify sends one message.
func (tg *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, tg.opts.Timeout)
	defer cancel()
	secrets := []string{tg.cfg.BotToken, "bot" + tg.cfg.BotToken}
	target := tg.opts.APIBase(apiURLDefault) + "/bot" + tg.cfg.BotToken + "/sendMessage"
	req, err := notifiers.NewJSONRequest(ctx, target, SendMessage{
		ChatID:             string(tg.cfg.ChatID),
		Text:               Text(n),
		ParseMode:          "HTML",
		LinkPreviewOptions: LinkPreviewOptions{IsDisabled: true},
	})
	if err != nil {
		return notifiers.RedactError(err, secrets...)
	}
	resp, err := tg.opts.HTTPClient.Do(req)
	if err != nil {
		return notifiers.RedactError(notifiers.AttemptError(ctx, fmt.Errorf("send telegram message: %w", err)), secrets...)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := notifiers.ClassifyHTTP(resp); err != nil {
		// The Bot API names its wait in the body, not always in a header.
		if _, ok := notifiers.RetryAfter(err); !ok && resp.StatusCode == http.StatusTooManyRequests {
			var apiErr apiError
			if json.Unmarshal(body, &apiErr) == nil && apiErr.Parameters.RetryAfter > 0 {
				err = notifiers.Retryable(err, time.Duration(apiErr.Parameters.RetryAfter)*time.Second)
			}
		}
		return notifiers.RedactError(fmt.Errorf("send telegram message: %w", err), secrets...)
	}
	tg.opts.LogSent(Kind, n)
	return nil
}

// Bounds of the output a message shows: the last lines of a failing run's
// output.
const (
	outputLines = 20
	outputChars = 1500
)
