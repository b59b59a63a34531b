// Package slack sends Vigil notifications to Slack, through an incoming
// webhook or through a bot token and chat.postMessage, as a Block Kit
// message inside a coloured attachment: red when an incident opens, green
// when it resolves.
package slack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	slackapi "github.com/slack-go/slack"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "slack"

// apiURLDefault is Slack's Web API; slack-go appends the method name.
const apiURLDefault = "https://slack.com"

// Config is a Slack channel's configuration (PROTOCOL §2). Either
// WebhookURL, or Token and Channel.
type Config struct {
	// WebhookURL is an incoming webhook. It is the credential: anyone who
	// has it can post.
	WebhookURL string `json:"webhook_url,omitempty"`
	// Token is a bot token (xoxb-…) with chat:write.
	Token string `json:"token,omitempty"`
	// Channel is a channel id or name, used with Token.
	Channel string `json:"channel,omitempty"`
}

// Validate checks c, naming each key at fault.
func (c *Config) Validate() error {
	switch {
	case c.WebhookURL == "" && c.Token == "" && c.Channel == "":
		return errors.New("webhook_url: must be set, or token and channel")
	case c.WebhookURL != "":
		var errs []error
		if err := notifiers.ValidateHTTPURL("webhook_url", c.WebhookURL); err != nil {
			errs = append(errs, err)
		}
		if c.Token != "" {
			errs = append(errs, errors.New("token: must not be set together with webhook_url"))
		}
		if c.Channel != "" {
			errs = append(errs, errors.New("channel: only used with token; a webhook posts to its own channel"))
		}
		return errors.Join(errs...)
	}
	var errs []error
	if err := notifiers.ValidateSecret("token", c.Token); err != nil {
		errs = append(errs, fmt.Errorf("%w (with channel, or use webhook_url)", err))
	} else if !strings.HasPrefix(c.Token, "xox") {
		errs = append(errs, errors.New("token: must be a Slack token starting with xox (a bot token is xoxb-…)"))
	}
	if strings.TrimSpace(c.Channel) == "" {
		errs = append(errs, errors.New("channel: must be set with token"))
	}
	return errors.Join(errs...)
}

// Notifier posts to one Slack channel.
type Notifier struct {
	cfg  Config
	opts notifiers.Options
	api  *slackapi.Client
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier for cfg. [notifiers.WithAPIURL] replaces
// https://slack.com for chat.postMessage; a webhook is posted to as given.
func New(cfg Config, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("slack config: %w", err)
	}
	n := &Notifier{cfg: cfg, opts: notifiers.NewOptions(opts...)}
	if cfg.Token != "" {
		// No OptionRetry: one attempt per call, retries belong to delivery.
		n.api = slackapi.New(cfg.Token,
			slackapi.OptionHTTPClient(n.opts.HTTPClient),
			slackapi.OptionAPIURL(n.opts.APIBase(apiURLDefault)+"/api/"))
	}
	return n, nil
}

// Notify posts one message.
func (s *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, s.opts.Timeout)
	defer cancel()

	headline := notifiers.Truncate(n.Headline(), 150)
	att := attachment(n)
	var err error
	if s.api == nil {
		err = slackapi.PostWebhookCustomHTTPContext(ctx, s.cfg.WebhookURL, s.opts.HTTPClient, &slackapi.WebhookMessage{
			Text:        headline,
			Attachments: []slackapi.Attachment{att},
		})
	} else {
		_, _, err = s.api.PostMessageContext(ctx, s.cfg.Channel,
			slackapi.MsgOptionText(headline, false),
			slackapi.MsgOptionAttachments(att),
			slackapi.MsgOptionDisableLinkUnfurl())
	}
	if err != nil {
		err = classify(notifiers.AttemptError(ctx, fmt.Errorf("post slack message: %w", err)))
		return notifiers.RedactError(err, append(notifiers.URLSecrets(s.cfg.WebhookURL), s.cfg.Token)...)
	}
	s.opts.LogSent(Kind, n)
	return nil
}

// classify maps slack-go's errors onto our retry classes.
func classify(err error) error {
	var rate *slackapi.RateLimitedError
	if errors.As(err, &rate) {
		return notifiers.Retryable(err, rate.RetryAfter)
	}
	var status slackapi.StatusCodeError
	if errors.As(err, &status) {
		code := status.Code
		switch {
		case code == http.StatusTooManyRequests, code == http.StatusRequestTimeout, code >= 500:
			return err
		case code >= 400:
			return notifiers.Permanent(err)
		}
		return notifiers.Permanent(err) // 1xx, 2xx other than 200, 3xx
	}
	var api slackapi.SlackErrorResponse
	if errors.As(err, &api) {
		// The Web API answers 200 with ok=false; only these are worth
		// another try (https://api.slack.com/methods/chat.postMessage).
		switch api.Err {
		case "ratelimited", "internal_error", "fatal_error", "service_unavailable", "request_timeout", "team_added_to_org":
			return err
		}
		return notifiers.Permanent(err)
	}
	return err
}

// Attachment colours.
const (
	colorDown   = "#D92D20"
	colorUp     = "#12B76A"
	colorUpdate = "#F79009"
	colorNotice = "#2E90FA"
	colorTest   = "#667085"
)

func color(n *notifiers.Notification) string {
	switch n.Tone() {
	case notifiers.ToneDown:
		return colorDown
	case notifiers.ToneUp:
		return colorUp
	case notifiers.ToneNotice:
		return colorNotice
	case notifiers.ToneTest:
		return colorTest
	}
	return colorUpdate
}

