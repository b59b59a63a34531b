package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// errStopped is returned for a ping that arrives while ingest shuts down:
// it was not stored, and the client is told to try again (503).
var errStopped = errors.New("ingest: shutting down")

// pinger is the part of the store the writer checks when a batch fails, to
// tell a database that is down from a ping that breaks a batch.
type pinger interface {
	Ping(ctx context.Context) error
}

// request is one ping waiting for its batch. The writer completes it once,
// setting res or err and then sending on done.
type request struct {
	p    *monitors.PingRecordParams
	res  monitors.PingRecordResult
	err  error
	done chan struct{} // buffered: the writer never waits on it
}

// requests keeps the requests whose completion was received, so that a
// ping does not make a request and a channel each time.
var requests = sync.Pool{New: func() any { return &request{done: make(chan struct{}, 1)} }}

// newRequest returns a request for p. Give it back with release, and only
// once its done was received: until then the writer may still complete it.
func newRequest(p *monitors.PingRecordParams) *request {
	r := requests.Get().(*request)
	r.p = p
	return r
}

// release gives r back for another ping; r's completion was received.
func (r *request) release() {
	r.p, r.res, r.err = nil, monitors.PingRecordResult{}, nil
	requests.Put(r)
}

// complete hands r its result.
func (r *request) complete(res monitors.PingRecordResult, err error) {
	r.res, r.err = res, err
	r.done <- struct{}{}
}

// writer is the group commit: it gathers the pings of concurrent requests
// into batches, writes each batch with one PingRecordBatch call (one
// transaction), and hands each request its own result.
//
// Pings are spread over the queues by key, and each queue is written by one
// goroutine, one batch after another, so the pings of one key are written
// in the order they were queued. While a batch is being written the next
// one fills up; without a quiet cut it is written as soon as the one
// before is done, and only a ping that finds its writer idle waits the
// window for company. Throughput is then bounded by how fast the database
// writes batches, not by one commit per request.
type writer struct {
	store   Store
	size    int
	window  time.Duration
	quiet   time.Duration // 0: no quiet cut
	timeout time.Duration
	queues  []chan *request
	// stopped is closed when Run's context is done: no request is queued
	// after it. finished is closed when every queue has been written out.
	stopped, finished chan struct{}
	stopOnce          sync.Once
	m                 *metrics
	log               *slog.Logger
}

func newWriter(c Config, m *metrics) *writer {
	w := &writer{
		store: c.Store, size: c.BatchSize, window: c.BatchWindow, timeout: c.BatchTimeout,
		stopped: make(chan struct{}), finished: make(chan struct{}), m: m, log: c.Logger,
	}
	if c.QuietCut {
		w.quiet = c.BatchWindow / quietShare
	}
	w.queues = make([]chan *request, c.Writers)
	for i := range w.queues {
		w.queues[i] = make(chan *request, 4*c.BatchSize)
	}
	return w
}

// queued returns how many pings wait for a batch.
func (w *writer) queued() int {
	n := 0
	for _, q := range w.queues {
		n += len(q)
	}
	return n
}

// record stores one ping and returns its result once it is durable. key
// picks the queue. A ctx that ends first returns ctx's error: the ping may
// still be stored, but it was not acknowledged.
func (w *writer) record(ctx context.Context, key string, p *monitors.PingRecordParams) (monitors.PingRecordResult, error) {
	if w.size == 1 {
		// No group commit: this request writes its own transaction.
		r := newRequest(p)
		w.write(context.WithoutCancel(ctx), []*request{r})
		<-r.done
		return r.result()
	}
	select {
	case <-w.stopped:
		return monitors.PingRecordResult{}, errStopped
	default:
	}
	r := newRequest(p)
	q := w.queues[0]
	if len(w.queues) > 1 {
		q = w.queues[hashKey(key)%uint32(len(w.queues))]
	}
	select {
	case q <- r:
	case <-w.stopped:
		r.release() // never queued
		return monitors.PingRecordResult{}, errStopped
	case <-ctx.Done():
		r.release()
		return monitors.PingRecordResult{}, ctx.Err()
	}
	// From here on the writer holds r: it goes back to the pool only once
	// it is complete.
	select {
	case <-r.done:
		return r.result()
	case <-w.finished:
		select {
		case <-r.done:
			return r.result()
		default:
			return monitors.PingRecordResult{}, errStopped
		}
	case <-ctx.Done():
		return monitors.PingRecordResult{}, ctx.Err()
	}
}

// result returns what the writer handed r, whose completion was received,
// and releases r.
func (r *request) result() (monitors.PingRecordResult, error) {
	res, err := r.res, r.err
	r.release()
	return res, err
}

// run writes batches until ctx is done, then writes out what is queued and
// returns.
func (w *writer) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, q := range w.queues {
		wg.Go(func() { w.loop(ctx, q) })
	}
	<-ctx.Done()
	w.stopOnce.Do(func() { close(w.stopped) })
	wg.Wait()
	close(w.finished)
}

