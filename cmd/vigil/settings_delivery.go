package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/notifiers/email"
)

// deliverySettings lists the settings of durable delivery of notifications
// and of the SMTP server that email channels send through.
func deliverySettings(c *delivery.Config) []setting {
	var passwordFromFile bool
	return []setting{
		{"VIGIL_SMTP_HOST", "smtp-host", "", "SMTP server that email channels send through (empty: email channels cannot send)", stringSetting(&c.SMTP.Host)},
		{"VIGIL_SMTP_PORT", "smtp-port", "", "SMTP port (default: 587 for starttls, 465 for tls, 25 for none)", portSetting(&c.SMTP.Port)},
		{"VIGIL_SMTP_USERNAME", "smtp-username", "", "SMTP user name, when the server wants one", stringSetting(&c.SMTP.Username)},
		{"VIGIL_SMTP_PASSWORD", "smtp-password", "", "SMTP password (prefer VIGIL_SMTP_PASSWORD_FILE)", passwordSetting(&c.SMTP.Password, &passwordFromFile, false)},
		{"VIGIL_SMTP_PASSWORD_FILE", "smtp-password-file", "", "file that holds the SMTP password", passwordSetting(&c.SMTP.Password, &passwordFromFile, true)},
		{"VIGIL_SMTP_FROM", "smtp-from", "", "sender of notification e-mail, such as \"Vigil <vigil@example.com>\"", stringSetting(&c.SMTP.From)},
		{"VIGIL_SMTP_TLS", "smtp-tls", email.TLSStartTLS, "starttls (required), tls (from the first byte) or none", smtpTLSSetting(&c.SMTP.TLS)},
		{"VIGIL_DELIVERY_RETRY_WINDOW", "delivery-retry-window", "24h", "how long after its event a notification is retried before it counts as failed", durationSetting(&c.RetryWindow, time.Minute, 30*24*time.Hour)},
		{"VIGIL_DELIVERY_TIMEOUT", "delivery-timeout", "30s", "time one delivery attempt may take", durationSetting(&c.Timeout, time.Second, 10*time.Minute)},
		{"VIGIL_DELIVERY_REMINDER_INTERVAL", "delivery-reminder-interval", "0", "re-alert about an incident that stays open this long, and again after each interval (0: never)", reminderSetting(&c.ReminderInterval)},
		{"VIGIL_DELIVERY_WORKERS", "delivery-workers", strconv.Itoa(delivery.WorkersDefault), "notifications one process sends at once", intSetting(&c.Workers, 1, 1000)},
	}
}

// portSetting parses a TCP port; empty or 0 leaves the default of the TLS
// mode.
func portSetting(p *int) func(string) error {
	return func(s string) error {
		if s == "" {
			*p = 0
			return nil
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 65535 {
			return fmt.Errorf("%q is not a port between 1 and 65535", s)
		}
		*p = v
		return nil
	}
}

func smtpTLSSetting(p *string) func(string) error {
	return func(s string) error {
		switch s {
		case email.TLSStartTLS, email.TLSImplicit, email.TLSNone:
			*p = s
			return nil
		}
		return fmt.Errorf("%q is not starttls, tls or none", s)
	}
}

// passwordSetting sets the password from its value, or from the file its
// value names (fromFile), and refuses both at once. The password itself is
// never part of an error.
func passwordSetting(p *string, setByFile *bool, fromFile bool) func(string) error {
	return func(s string) error {
		if s == "" {
			return nil // the default: nothing set
		}
		if *p != "" && *setByFile != fromFile {
			return fmt.Errorf("set VIGIL_SMTP_PASSWORD or VIGIL_SMTP_PASSWORD_FILE, not both")
		}
		if !fromFile {
			*p = s
			return nil
		}
		b, err := os.ReadFile(s)
		if err != nil {
			return fmt.Errorf("read the SMTP password: %w", err)
		}
		pw := strings.TrimRight(string(b), "\r\n")
		if pw == "" {
			return fmt.Errorf("the SMTP password file %s is empty", s)
		}
		*p, *setByFile = pw, true
		return nil
	}
}

// reminderSetting parses the reminder interval: 0 for none, or at least a
// minute.
func reminderSetting(p *time.Duration) func(string) error {
	return func(s string) error {
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 || (v > 0 && v < time.Minute) || v > 30*24*time.Hour {
			return fmt.Errorf("%q is not 0 or a duration (such as 30m or 4h) between 1m and 720h", s)
		}
		*p = v
		return nil
	}
}
