package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// TestMonitorPageUptimeStrip: the monitor page shows 90 days, one cell
// each, coloured and labelled in words, rendered by the server (no script
// needed). Yesterday's one run succeeded in 30 s; today's failed for good
// an hour ago, and its incident is still open.
func TestMonitorPageUptimeStrip(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		m := b.monitor(t, b.project.ID, "etl")
		now := b.clock.now() // Monday 2026-03-02 09:00 UTC
		yesterday := now.Add(-23 * time.Hour)
		before := yesterday.Add(-48 * time.Hour) // Friday 2026-02-27
		var batch []*monitors.PingRecordParams
		for _, p := range []monitors.Ping{
			{Kind: monitors.PingStart, At: before, RID: "z"},
			{Kind: monitors.PingSuccess, At: before.Add(10 * time.Second), RID: "z"},
			{Kind: monitors.PingStart, At: yesterday, RID: "a"},
			{Kind: monitors.PingSuccess, At: yesterday.Add(30 * time.Second), RID: "a"},
			{Kind: monitors.PingFail, At: now.Add(-time.Hour)},
		} {
			batch = append(batch, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: p})
		}
		res, err := b.store.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: batch})
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}

		c := b.signIn(t, "ada@example.com", b.project.ID)
		body := c.get("/monitors/" + m.ID).body
		require.Equal(t, 90, strings.Count(body, `<li class="uptime-cell`), "one cell a day")
		for _, want := range []string{
			`<li class="uptime-cell uptime-none" title="2026-02-28: no occurrences"`,
			`<li class="uptime-cell uptime-ok" title="2026-03-01: 1 of 1 on time (100.0%); runs p50 30s, p95 30s"`,
			`<li class="uptime-cell uptime-bad" title="2026-03-02: 0 of 1 on time (0.0%); failed: 1, 1h0m0s"`,
			`<span class="sr-only">2026-03-02: 0 of 1 on time (0.0%); failed: 1, 1h0m0s</span>`,
			`<dt>7 days</dt><dd>2 of 3 on time (66.7%); failed: 1, 1h0m0s; runs p50 10s, p95 30s</dd>`,
			// The run durations: a bar a day with runs, and their trend,
			// 10 s on the 27th to 30 s on the 1st: 10 s a day.
			`<title>2026-02-27: 1 run, median 10s, 95th percentile 10s</title>`,
			`<title>2026-03-01: 1 run, median 30s, 95th percentile 30s</title>`,
			"median run time grows 10s a day", "up to 30s",
			`<line class="trend" x1="865" y1="66.66666666666667" x2="885" y2="0"/>`, // from the 27th (day 86) to the 1st (day 88)
			`<dt>90 days</dt>`,
		} {
			require.Contains(t, body, want)
		}
		require.Equal(t, 2, strings.Count(body, `<rect class="p50"`), "two days with runs")
		require.Less(t, strings.Index(body, "2026-03-01:"), strings.Index(body, "2026-03-02:"), "oldest first")
	})
}
