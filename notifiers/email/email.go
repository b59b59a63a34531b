// Package email sends Vigil notifications by e-mail through the operator's
// SMTP server, as a message with a plain-text and an HTML part.
//
// One message goes to all the channel's addresses, so a channel is one
// delivery: if the server refuses one address for good, the attempt fails
// permanently and the error names the address, rather than some addresses
// getting the alert and a retry sending it to them again.
//
// Messages about one incident share a thread: the opening message has a
// Message-ID made from the incident id, and later ones refer to it.
package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/mail"
	"net/textproto"
	"strings"

	gomail "github.com/wneessen/go-mail"

	"github.com/vigilhq/vigil/notifiers"
)

// Kind is the channel kind this package implements.
const Kind = "email"

// RecipientsMax is how many addresses one channel may list.
const RecipientsMax = 50

// TLS modes of an SMTP server.
const (
	TLSStartTLS = "starttls" // plain connection upgraded with STARTTLS, which is required
	TLSImplicit = "tls"      // TLS from the first byte (SMTPS, usually port 465)
	TLSNone     = "none"     // no encryption at all
)

// SMTPConfig is the operator's SMTP server. Every e-mail channel uses it.
type SMTPConfig struct {
	Host string
	// Port defaults to 587 for starttls, 465 for tls and 25 for none.
	Port int
	// Username and Password, when set, authenticate with the best
	// mechanism the server offers. Without TLS only challenge-response
	// mechanisms (CRAM-MD5, SCRAM) are used: a password is never sent in
	// the clear.
	Username string
	Password string
	// From is the sender, "Vigil <vigil@example.com>" or a bare address.
	From string
	// TLS is "starttls" (the default), "tls" or "none".
	TLS string
	// TLSConfig is optional, for a private CA (RootCAs) or a client
	// certificate. ServerName defaults to Host.
	TLSConfig *tls.Config
}

// port returns the configured port or the default for the TLS mode.
func (c *SMTPConfig) port() int {
	if c.Port != 0 {
		return c.Port
	}
	switch c.TLS {
	case TLSImplicit:
		return 465
	case TLSNone:
		return 25
	}
	return 587
}

// Validate checks the server configuration, naming each field at fault.
func (c *SMTPConfig) Validate() error {
	var errs []error
	if strings.TrimSpace(c.Host) == "" {
		errs = append(errs, errors.New("smtp host: must be set"))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("smtp port: %d is not between 1 and 65535", c.Port))
	}
	switch c.TLS {
	case "", TLSStartTLS, TLSImplicit, TLSNone:
	default:
		errs = append(errs, fmt.Errorf("smtp tls: %q is not one of starttls, tls, none", c.TLS))
	}
	if c.Password != "" && c.Username == "" {
		errs = append(errs, errors.New("smtp username: must be set with a password"))
	}
	if strings.TrimSpace(c.From) == "" {
		errs = append(errs, errors.New("smtp from: must be set"))
	} else if _, err := mail.ParseAddress(c.From); err != nil {
		errs = append(errs, fmt.Errorf("smtp from: %q is not an e-mail address", c.From))
	}
	return errors.Join(errs...)
}

// Config is an e-mail channel's configuration (PROTOCOL §2).
type Config struct {
	// To lists the addresses that get every notification of the channel.
	To []string `json:"to"`
}

// Validate checks c, naming the key at fault.
func (c *Config) Validate() error {
	if len(c.To) == 0 {
		return errors.New("to: must list at least one address")
	}
	if len(c.To) > RecipientsMax {
		return fmt.Errorf("to: must list at most %d addresses, not %d", RecipientsMax, len(c.To))
	}
	var errs []error
	seen := make(map[string]bool, len(c.To))
	for i, raw := range c.To {
		addr, err := mail.ParseAddress(raw)
		if err != nil || strings.ContainsAny(raw, ",;") {
			errs = append(errs, fmt.Errorf("to[%d]: %q is not an e-mail address", i, raw))
			continue
		}
		key := strings.ToLower(addr.Address)
		if seen[key] {
			errs = append(errs, fmt.Errorf("to[%d]: %q is listed twice", i, addr.Address))
		}
		seen[key] = true
	}
	return errors.Join(errs...)
}

// Notifier sends e-mail to one list of addresses.
type Notifier struct {
	cfg    Config
	server SMTPConfig
	from   *mail.Address
	opts   notifiers.Options
}

var _ notifiers.Notifier = (*Notifier)(nil)

// New returns a Notifier that sends to cfg.To through server. Of the
// options, only the logger and the timeout apply.
func New(cfg Config, server SMTPConfig, opts ...notifiers.Option) (*Notifier, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("email config: %w", err)
	}
	if err := server.Validate(); err != nil {
		return nil, fmt.Errorf("email server: %w", err)
	}
	from, err := mail.ParseAddress(server.From)
	if err != nil {
		return nil, fmt.Errorf("email server: parse from: %w", err)
	}
	return &Notifier{cfg: cfg, server: server, from: from, opts: notifiers.NewOptions(opts...)}, nil
}

