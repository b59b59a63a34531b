package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/server"
)

// TestProductionSettings checks the settings of shutdown and of the
// database: the documented defaults, the environment and flags, and every
// bad value named.
func TestProductionSettings(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string, args ...string) (server.Config, error) {
		var cfg server.Config
		e := &cmdEnv{getenv: func(k string) string { return env[k] }}
		err := parseSettings(e, newFlagSet(e), serverSettings(&cfg), args)
		return cfg, err
	}
	cfg, err := parse(nil)
	require.NoError(t, err)
	require.Equal(t, 20*time.Second, cfg.ShutdownTimeout, "exits within 25 s of SIGTERM")
	require.Equal(t, server.DatabaseSettings{}, cfg.Database, "pool sized from the parts; async commit refused")

	cfg, err = parse(map[string]string{"VIGIL_SHUTDOWN_TIMEOUT": "5s", "VIGIL_DB_MAX_CONNS": "12"}, "--allow-async-commit")
	require.NoError(t, err)
	require.Equal(t, 5*time.Second, cfg.ShutdownTimeout)
	require.Equal(t, server.DatabaseSettings{MaxConns: 12, AllowAsyncCommit: true}, cfg.Database)

	_, err = parse(map[string]string{"VIGIL_SHUTDOWN_TIMEOUT": "0s", "VIGIL_DB_MAX_CONNS": "-1", "VIGIL_ALLOW_ASYNC_COMMIT": "maybe"})
	for _, name := range []string{"VIGIL_SHUTDOWN_TIMEOUT", "VIGIL_DB_MAX_CONNS", "VIGIL_ALLOW_ASYNC_COMMIT"} {
		require.ErrorContains(t, err, name)
	}
}
