package sdk_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk"
	"github.com/vigilhq/vigil/sdk/retry"
)

// TestRealAdviceIsLoggedOnce: Vigil's advice about a declared monitor (the
// Hangfire default on an hourly job) is logged at declaration, once,
// however often the set is declared and the monitor pinged; a monitor
// without advice logs nothing.
func TestRealAdviceIsLoggedOnce(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, b *realBundle) {
		ctx := context.Background()
		hourly := sdk.MonitorSpec{Slug: "hourly-sync", Schedule: sdk.Cron("0 * * * *", ""),
			RetryPolicy: sdk.RetrySpec(retry.HangfireDefault())}
		daily := sdk.MonitorSpec{Slug: "daily-report", Schedule: sdk.Cron("0 6 * * *", "")}
		declared, err := b.client.Declare(ctx, "app", []sdk.MonitorSpec{hourly, daily})
		require.NoError(t, err)
		require.Len(t, declared[0].Warnings, 1)
		require.True(t, strings.HasPrefix(declared[0].Warnings[0], "retry_policy: the retries of one run may take up to 4h44m"), declared[0].Warnings[0])
		require.Empty(t, declared[1].Warnings)
		require.Equal(t, declared[0].Warnings, b.v.Monitor(t, "hourly-sync").Warnings, "the API's warnings")

		logged := func() []string {
			var out []string
			for _, line := range strings.Split(b.log.String(), "\n") {
				if strings.Contains(line, "settings call for a change") {
					out = append(out, line)
				}
			}
			return out
		}
		lines := logged()
		require.Len(t, lines, 1, b.log.String())
		require.Contains(t, lines[0], "level=WARN")
		require.Contains(t, lines[0], `monitor="slug hourly-sync"`)
		require.Contains(t, lines[0], "retry_policy: the retries of one run may take up to 4h44m")

		// Declared again and pinged (the answer to each ping carries the
		// same advice): still logged once.
		_, err = b.client.Declare(ctx, "app", []sdk.MonitorSpec{hourly, daily})
		require.NoError(t, err)
		for _, d := range declared {
			require.NoError(t, b.client.Run(ctx, d.Monitor(), func(context.Context) error { return nil }))
		}
		require.Len(t, logged(), 1, b.log.String())

		// A client that never declared hears the advice from the pings.
		other := sdk.New(b.v.URL, sdk.WithLogger(slog.New(slog.NewTextHandler(b.log, nil))))
		require.NoError(t, other.Ping(ctx, sdk.Key(declared[0].PingKey), sdk.KindStart, nil))
		require.NoError(t, other.Ping(ctx, sdk.Key(declared[0].PingKey), sdk.KindSuccess, nil))
		require.Len(t, logged(), 2, b.log.String())
		require.Contains(t, logged()[1], `monitor="key `)
	})
}
