package ingest

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// clockStore records, on the bubble's clock, when each batch is written
// and how many pings it holds, takes write to write it, and stores
// nothing.
type clockStore struct {
	start   time.Time
	write   time.Duration
	mu      sync.Mutex
	batches []clockBatch
}

type clockBatch struct {
	At    time.Duration // since start
	Pings int
}

func (s *clockStore) PingRecordBatch(_ context.Context, p *monitors.PingRecordBatchParams) ([]monitors.PingRecordResult, error) {
	s.mu.Lock()
	s.batches = append(s.batches, clockBatch{At: time.Since(s.start), Pings: len(p.Pings)})
	s.mu.Unlock()
	time.Sleep(s.write) // the bubble's clock
	return make([]monitors.PingRecordResult, len(p.Pings)), nil
}

// runClockWriter runs a writer over a clockStore in the bubble, with a
// window of 2 ms (and a quiet cut, if asked) and a store that takes write
// to write a batch, queues one ping at each of the offsets (each from its
// own goroutine, as requests do), waits for their answers, and returns
// the batches written.
func runClockWriter(t *testing.T, quietCut bool, write time.Duration, offsets ...time.Duration) []clockBatch {
	t.Helper()
	s := &clockStore{start: time.Now(), write: write}
	met, err := newMetrics(prometheus.NewRegistry(), func() float64 { return 0 }, func() float64 { return 0 })
	require.NoError(t, err)
	w := newWriter(Config{Store: s, BatchWindow: 2 * time.Millisecond, QuietCut: quietCut}.withDefaults(), met)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.run(ctx)
	}()
	var wg sync.WaitGroup
	for _, off := range offsets {
		wg.Go(func() {
			time.Sleep(off) // the bubble's clock: no real waiting
			// A request of its own, not one of the pool's: a channel made
			// in another bubble cannot be used in this one.
			r := &request{p: &monitors.PingRecordParams{PingKey: "key"}, done: make(chan struct{}, 1)}
			w.queues[0] <- r
			<-r.done
			if r.err != nil {
				t.Errorf("ping at %s: %v", off, r.err) // not FailNow: another goroutine
			}
		})
	}
	wg.Wait()
	cancel()
	<-done
	return s.batches
}

// TestWriterCutsABatchWhenPingsStop: with a quiet cut, a batch whose pings
// stopped coming is written a sixteenth of the window (125 µs) after the
// last of them, not at the end of the window: under load, a batch's
// clients come back as a burst, and waiting out the window after it only
// keeps them waiting.
func TestWriterCutsABatchWhenPingsStop(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		got := runClockWriter(t, true, 0, 0)
		require.Equal(t, []clockBatch{{At: 125 * time.Microsecond, Pings: 1}}, got, "one ping alone: a sixteenth of the window")
	})
	synctest.Test(t, func(t *testing.T) {
		got := runClockWriter(t, true, 0, 0, 50*time.Microsecond, 150*time.Microsecond, 250*time.Microsecond)
		require.Equal(t, []clockBatch{{At: 375 * time.Microsecond, Pings: 4}}, got, "a burst: a sixteenth of the window after its last ping")
	})
}

// TestWriterWaitsOutTheWindowForASteadyStream: with a quiet cut, pings that
// keep coming, each within a sixteenth of the window of the one before,
// fill the whole window, and the batch after it starts with the next ping.
func TestWriterWaitsOutTheWindowForASteadyStream(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var offsets []time.Duration
		for i := range 26 {
			offsets = append(offsets, time.Duration(i)*90*time.Microsecond) // 0 to 2.25 ms
		}
		got := runClockWriter(t, true, 0, offsets...)
		require.Equal(t, []clockBatch{
			{At: 2 * time.Millisecond, Pings: 23},                        // 0 to 1.98 ms, cut by the window
			{At: 2250*time.Microsecond + 125*time.Microsecond, Pings: 3}, // 2.07 to 2.25 ms, then quiet
		}, got)
	})
}

// TestWriterWaitsOutTheWindowWithoutQuietCut: without a quiet cut (the
// server's choice on PostgreSQL), a batch waits out its whole window.
func TestWriterWaitsOutTheWindowWithoutQuietCut(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		got := runClockWriter(t, false, 0, 0, 50*time.Microsecond)
		require.Equal(t, []clockBatch{{At: 2 * time.Millisecond, Pings: 2}}, got)
	})
}

// TestWriterWritesWhatQueuedMeanwhileAtOnce: without a quiet cut (the
// server's choice on PostgreSQL), pings that queued while a batch was
// being written have waited a batch's write already; the next batch takes
// them and is written at once, without a window. The window only gathers
// company for a ping that finds the writer idle. Without this, under load
// the pings queued meanwhile and those of the batch just answered, coming
// back, merged into one batch after each window, and the writer stood idle
// while they came.
func TestWriterWritesWhatQueuedMeanwhileAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const window, write = 2 * time.Millisecond, 3 * time.Millisecond
		got := runClockWriter(t, false, write,
			0,                                                  // finds the writer idle
			window+time.Millisecond, window+2*time.Millisecond, // queue while the first batch is written
			window+2*write+time.Millisecond, // finds the writer idle again
		)
		require.Equal(t, []clockBatch{
			{At: window, Pings: 1},
			{At: window + write, Pings: 2},                               // at once
			{At: window + 2*write + time.Millisecond + window, Pings: 1}, // a window again
		}, got)
	})
}

// TestWriterWaitsForQuietAfterABatch: with a quiet cut (SQLite's), the
// pings that queued while a batch was written wait for the quiet cut like
// any batch: the clients of the batch just answered, coming back within
// it, join them.
func TestWriterWaitsForQuietAfterABatch(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const quiet, write = 125 * time.Microsecond, 3 * time.Millisecond
		got := runClockWriter(t, true, write,
			0,                                                // finds the writer idle
			quiet+time.Millisecond, quiet+2*time.Millisecond, // queue while the first batch is written
			quiet+write+50*time.Microsecond, // comes back just after it, within the quiet cut
		)
		require.Equal(t, []clockBatch{
			{At: quiet, Pings: 1},
			{At: quiet + write + 50*time.Microsecond + quiet, Pings: 3},
		}, got)
	})
}
