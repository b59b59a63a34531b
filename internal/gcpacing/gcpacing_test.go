package gcpacing_test

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/gcpacing"
)

func TestApply(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}

	t.Run("GOGCSetWins", func(t *testing.T) {
		debug.SetGCPercent(150) // as the runtime would have applied GOGC=150
		require.Zero(t, gcpacing.Apply(env(map[string]string{"GOGC": "150"})))
		require.Equal(t, 150, debug.SetGCPercent(100))
		// GOGC=off too: the runtime has turned the collector off.
		debug.SetGCPercent(-1)
		require.Zero(t, gcpacing.Apply(env(map[string]string{"GOGC": "off"})))
		require.Equal(t, -1, debug.SetGCPercent(100))
	})
	t.Run("Default", func(t *testing.T) {
		require.Equal(t, gcpacing.PercentDefault, gcpacing.Apply(env(map[string]string{"GOMEMLIMIT": "100MiB"})))
		require.Equal(t, gcpacing.PercentDefault, debug.SetGCPercent(100))
	})
}
