package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/server"
)

func TestHistoryAndLimitSettings(t *testing.T) {
	t.Parallel()
	parse := func(env map[string]string, args ...string) (server.Config, error) {
		var cfg server.Config
		e := &cmdEnv{getenv: func(k string) string { return env[k] }}
		err := parseSettings(e, newFlagSet(e), serverSettings(&cfg), args)
		return cfg, err
	}
	cfg, err := parse(nil)
	require.NoError(t, err)
	require.Equal(t, 400*24*time.Hour, cfg.KeepHistory, "the documented default")
	require.Equal(t, 10_000, cfg.MaxMonitorsPerProject)

	cfg, err = parse(map[string]string{"VIGIL_KEEP_HISTORY": "30d", "VIGIL_MAX_MONITORS_PER_PROJECT": "50"}, "--keep-history", "72h")
	require.NoError(t, err)
	require.Equal(t, 72*time.Hour, cfg.KeepHistory, "a flag wins")
	require.Equal(t, 50, cfg.MaxMonitorsPerProject)
	cfg, err = parse(map[string]string{"VIGIL_KEEP_HISTORY": "30d"})
	require.NoError(t, err)
	require.Equal(t, 30*24*time.Hour, cfg.KeepHistory)

	for _, bad := range []map[string]string{
		{"VIGIL_KEEP_HISTORY": "forever"},
		{"VIGIL_KEEP_HISTORY": "-3d"},
		{"VIGIL_KEEP_HISTORY": "10m"},
		{"VIGIL_KEEP_HISTORY": "99999d"},
		{"VIGIL_MAX_MONITORS_PER_PROJECT": "0"},
		{"VIGIL_MAX_MONITORS_PER_PROJECT": "many"},
	} {
		_, err := parse(bad)
		for name := range bad {
			require.ErrorContains(t, err, name)
		}
	}
}
