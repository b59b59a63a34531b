package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vigilhq/vigil/ingest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// BenchmarkPing measures what a success ping costs Vigil's process from
// its handler on: the ping URL served by the ingest handler (no network),
// the group-commit writer, the planning layer and the store, with 64
// requests at once over 2,000 monitors, as "vigil bench ingest" loads it.
// cpu-µs/ping is the process's CPU (for PostgreSQL, the client's share).
func BenchmarkPing(b *testing.B) {
	for name, open := range map[string]func(testing.TB) monitors.Store{
		"sqlite":   func(tb testing.TB) monitors.Store { return testdb.SQLite(tb) },
		"postgres": func(tb testing.TB) monitors.Store { return testdb.Postgres(tb) },
	} {
		b.Run(name, func(b *testing.B) { benchmarkPing(b, open(b)) })
	}
}

func benchmarkPing(b *testing.B, store monitors.Store) {
	const monitorCount = 2000
	prj := storetest.MustProject(b, store)
	pingKeys := make([]string, monitorCount)
	for i := range pingKeys {
		pingKeys[i] = storetest.MustMonitor(b, store, prj.ID, fmt.Sprintf("job-%05d", i), func(m *monitors.Monitor) {
			m.Schedule.EverySeconds, m.PingKey = 60, keys.NewPingKey()
		}).PingKey
	}
	svc := ingest.New(ingest.Config{Store: store, Registerer: prometheus.NewRegistry(), Logger: testdb.Logger(b), RateLimit: -1})
	e := echo.New()
	svc.Mount(e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		svc.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	var next, failed atomic.Uint64
	ping := func() {
		req := httptest.NewRequest(http.MethodGet, "/ping/"+pingKeys[next.Add(1)%monitorCount], nil)
		req.RemoteAddr = "127.0.0.1:40000"
		req.Header.Set("User-Agent", "bench")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && failed.Add(1) == 1 {
			b.Errorf("ping: %d %s", rec.Code, rec.Body.String())
		}
	}
	for range 2 * monitorCount {
		ping()
	}
	b.SetParallelism(32) // 64 at once on 2 cores
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			ping()
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/ping")
}

// processCPU returns the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