// attachment builds the coloured attachment that holds the Block Kit
// blocks. Slack keeps colour only on attachments, so the blocks live there.
func attachment(n *notifiers.Notification) slackapi.Attachment {
	if n.Event.IsReport() {
		return reportAttachment(n)
	}
	blocks := []slackapi.Block{
		slackapi.NewHeaderBlock(slackapi.NewTextBlockObject(slackapi.PlainTextType, notifiers.Truncate(n.Headline(), 150), true, false)),
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType, notifiers.Truncate(escape(n.Summary()), 3000), false, false), nil, nil),
	}
	if n.Incident.Details != "" && n.Event != notifiers.EventResolved {
		blocks = append(blocks, slackapi.NewSectionBlock(
			slackapi.NewTextBlockObject(slackapi.MarkdownType, notifiers.Truncate(escape(n.Incident.Details), 3000), false, false), nil, nil))
	}
	var fields []*slackapi.TextBlockObject
	for _, f := range n.Facts() {
		if len(fields) == 10 { // Slack's limit per section
			break
		}
		fields = append(fields, slackapi.NewTextBlockObject(slackapi.MarkdownType,
			notifiers.Truncate("*"+escape(f.Label)+"*\n"+escape(f.Value), 2000), false, false))
	}
	if len(fields) > 0 {
		blocks = append(blocks, slackapi.NewSectionBlock(nil, fields, nil))
	}
	if n.Event != notifiers.EventResolved {
		// A section holds 3000 characters: the fence and the label fit
		// beside 2900 of output.
		if out, cut := n.OutputFor(outputLines, 2900, escapeCode); out != "" {
			label := "*Output*"
			if cut {
				label = "*Output* (last lines)"
			}
			blocks = append(blocks, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType,
				label+"\n```\n"+out+"\n```", false, false), nil, nil))
		}
	}
	var buttons []slackapi.BlockElement
	if link := n.Link(); link != "" {
		button := slackapi.NewButtonBlockElement("open_monitor", n.Monitor.ID,
			slackapi.NewTextBlockObject(slackapi.PlainTextType, "Open in Vigil", false, false)).WithURL(link)
		if n.Event == notifiers.EventOpened {
			button = button.WithStyle(slackapi.StyleDanger)
		}
		buttons = append(buttons, button)
	}
	if link := n.RunURL(); link != "" && n.Event != notifiers.EventResolved {
		buttons = append(buttons, slackapi.NewButtonBlockElement("open_run", n.Monitor.ID,
			slackapi.NewTextBlockObject(slackapi.PlainTextType, "Open the run", false, false)).WithURL(link))
	}
	if link := n.SnoozeURL; link != "" {
		buttons = append(buttons, slackapi.NewButtonBlockElement("snooze", n.Monitor.ID,
			slackapi.NewTextBlockObject(slackapi.PlainTextType, notifiers.SnoozeLinkText, false, false)).WithURL(link))
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slackapi.NewActionBlock("vigil_actions", buttons...))
	}
	return slackapi.Attachment{
		Color:    color(n),
		Fallback: n.Headline(),
		Blocks:   slackapi.Blocks{BlockSet: blocks},
	}
}

// outputLines is how many of the last lines of a failing run's output a
// message shows at most.
const outputLines = 20

// escapeCode makes output safe inside a mrkdwn code block: escaped as all
// text, and without a ``` that would end the block early.
func escapeCode(s string) string {
	return strings.ReplaceAll(escape(s), "```", "`\u200b`\u200b`")
}

// escape makes text safe for Slack mrkdwn: &, < and > are control
// characters there (https://api.slack.com/reference/surfaces/formatting).
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// reportAttachment is the attachment of a report: its period, its numbers,
// one section per list (each line a monitor, linked to its page) and a
// button to the dashboard.
func reportAttachment(n *notifiers.Notification) slackapi.Attachment {
	blocks := []slackapi.Block{
		slackapi.NewHeaderBlock(slackapi.NewTextBlockObject(slackapi.PlainTextType, notifiers.Truncate(n.Headline(), 150), true, false)),
		slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType,
			notifiers.Truncate(escape(n.Summary())+"\n_"+escape(n.Report.Span())+"_", 3000), false, false), nil, nil),
	}
	for _, sec := range n.ReportSections() {
		var b strings.Builder
		b.WriteString("*" + escape(sec.Title) + "*")
		for _, l := range sec.Lines {
			b.WriteString("\n• ")
			switch {
			case l.Label != "" && l.URL != "":
				b.WriteString("<" + l.URL + "|" + escape(l.Label) + ">: ")
			case l.Label != "":
				b.WriteString(escape(l.Label) + ": ")
			}
			b.WriteString(escape(l.Text))
		}
		if sec.More > 0 {
			fmt.Fprintf(&b, "\n_and %d more_", sec.More)
		}
		blocks = append(blocks, slackapi.NewSectionBlock(slackapi.NewTextBlockObject(slackapi.MarkdownType,
			notifiers.Truncate(b.String(), 3000), false, false), nil, nil))
	}
	if link := n.Link(); link != "" {
		blocks = append(blocks, slackapi.NewActionBlock("vigil_actions", slackapi.NewButtonBlockElement("open_dashboard", n.Report.ID,
			slackapi.NewTextBlockObject(slackapi.PlainTextType, "Open Vigil", false, false)).WithURL(link)))
	}
	return slackapi.Attachment{
		Color:    colorNotice,
		Fallback: n.Headline(),
		Blocks:   slackapi.Blocks{BlockSet: blocks},
	}
}