// loop writes the batches of one queue, one after another.
func (w *writer) loop(ctx context.Context, q chan *request) {
	// Batches are written with a context that outlives ctx, so that a
	// batch begun before shutdown is finished: its pings are about to be
	// acknowledged.
	wctx := context.WithoutCancel(ctx)
	batch := make([]*request, 0, w.size)
	for {
		select {
		case r := <-q:
			batch = append(batch[:0], r)
		case <-ctx.Done():
			// Write out what was queued before the stop.
			w.writeQueued(wctx, q, batch)
			return
		}
		batch = w.take(q, batch)
		if len(batch) < w.size && w.window > 0 {
			batch = w.wait(q, batch)
		}
		w.write(wctx, batch)
		if w.quiet > 0 {
			// The next batch, even of pings queued meanwhile, waits for
			// the quiet cut: see Config.QuietCut.
			continue
		}
		// The pings that queued while that batch was written have waited
		// for a write already: they go at once, without a window.
		w.writeQueued(wctx, q, batch)
	}
}

// writeQueued writes what is queued, batch after batch, without waiting,
// until it finds the queue empty. batch is the loop's buffer, reused.
func (w *writer) writeQueued(ctx context.Context, q chan *request, batch []*request) {
	for {
		batch = w.take(q, batch[:0])
		if len(batch) == 0 {
			return
		}
		w.write(ctx, batch)
	}
}

// take adds to batch what is queued now, up to a full batch.
func (w *writer) take(q chan *request, batch []*request) []*request {
	for len(batch) < w.size {
		select {
		case r := <-q:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// quietShare is the share of the window after which a batch stops
// waiting when no ping arrived meanwhile, with Config.QuietCut (125 µs of
// the default 2 ms): see wait.
const quietShare = 16

// wait adds to batch what arrives within the window, up to a full batch.
// With a quiet cut, it stops early once no ping has arrived for a
// sixteenth of the window: under load, the pings of a batch's clients come
// back as a burst once the batch before is answered, and waiting out the
// rest of the window after the burst has ended only keeps them all
// waiting, and the writer idle. A steady stream of pings, each within a
// sixteenth of the window of the one before, still fills the whole window.
func (w *writer) wait(q chan *request, batch []*request) []*request {
	window := time.NewTimer(w.window)
	defer window.Stop()
	var quiet *time.Timer
	var quietC <-chan time.Time // nil without a quiet cut: never ready
	if w.quiet > 0 {
		quiet = time.NewTimer(w.quiet)
		defer quiet.Stop()
		quietC = quiet.C
	}
	for len(batch) < w.size {
		select {
		case r := <-q:
			batch = append(batch, r)
			if quiet != nil {
				quiet.Reset(w.quiet)
			}
		case <-quietC:
			return batch
		case <-window.C:
			return batch
		}
	}
	return batch
}

// write records batch in one transaction and completes its requests. When
// the whole batch fails (an error that no single result carries), the
// guilty ping is found by writing each half on its own, recursively, so
// that only it fails; unless the database itself does not answer, when
// splitting cannot help.
func (w *writer) write(ctx context.Context, batch []*request) {
	params := make([]*monitors.PingRecordParams, len(batch))
	for i, r := range batch {
		params[i] = r.p
	}
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, w.timeout)
	res, err := w.store.PingRecordBatch(bctx, &monitors.PingRecordBatchParams{Pings: params})
	cancel()
	w.m.batch(len(batch), time.Since(start), err)
	if err == nil && len(res) != len(batch) {
		err = fmt.Errorf("record pings: %d results for %d pings", len(res), len(batch))
	}
	if err == nil {
		for i, r := range batch {
			r.complete(res[i], nil)
		}
		return
	}
	if len(batch) > 1 && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && w.databaseAnswers(ctx) {
		w.log.Warn("ping batch failed; writing its halves apart", "pings", len(batch), "err", err)
		mid := len(batch) / 2
		w.write(ctx, batch[:mid])
		w.write(ctx, batch[mid:])
		return
	}
	if len(batch) == 1 {
		w.log.Error("ping not recorded", "kind", batch[0].p.Ping.Kind, "err", err)
	} else {
		w.log.Error("ping batch not recorded", "pings", len(batch), "err", err)
	}
	for _, r := range batch {
		r.complete(monitors.PingRecordResult{}, err)
	}
}

// databaseAnswers reports whether the store answers a ping, when it can
// tell; a store that cannot is assumed to answer.
func (w *writer) databaseAnswers(ctx context.Context) bool {
	p, ok := w.store.(pinger)
	if !ok {
		return true
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return p.Ping(pctx) == nil
}

// hashKey is 32-bit FNV-1a.
func hashKey(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
