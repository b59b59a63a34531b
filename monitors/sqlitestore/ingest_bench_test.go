package sqlitestore_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// BenchmarkIngestBatch measures what bounds SQLite's ingest: the one
// writer's time per batch of success pings, as vigil bench ingest sends
// them (2,000 monitors, batches of 32, each ping to another monitor), with
// the store's checkpointer running as in vigil serve; size=8 is a batch of
// the size vigil bench ingest's half-rate phase writes, where a batch's
// fixed cost (its statements, its commit) is most of a ping's. order=seq pings the
// monitors in the order they were created, as vigil bench ingest does;
// order=random picks each batch's monitors at random. frames/batch is
// measured apart, with checkpoints off: the pages each batch writes to the
// WAL at its commit. p99-ms/batch and max-ms/batch show the batches that
// waited, such as for a checkpoint that holds writers back.
func BenchmarkIngestBatch(b *testing.B) {
	const monitorsN = 2000
	for _, order := range []string{"seq", "random"} {
		for _, size := range []int{32, 8, 13, 53} {
			for _, frames := range []bool{false, true} {
				name := "order=" + order
				if size != 32 {
					name += fmt.Sprintf("/size=%d", size)
				}
				if frames {
					name += "/frames"
				}
				b.Run(name, func(b *testing.B) {
					opts := sqlitestore.Options{}
					if frames {
						opts.CheckpointInterval = -1
					}
					s, err := sqlitestore.Open(b.Context(), testdb.SQLitePath(b), opts)
					require.NoError(b, err)
					defer s.Close()
					prj := storetest.MustProject(b, s)
					keys := make([]string, monitorsN)
					for i := range keys {
						m := storetest.NewMonitor(prj.ID, fmt.Sprintf("bench-%05d", i), func(m *monitors.Monitor) { m.Schedule.EverySeconds = 60 })
						require.NoError(b, s.MonitorInsert(b.Context(), m))
						keys[i] = m.PingKey
					}
					rng := rand.New(rand.NewPCG(1, 2))
					at, next := storetest.T0, 0
					batch := func() {
						at = at.Add(time.Millisecond)
						pings := make([]*monitors.PingRecordParams, size)
						for i := range pings {
							k := keys[next]
							if order == "seq" {
								next = (next + 1) % monitorsN
							} else {
								k = keys[rng.IntN(monitorsN)]
							}
							pings[i] = &monitors.PingRecordParams{PingKey: k, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at,
								RemoteAddr: "127.0.0.1", UserAgent: "Go-http-client/1.1"}}
						}
						res, err := s.PingRecordBatch(b.Context(), &monitors.PingRecordBatchParams{Pings: pings})
						require.NoError(b, err)
						for _, r := range res {
							require.NoError(b, r.Err)
						}
					}
					// Warm up: every monitor pinged a few times.
					for range 4 * monitorsN / size {
						batch()
					}
					wal := sqlitestore.Path(s) + "-wal"
					if frames {
						_, err = sqlitestore.Writer(s).ExecContext(b.Context(), "PRAGMA wal_checkpoint(TRUNCATE)")
						require.NoError(b, err)
					}
					st0, err := os.Stat(wal)
					require.NoError(b, err)
					n, cpu0 := 0, processCPU()
					var lat []time.Duration
					for b.Loop() {
						t0 := time.Now()
						batch()
						lat = append(lat, time.Since(t0))
						n++
					}
					cpu := processCPU() - cpu0
					if frames {
						st1, err := os.Stat(wal)
						require.NoError(b, err)
						b.ReportMetric(float64(st1.Size()-st0.Size())/(4096+24)/float64(n), "frames/batch")
						if dir := os.Getenv("SQLITE_BENCH_DUMP"); dir != "" {
							for _, f := range []string{"", "-wal"} {
								data, err := os.ReadFile(sqlitestore.Path(s) + f)
								require.NoError(b, err)
								require.NoError(b, os.WriteFile(dir+"/"+order+".db"+f, data, 0o600))
							}
						}
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(n*size), "µs/ping")
					b.ReportMetric(float64(cpu.Microseconds())/float64(n*size), "cpu-µs/ping")
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms/batch")
					b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms/batch")
				})
			}
		}
	}
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
