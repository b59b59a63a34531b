package monitors_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func TestRunTrend(t *testing.T) {
	day := func(runs int, p50 time.Duration) monitors.UptimeDay {
		return monitors.UptimeDay{UptimeStats: monitors.UptimeStats{Runs: runs, RunP50: p50}}
	}
	// Medians 10 s, (none), 14 s, 16 s on days 0, 2, 3: the line through
	// them rises 2 s a day (x̄ = 5/3, ȳ = 40/3; Σ(x-x̄)(y-ȳ) = 28/3,
	// Σ(x-x̄)² = 14/3).
	u := &monitors.Uptime{Days: []monitors.UptimeDay{day(1, 10*time.Second), day(0, 0), day(2, 14*time.Second), day(1, 16*time.Second)}}
	first, perDay, ok := u.RunTrend()
	require.True(t, ok)
	require.Equal(t, 2*time.Second, perDay)
	require.Equal(t, 10*time.Second, first, "ȳ - slope·x̄ = 40/3 - 2·5/3")

	u = &monitors.Uptime{Days: []monitors.UptimeDay{day(1, 10*time.Second), day(0, 0)}}
	_, _, ok = u.RunTrend()
	require.False(t, ok, "one day with runs has no trend")
}
