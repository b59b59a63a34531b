package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// BenchMonitors is how many monitors BenchmarkPingRecordBatch spreads its
// pings over.
const BenchMonitors = 10000

// BenchmarkPingRecordBatch measures the ingest hot path: batches of 1, 100
// and 500 success pings, each to a different monitor, over BenchMonitors
// monitors, reported in pings/s. newStore returns an empty store.
func BenchmarkPingRecordBatch(b *testing.B, newStore func(tb testing.TB) monitors.Store) {
	s := newStore(b)
	prj := MustProject(b, s)
	keys := make([]string, BenchMonitors)
	for start := 0; start < BenchMonitors; start += 500 {
		var pings []*monitors.PingRecordParams
		for i := start; i < min(start+500, BenchMonitors); i++ {
			slug := fmt.Sprintf("job-%05d", i)
			m := NewMonitor("", slug, func(m *monitors.Monitor) { m.Schedule.EverySeconds = 60 })
			keys[i] = m.PingKey
			pings = append(pings, &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true, NewMonitor: m,
				Ping: monitors.Ping{Kind: monitors.PingSuccess, At: T0}})
		}
		MustRecord(b, s, pings...)
	}

	at := T0
	next := 0
	for _, size := range []int{1, 100, 500} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			n := 0
			for b.Loop() {
				at = at.Add(time.Second)
				pings := make([]*monitors.PingRecordParams, size)
				for i := range pings {
					pings[i] = &monitors.PingRecordParams{PingKey: keys[next], Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at,
						RemoteAddr: "127.0.0.1", UserAgent: "bench"}}
					next = (next + 1) % BenchMonitors
				}
				res, err := s.PingRecordBatch(b.Context(), &monitors.PingRecordBatchParams{Pings: pings})
				require.NoError(b, err)
				for _, r := range res {
					require.NoError(b, r.Err)
				}
				n += size
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "pings/s")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(max(n/size, 1))/1000, "ms/batch")
		})
	}
}
