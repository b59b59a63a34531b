package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/kinds"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

// benchStore opens a store of dialect, with the delivery hook or without,
// and one project with a default webhook channel to url.
func benchStore(b *testing.B, dialect string, hook bool, url string) (monitors.Store, *monitors.Project, string) {
	b.Helper()
	ctx := context.Background()
	var (
		s  monitors.Store
		db string
	)
	switch dialect {
	case "sqlite":
		db = testdb.SQLitePath(b)
		opts := sqlitestore.Options{}
		if hook {
			enq, err := delivery.NewSQLiteEnqueuer()
			require.NoError(b, err)
			opts.EnqueueDeliveries = enq.Enqueue
		}
		st, err := sqlitestore.Open(ctx, db, opts)
		require.NoError(b, err)
		require.NoError(b, delivery.MigrateSQLite(ctx, st.DB(), nil))
		s = st
	default:
		db = testdb.PostgresURL(b)
		opts := pgstore.Options{}
		if hook {
			enq, err := delivery.NewPostgresEnqueuer()
			require.NoError(b, err)
			opts.EnqueueDeliveries = enq.Enqueue
		}
		st, err := pgstore.Open(ctx, db, opts)
		require.NoError(b, err)
		require.NoError(b, delivery.MigratePostgres(ctx, st.Pool(), nil))
		s = st
	}
	b.Cleanup(func() { _ = s.Close() })
	prj := storetest.MustProject(b, s)
	raw, err := json.Marshal(map[string]any{"url": url})
	require.NoError(b, err)
	_, err = s.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: storetest.RandomID("ch_"), ProjectID: prj.ID,
		Kind: "webhook", Name: "hook", Config: raw, IsDefault: true, Now: T0})
	require.NoError(b, err)
	return s, prj, db
}

// failingMonitors makes n monitors and returns the pings that open an
// incident on each.
func failingMonitors(b *testing.B, s monitors.Store, prj *monitors.Project, n int) []*monitors.PingRecordParams {
	b.Helper()
	pings := make([]*monitors.PingRecordParams, n)
	for i := range pings {
		m := storetest.MustMonitor(b, s, prj.ID, storetest.RandomID("m-"), nil)
		pings[i] = storetest.Ping(m, monitors.PingFail, T0)
	}
	return pings
}

// BenchmarkIncidentWrite measures one transaction that records a failure
// opening an incident, with the delivery and its River job written in it
// ("hook") and, as the baseline, with the delivery row alone ("no-hook").
func BenchmarkIncidentWrite(b *testing.B) {
	for _, dialect := range dialects {
		for _, hook := range []bool{false, true} {
			name := dialect + "/no-hook"
			if hook {
				name = dialect + "/hook"
			}
			b.Run(name, func(b *testing.B) {
				s, prj, _ := benchStore(b, dialect, hook, "https://example.com/hook")
				pings := failingMonitors(b, s, prj, b.N)
				ctx := context.Background()
				b.ResetTimer()
				for _, p := range pings {
					if _, err := s.PingRecordBatch(ctx, &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{p}}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDeliver measures how fast queued notifications reach a local
// receiver through River and the worker (the default poll interval), with
// the default workers and fetch cooldown (20, 10ms), the earlier defaults
// (10, 20ms, the baseline) and other pairs, per notification; with -benchtime
// 10000x it is the time for a burst of 10,000 incidents queued at once to
// reach the receiver (s-burst). The baseline is sending the same
// notifications with the same notifier directly from 10 goroutines,
// without queue or log.
func BenchmarkDeliver(b *testing.B) {
	for _, dialect := range dialects {
		for _, v := range []struct {
			workers  int
			cooldown time.Duration
		}{{0, 0}, {10, 20 * time.Millisecond}, {10, 10 * time.Millisecond}, {25, 0}, {50, 0}, {20, 5 * time.Millisecond}} {
			workers := v.workers
			name := fmt.Sprintf("%s/river-%d-workers-cooldown-%s", dialect, workers, v.cooldown)
			if workers == 0 && v.cooldown == 0 {
				name = dialect + "/river-default"
			}
			b.Run(name, func(b *testing.B) {
				recv := notifiertest.NewReceiver(b, nil)
				s, prj, _ := benchStore(b, dialect, true, recv.URL)
				ctx := context.Background()
				pings := failingMonitors(b, s, prj, b.N)
				for start := 0; start < len(pings); start += 500 {
					storetest.MustRecord(b, s, pings[start:min(start+500, len(pings))]...)
				}
				cfg := delivery.Config{Store: s, BaseURL: baseURL, AllowPrivate: true, Workers: workers,
					NowFunc: func() time.Time { return T0 }}
				delivery.SetFetchCooldown(&cfg, v.cooldown)
				var svc *delivery.Service
				var err error
				switch st := s.(type) {
				case *sqlitestore.Store:
					svc, err = delivery.NewSQLite(st.DB(), cfg)
				case *pgstore.Store:
					svc, err = delivery.NewPostgres(st.Pool(), cfg)
				}
				require.NoError(b, err)
				b.ResetTimer()
				start := time.Now()
				require.NoError(b, svc.Start(ctx))
				for len(recv.Requests()) < b.N {
					time.Sleep(time.Millisecond) // polling for completion, not a deadline
				}
				took := time.Since(start)
				b.StopTimer()
				b.ReportMetric(took.Seconds(), "s-burst")
				b.ReportMetric(float64(b.N)/took.Seconds(), "sent/s")
				require.NoError(b, svc.Stop(ctx))
			})
		}
	}
	b.Run("direct", func(b *testing.B) {
		recv := notifiertest.NewReceiver(b, nil)
		raw, err := json.Marshal(map[string]any{"url": recv.URL})
		require.NoError(b, err)
		nt, err := kinds.New("webhook", raw, kinds.Deps{HTTPClient: notifiertest.HTTPClient(b)})
		require.NoError(b, err)
		n := notifiertest.Opened()
		work := make(chan struct{})
		var wg sync.WaitGroup
		b.ResetTimer()
		for range 10 {
			wg.Go(func() {
				for range work {
					if err := nt.Notify(context.Background(), n); err != nil {
						b.Error(err)
					}
				}
			})
		}
		for range b.N {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
	})
}
