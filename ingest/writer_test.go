package ingest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// poisonStore is a real store that fails, as a whole, every batch holding
// a ping with the poison run id, the way a database refuses a transaction
// for one bad row.
type poisonStore struct {
	monitors.Store
	poison  string
	batches [][]string // the run ids of each batch tried
}

func (s *poisonStore) PingRecordBatch(ctx context.Context, p *monitors.PingRecordBatchParams) ([]monitors.PingRecordResult, error) {
	var rids []string
	for _, pp := range p.Pings {
		rids = append(rids, pp.Ping.RID)
	}
	s.batches = append(s.batches, rids)
	if slices.Contains(rids, s.poison) {
		return nil, errors.New("ERROR: value out of range (SQLSTATE 22003)")
	}
	return s.Store.PingRecordBatch(ctx, p)
}

type writerBundle struct {
	store monitors.Store
	m     *monitors.Monitor
	w     *writer
	reg   *prometheus.Registry
}

func setupWriter(t *testing.T, store Store, real monitors.Store, cfg Config) *writerBundle {
	t.Helper()
	prj := storetest.MustProject(t, real)
	m := storetest.MustMonitor(t, real, prj.ID, "job", func(m *monitors.Monitor) {
		m.PingKey = keys.NewPingKey()
		m.Overlap = monitors.OverlapIgnore
	})
	cfg.Store, cfg.Logger = store, testdb.Logger(t)
	cfg = cfg.withDefaults()
	reg := prometheus.NewRegistry()
	met, err := newMetrics(reg, func() float64 { return 0 }, func() float64 { return 0 })
	require.NoError(t, err)
	return &writerBundle{store: real, m: m, w: newWriter(cfg, met), reg: reg}
}

// queue puts pings in the writer's first queue, in order, before it runs.
func (b *writerBundle) queue(rids ...string) []*request {
	var rs []*request
	for i, rid := range rids {
		kind := monitors.PingStart
		if i%2 == 1 {
			kind = monitors.PingSuccess
		}
		r := newRequest(&monitors.PingRecordParams{PingKey: b.m.PingKey,
			Ping: monitors.Ping{Kind: kind, At: t0.Add(time.Duration(i) * time.Second), RID: rid}})
		b.w.queues[0] <- r
		rs = append(rs, r)
	}
	return rs
}

// runUntilDone runs the writer until every request is done.
func (b *writerBundle) runUntilDone(t *testing.T, rs []*request) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.w.run(ctx)
	}()
	for _, r := range rs {
		<-r.done
	}
	cancel()
	<-done
}

func (b *writerBundle) storedRIDs(t *testing.T) []string {
	t.Helper()
	ps, err := b.store.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: b.m.ProjectID, MonitorID: b.m.ID})
	require.NoError(t, err)
	var rids []string
	for i := len(ps) - 1; i >= 0; i-- { // oldest first
		rids = append(rids, ps[i].RID)
	}
	return rids
}

func rids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("r%02d", i/2) // start and success share a run id
	}
	return out
}

func TestWriterKeepsOrderInOneBatch(t *testing.T) {
	t.Parallel()
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			b := setupWriter(t, s, s, Config{BatchSize: 100})
			want := rids(40)
			rs := b.queue(want...)
			b.runUntilDone(t, rs)
			for i, r := range rs {
				require.NoError(t, r.err, "ping %d", i)
				require.NoError(t, r.res.Err, "ping %d", i)
			}
			require.Equal(t, want, b.storedRIDs(t), "stored in queue order")
			ids := make([]int64, len(rs))
			for i, r := range rs {
				ids[i] = r.res.PingID
			}
			require.True(t, slices.IsSorted(ids), "ping IDs follow the queue")
			runs, err := s.RunList(context.Background(), &monitors.HistoryListParams{ProjectID: b.m.ProjectID, MonitorID: b.m.ID})
			require.NoError(t, err)
			require.Len(t, runs, 20, "each start was closed by its success: the state machine saw them in order")
			for _, run := range runs {
				require.Equal(t, monitors.RunSucceeded, run.Outcome)
				require.Equal(t, int64(1000), *run.DurationMS)
			}
			count, sum := histogramOf(t, b.reg, "vigil_ingest_batch_size")
			require.Equal(t, uint64(1), count, "one transaction")
			require.Equal(t, float64(40), sum)
		})
	}
}

func TestWriterFailingBatchFailsOnlyTheGuiltyPing(t *testing.T) {
	t.Parallel()
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			ps := &poisonStore{Store: s, poison: "r07"}
			b := setupWriter(t, ps, s, Config{BatchSize: 100})
			all := rids(32)
			rs := b.queue(all...)
			b.runUntilDone(t, rs)
			var stored []string
			for i, r := range rs {
				if all[i] == "r07" {
					require.Error(t, r.err, "ping %d is guilty", i)
					continue
				}
				require.NoError(t, r.err, "ping %d is innocent", i)
				require.NoError(t, r.res.Err, "ping %d", i)
				stored = append(stored, all[i])
			}
			require.Equal(t, stored, b.storedRIDs(t), "the innocent pings are stored, in order")
			require.Len(t, ps.batches[0], 32, "first tried as one batch")
			require.Less(t, len(ps.batches), 32, "split in halves, not retried one by one")
		})
	}
}

// TestWriterRealBatchError makes PostgreSQL itself refuse a batch: a time
// before its timestamp range (4713 BC), which the URL parser would never
// let through. (SQLite stores it: its times are plain integers.)
func TestWriterRealBatchError(t *testing.T) {
	t.Parallel()
	s := testdb.Postgres(t)
	b := setupWriter(t, s, s, Config{BatchSize: 100})
	all := rids(10)
	rs := b.queue(all...)
	ancient := time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC)
	rs[5].p.Ping.RetryAt = &ancient
	b.runUntilDone(t, rs)
	for i, r := range rs {
		if i == 5 {
			require.Error(t, r.err)
			continue
		}
		require.NoError(t, r.err, "ping %d", i)
		require.NoError(t, r.res.Err, "ping %d", i)
	}
	require.Len(t, b.storedRIDs(t), 9)
}

func TestWriterWritesOutTheQueueAtStop(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	b := setupWriter(t, s, s, Config{BatchSize: 4, Writers: 1})
	rs := b.queue(rids(10)...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped before it starts: what is queued is still written
	b.w.run(ctx)
	for i, r := range rs {
		select {
		case <-r.done:
		default:
			t.Fatalf("ping %d not done", i)
		}
		require.NoError(t, r.err)
	}
	require.Len(t, b.storedRIDs(t), 10)
	_, err := b.w.record(context.Background(), b.m.PingKey, &monitors.PingRecordParams{PingKey: b.m.PingKey})
	require.ErrorIs(t, err, errStopped)
}

func TestWriterSpreadsKeysOverWriters(t *testing.T) {
	t.Parallel()
	s := testdb.SQLite(t)
	b := setupWriter(t, s, s, Config{Writers: 4})
	seen := map[uint32]bool{}
	for range 64 {
		seen[hashKey(keys.NewPingKey())%4] = true
	}
	require.Len(t, seen, 4)
	require.Equal(t, hashKey(b.m.PingKey), hashKey(b.m.PingKey), "one key, one writer")
}

func histogramOf(t *testing.T, reg *prometheus.Registry, name string) (uint64, float64) {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			h := mf.GetMetric()[0].GetHistogram()
			return h.GetSampleCount(), h.GetSampleSum()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0, 0
}
