package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"
)

// worker is the River worker of delivery jobs: it hands each job to the
// Sender and turns the verdict into what River understands.
type worker struct {
	river.WorkerDefaults[SendArgs]
	sender *Sender
	// delays holds, from Work to NextRetry, the wait the Sender chose for
	// a job that failed. River calls both, in that order, with the same
	// *river.Job, right after the attempt.
	delays sync.Map // *river.Job[SendArgs] → time.Duration
}

// Work makes one attempt of the delivery.
func (w *worker) Work(ctx context.Context, j *river.Job[SendArgs]) error {
	res := w.sender.deliver(ctx, job{args: j.Args, attempt: j.Attempt, maxAttempts: j.MaxAttempts})
	switch res.verdict {
	case verdictDone:
		return nil
	case verdictCancel:
		return river.JobCancel(res.err)
	case verdictWait:
		return river.JobSnooze(max(res.delay, 0))
	}
	if res.delay > 0 {
		w.delays.Store(j, res.delay)
	}
	return res.err
}

// NextRetry schedules a failed job after the wait its attempt chose: the
// receiver's Retry-After or the backoff. Without one (River's own
// cancellation at shutdown), River's policy applies.
func (w *worker) NextRetry(j *river.Job[SendArgs]) time.Time {
	if d, ok := w.delays.LoadAndDelete(j); ok {
		return time.Now().Add(d.(time.Duration))
	}
	return time.Time{}
}

// Timeout bounds a job a little beyond the attempt's own timeout, which
// ends it first and is logged as such.
func (w *worker) Timeout(*river.Job[SendArgs]) time.Duration {
	return jobTimeout(w.sender.cfg.Timeout)
}
