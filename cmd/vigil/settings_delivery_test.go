package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/server"
)

func parseDelivery(t *testing.T, env map[string]string, args ...string) (server.Config, error) {
	t.Helper()
	var cfg server.Config
	e := &cmdEnv{getenv: func(k string) string { return env[k] }}
	err := parseSettings(e, newFlagSet(e), serverSettings(&cfg), args)
	return cfg, err
}

func TestDeliverySettings(t *testing.T) {
	t.Parallel()
	cfg, err := parseDelivery(t, nil)
	require.NoError(t, err)
	d := cfg.Delivery
	require.Empty(t, d.SMTP.Host, "no SMTP server unless configured")
	require.Equal(t, "starttls", d.SMTP.TLS)
	require.Zero(t, d.SMTP.Port)
	require.Equal(t, 24*time.Hour, d.RetryWindow)
	require.Equal(t, 30*time.Second, d.Timeout)
	require.Zero(t, d.ReminderInterval)
	require.Equal(t, 20, d.Workers)

	pwFile := filepath.Join(t.TempDir(), "smtp-password")
	require.NoError(t, os.WriteFile(pwFile, []byte("s3cret-from-file\n"), 0o600))
	cfg, err = parseDelivery(t, map[string]string{
		"VIGIL_SMTP_HOST": "smtp.example.com", "VIGIL_SMTP_PORT": "2525", "VIGIL_SMTP_USERNAME": "vigil",
		"VIGIL_SMTP_PASSWORD_FILE": pwFile, "VIGIL_SMTP_FROM": "Vigil <vigil@example.com>", "VIGIL_SMTP_TLS": "tls",
		"VIGIL_DELIVERY_RETRY_WINDOW": "6h", "VIGIL_DELIVERY_TIMEOUT": "10s",
		"VIGIL_DELIVERY_REMINDER_INTERVAL": "4h", "VIGIL_DELIVERY_WORKERS": "3",
	}, "--smtp-from", "ops@example.com")
	require.NoError(t, err)
	d = cfg.Delivery
	require.Equal(t, "smtp.example.com", d.SMTP.Host)
	require.Equal(t, 2525, d.SMTP.Port)
	require.Equal(t, "vigil", d.SMTP.Username)
	require.Equal(t, "s3cret-from-file", d.SMTP.Password, "read from the file, without its newline")
	require.Equal(t, "ops@example.com", d.SMTP.From, "a flag wins")
	require.Equal(t, "tls", d.SMTP.TLS)
	require.Equal(t, 6*time.Hour, d.RetryWindow)
	require.Equal(t, 10*time.Second, d.Timeout)
	require.Equal(t, 4*time.Hour, d.ReminderInterval)
	require.Equal(t, 3, d.Workers)
	require.NoError(t, cfg.Delivery.Validate())

	_, err = parseDelivery(t, map[string]string{"VIGIL_SMTP_PASSWORD": "inline-secret", "VIGIL_SMTP_PASSWORD_FILE": pwFile})
	require.ErrorContains(t, err, "not both")
	require.NotContains(t, err.Error(), "inline-secret")

	_, err = parseDelivery(t, map[string]string{"VIGIL_SMTP_TLS": "maybe", "VIGIL_DELIVERY_REMINDER_INTERVAL": "5s",
		"VIGIL_SMTP_PORT": "70000", "VIGIL_SMTP_PASSWORD_FILE": filepath.Join(t.TempDir(), "missing")})
	for _, want := range []string{"VIGIL_SMTP_TLS", "VIGIL_DELIVERY_REMINDER_INTERVAL", "VIGIL_SMTP_PORT", "VIGIL_SMTP_PASSWORD_FILE"} {
		require.ErrorContains(t, err, want)
	}

	cfg, err = parseDelivery(t, map[string]string{"VIGIL_SMTP_HOST": "smtp.example.com"})
	require.NoError(t, err)
	require.ErrorContains(t, cfg.Validate(), "smtp from", "a server needs a sender")
}