// Notify sends one message to all the channel's addresses.
func (e *Notifier) Notify(ctx context.Context, n *notifiers.Notification) error {
	if err := n.Validate(); err != nil {
		return notifiers.Permanent(err)
	}
	ctx, cancel := notifiers.AttemptContext(ctx, e.opts.Timeout)
	defer cancel()

	msg, err := e.message(n)
	if err != nil {
		return notifiers.RedactError(notifiers.Permanent(fmt.Errorf("build e-mail: %w", err)), e.server.Password)
	}
	client, err := e.client()
	if err != nil {
		return notifiers.RedactError(notifiers.Permanent(fmt.Errorf("configure smtp client: %w", err)), e.server.Password)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		err = classify(notifiers.AttemptError(ctx, fmt.Errorf("send e-mail via %s:%d: %w", e.server.Host, e.server.port(), err)))
		return notifiers.RedactError(err, e.server.Password)
	}
	e.opts.LogSent(Kind, n)
	return nil
}

func (e *Notifier) client() (*gomail.Client, error) {
	s := e.server
	options := []gomail.Option{
		gomail.WithPort(s.port()),
		gomail.WithTimeout(e.opts.Timeout),
	}
	tlsConfig := &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	if s.TLSConfig != nil {
		tlsConfig = s.TLSConfig.Clone()
		if tlsConfig.ServerName == "" {
			tlsConfig.ServerName = s.Host
		}
	}
	switch s.TLS {
	case TLSImplicit:
		options = append(options, gomail.WithSSL(), gomail.WithTLSConfig(tlsConfig))
	case TLSNone:
		options = append(options, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		options = append(options, gomail.WithTLSPolicy(gomail.TLSMandatory), gomail.WithTLSConfig(tlsConfig))
	}
	if s.Username != "" {
		options = append(options,
			gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(s.Username),
			gomail.WithPassword(s.Password))
	}
	return gomail.NewClient(s.Host, options...)
}

// classify maps SMTP outcomes onto our retry classes: a 5xx reply is
// permanent, a 4xx reply and anything on the network are retryable.
func classify(err error) error {
	var sendErr *gomail.SendError
	if errors.As(err, &sendErr) {
		if sendErr.IsTemp() {
			return err
		}
		if code := sendErr.ErrorCode(); code >= 500 && code <= 599 {
			return notifiers.Permanent(err)
		}
		switch sendErr.Reason {
		case gomail.ErrGetSender, gomail.ErrGetRcpts, gomail.ErrNoUnencoded:
			return notifiers.Permanent(err)
		}
		return err
	}
	var reply *textproto.Error
	if errors.As(err, &reply) && reply.Code >= 500 && reply.Code <= 599 {
		return notifiers.Permanent(err) // for example 535 authentication failed
	}
	for _, config := range []error{gomail.ErrNoSupportedAuthDiscovered, gomail.ErrPlainAuthNotSupported,
		gomail.ErrLoginAuthNotSupported, gomail.ErrCramMD5AuthNotSupported} {
		if errors.Is(err, config) {
			return notifiers.Permanent(err)
		}
	}
	return err
}

// message builds the e-mail for n.
func (e *Notifier) message(n *notifiers.Notification) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	msg.FromMailAddress(e.from)
	if err := msg.To(e.cfg.To...); err != nil {
		return nil, fmt.Errorf("set recipients: %w", err)
	}
	msg.Subject("[Vigil] " + n.Headline())
	msg.SetDateWithValue(n.SentAt)
	msg.SetUserAgent("Vigil")
	domain := "vigil.invalid"
	if at := strings.LastIndex(e.from.Address, "@"); at >= 0 {
		domain = e.from.Address[at+1:]
	}
	msg.SetMessageIDWithValue(messageID(n, domain))
	// An incident's later messages reply to its first; a monitor event
	// stands alone.
	if n.Event != notifiers.EventOpened && n.Event != notifiers.EventTest && !n.Event.IsMonitorEvent() && !n.Event.IsReport() {
		first := "<" + threadID(n, domain) + ">"
		msg.SetGenHeader(gomail.HeaderInReplyTo, first)
		msg.SetGenHeader(gomail.HeaderReferences, first)
	}
	// RFC 3834: an automatic message; no out-of-office replies, please.
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	msg.SetGenHeader("X-Auto-Response-Suppress", "All")

	text, html, err := Render(n)
	if err != nil {
		return nil, err
	}
	msg.SetBodyString(gomail.TypeTextPlain, text)
	msg.AddAlternativeString(gomail.TypeTextHTML, html)
	return msg, nil
}

// threadID is the Message-ID of the message that opened the incident.
func threadID(n *notifiers.Notification, domain string) string {
	return "vigil." + idPart(n.DedupKey()) + ".opened@" + domain
}

// messageID is stable for the opening and the resolution of an incident
// (so a message sent twice is recognisably the same), and unique per send
// for updates, reminders and tests.
func messageID(n *notifiers.Notification, domain string) string {
	switch n.Event {
	case notifiers.EventOpened:
		return threadID(n, domain)
	case notifiers.EventResolved:
		return "vigil." + idPart(n.DedupKey()) + ".resolved@" + domain
	case notifiers.EventReportWeekly, notifiers.EventReportMonthly:
		// The same on every attempt at the report.
		return "vigil." + idPart(n.DedupKey()) + "@" + domain
	}
	return fmt.Sprintf("vigil.%s.%s.%d@%s", idPart(n.DedupKey()), strings.TrimPrefix(string(n.Event), "incident."),
		n.SentAt.UnixNano(), domain)
}

// idPart keeps only characters allowed in a Message-ID's left part.
func idPart(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '-'
	}, s)
}
