package sqlitestore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// TestChunks checks that every row count splits into prepared statement
// sizes, largest first, and that a batch of up to 64 rows takes at most two
// statements: each statement run costs the writer the same whatever its
// rows.
func TestChunks(t *testing.T) {
	t.Parallel()
	sizes := sqlitestore.BulkSizes()
	for n := 0; n <= 300; n++ {
		c := sqlitestore.Chunks(n)
		sum := 0
		for _, k := range c {
			require.Contains(t, sizes, k, "n=%d: %v", n, c)
			sum += k
		}
		require.Equal(t, n, sum, "n=%d: %v", n, c)
		require.True(t, slices.IsSortedFunc(c, func(a, b int) int { return b - a }), "n=%d: largest first: %v", n, c)
		if n <= 64 {
			require.LessOrEqual(t, len(c), 2, "n=%d: %v", n, c)
		}
	}
}

// TestBatchOfEverySize writes batches of every size a chunking can make
// (1 to 70 pings, and 129), each ping to another monitor, and checks that
// every ping is stored with the ID its result gives, and every monitor's
// state and run are written.
func TestBatchOfEverySize(t *testing.T) {
	t.Parallel()
	s, ctx := testdb.SQLite(t), context.Background()
	prj := storetest.MustProject(t, s)
	const monitorsN = 130
	ms := make([]*monitors.Monitor, monitorsN)
	for i := range ms {
		ms[i] = storetest.MustMonitor(t, s, prj.ID, fmt.Sprintf("m%03d", i), func(m *monitors.Monitor) { m.Schedule.EverySeconds = 60 })
	}
	at := storetest.T0
	sizes := make([]int, 0, 71)
	for n := 1; n <= 70; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 129)
	for _, n := range sizes {
		at = at.Add(time.Second)
		pings := make([]*monitors.PingRecordParams, n)
		for i := range pings {
			pings[i] = &monitors.PingRecordParams{PingKey: ms[i].PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at,
				RID: fmt.Sprintf("b%d-%d", n, i)}}
		}
		res, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: pings})
		require.NoError(t, err, "batch of %d", n)
		require.Len(t, res, n)
		for i, r := range res {
			require.NoError(t, r.Err, "batch of %d, ping %d", n, i)
			got, err := s.PingList(ctx, &monitors.HistoryListParams{ProjectID: prj.ID, MonitorID: ms[i].ID, Limit: 1})
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, r.PingID, got[0].ID, "batch of %d, ping %d: its ID", n, i)
			require.Equal(t, pings[i].Ping.RID, got[0].RID, "batch of %d, ping %d", n, i)
			m, err := s.MonitorGet(ctx, prj.ID, ms[i].ID)
			require.NoError(t, err)
			require.True(t, at.Equal(m.State.LastPingAt), "batch of %d, monitor %d: its state", n, i)
			runs, err := s.RunList(ctx, &monitors.HistoryListParams{ProjectID: prj.ID, MonitorID: ms[i].ID, Limit: 1})
			require.NoError(t, err)
			require.Len(t, runs, 1)
			require.Equal(t, pings[i].Ping.RID, runs[0].RID, "batch of %d, monitor %d: its run", n, i)
		}
	}
}
