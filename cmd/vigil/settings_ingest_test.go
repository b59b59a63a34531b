package main

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/server"
)

func TestIngestSettings(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string, args ...string) (server.Config, error) {
		var cfg server.Config
		e := &cmdEnv{getenv: func(k string) string { return env[k] }}
		err := parseSettings(e, newFlagSet(e), serverSettings(&cfg), args)
		return cfg, err
	}

	cfg, err := parse(nil)
	require.NoError(t, err)
	require.Equal(t, ingest.Config{BodyLimit: 100_000, BatchSize: 500, BatchWindow: 2 * time.Millisecond,
		RateLimit: 5, RateBurst: 50, FailureLimit: 1, FailureBurst: 60}, cfg.Ingest, "the documented defaults")

	cfg, err = parse(map[string]string{
		"VIGIL_PING_BODY_LIMIT":     "1MiB",
		"VIGIL_INGEST_BATCH_SIZE":   "1",
		"VIGIL_INGEST_BATCH_WINDOW": "0",
		"VIGIL_PING_RATE_LIMIT":     "0.5",
		"VIGIL_PING_RATE_BURST":     "3",
		"VIGIL_TRUSTED_PROXIES":     "10.0.0.0/8, 192.168.1.7,::1",
		"VIGIL_PING_FAILURE_LIMIT":  "-1",
	}, "--ping-rate-limit", "0", "--ping-failure-burst", "7")
	require.NoError(t, err)
	require.Equal(t, ingest.Config{BodyLimit: 1 << 20, BatchSize: 1, BatchWindow: 0, RateLimit: 0, RateBurst: 3,
		FailureLimit: -1, FailureBurst: 7, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.7/32"),
			netip.MustParsePrefix("::1/128")}}, cfg.Ingest)

	_, err = parse(map[string]string{
		"VIGIL_PING_BODY_LIMIT":     "lots",
		"VIGIL_INGEST_BATCH_SIZE":   "0",
		"VIGIL_INGEST_BATCH_WINDOW": "5s",
		"VIGIL_PING_RATE_LIMIT":     "-1",
		"VIGIL_PING_RATE_BURST":     "0",
		"VIGIL_TRUSTED_PROXIES":     "10.0.0.0/33",
		"VIGIL_PING_FAILURE_LIMIT":  "-2",
		"VIGIL_PING_FAILURE_BURST":  "0",
	})
	for _, name := range []string{"VIGIL_PING_BODY_LIMIT", "VIGIL_INGEST_BATCH_SIZE", "VIGIL_INGEST_BATCH_WINDOW",
		"VIGIL_PING_RATE_LIMIT", "VIGIL_PING_RATE_BURST", "VIGIL_TRUSTED_PROXIES", "VIGIL_PING_FAILURE_LIMIT", "VIGIL_PING_FAILURE_BURST"} {
		require.ErrorContains(t, err, name)
	}
	_, err = parse(map[string]string{"VIGIL_PING_BODY_LIMIT": "20MiB"})
	require.ErrorContains(t, err, "between 1 and 10485760 bytes", "at most the hard limit")
}
