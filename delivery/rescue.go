package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"
)

// Rescue of the jobs of a process that died in the middle of an attempt.
//
// River marks a job running when a worker takes it, and only that worker
// ends it. When the process dies (a crash, kill -9, a lost machine), the
// job stays running, and River's own rescuer takes it back only after
// RescueStuckJobsAfter, by default the job timeout plus an hour, and
// checks at most every 30 s. A notification is worth more than that: the
// rescue below takes back a delivery job still running [RescueAfter] after
// its attempt started, which no live worker can still hold (River ends an
// attempt at the job timeout, and the attempt's own timeout ends it
// before), and looks every rescueEveryDefault. With the default attempt
// timeout of 30 s, a job interrupted by a crash is sent again at most
// 45 s + 5 s + one fetch after its attempt began: within a minute.
// River's rescuer stays on, with the same horizon, as a second line.
const (
	// rescueMargin is how much longer than the job timeout a job must have
	// been running to be taken back.
	rescueMargin = 5 * time.Second
	// rescueEveryDefault is how often each process looks for jobs to take
	// back.
	rescueEveryDefault = 5 * time.Second
	// rescueBatch bounds the jobs one look takes back.
	rescueBatch = 100
)

// jobTimeout is River's bound on one delivery job, a little beyond the
// attempt's own timeout, which ends it first and is logged as such.
func jobTimeout(attemptTimeout time.Duration) time.Duration {
	return attemptTimeout + 10*time.Second
}

// RescueAfter is how long after its attempt started a delivery job that
// is still running is taken to be lost with its process, and is made
// available again: longer than an attempt may take (attemptTimeout, or
// the default when 0), so that a live worker's send is never taken from
// it.
func RescueAfter(attemptTimeout time.Duration) time.Duration {
	if attemptTimeout <= 0 {
		attemptTimeout = Config{}.withDefaults().Timeout
	}
	return jobTimeout(attemptTimeout) + rescueMargin
}

// rescueError is the error River's job row records for a rescued attempt.
const rescueError = "the process that was sending this notification stopped before the attempt ended (a crash or kill); sent again"

// rescueOnce makes every delivery job that has been running for longer
// than RescueAfter available again, at once, and returns how many. Other
// kinds of jobs are River's rescuer's.
func (s *Service) rescueOnce(ctx context.Context) (int, error) {
	horizon := time.Now().Add(-RescueAfter(s.cfg.Timeout))
	total := 0
	var after int64
	for {
		stuck, err := s.exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{AfterID: after, Max: rescueBatch,
			StuckHorizon: horizon})
		if err != nil {
			return total, fmt.Errorf("find delivery jobs left running: %w", err)
		}
		now := time.Now().UTC()
		p := &riverdriver.JobRescueManyParams{StuckHorizon: horizon}
		for _, j := range stuck {
			after = j.ID
			if j.Kind != (SendArgs{}).Kind() {
				continue
			}
			errData, err := json.Marshal(rivertype.AttemptError{At: now, Attempt: max(j.Attempt, 0), Error: rescueError})
			if err != nil {
				return total, fmt.Errorf("rescue delivery job %d: %w", j.ID, err)
			}
			state, finalized := rivertype.JobStateAvailable, (*time.Time)(nil)
			if j.MaxAttempts > 0 && j.Attempt >= j.MaxAttempts {
				state, finalized = rivertype.JobStateDiscarded, &now
			}
			p.ID = append(p.ID, j.ID)
			p.Error = append(p.Error, errData)
			p.FinalizedAt = append(p.FinalizedAt, finalized)
			p.ScheduledAt = append(p.ScheduledAt, now)
			p.State = append(p.State, string(state))
		}
		if len(p.ID) > 0 {
			// The update only takes jobs still running since before the
			// horizon, so a job that its worker ended meanwhile is left
			// alone.
			if _, err := s.exec.JobRescueMany(ctx, p); err != nil {
				return total, fmt.Errorf("rescue delivery jobs left running: %w", err)
			}
			total += len(p.ID)
			s.cfg.Logger.Warn("notifications whose sending process stopped mid-attempt are sent again",
				"jobs", len(p.ID), "rescue_after", RescueAfter(s.cfg.Timeout).String())
		}
		if len(stuck) < rescueBatch {
			return total, nil
		}
	}
}

// rescueLoop runs rescueOnce every rescueEvery until ctx is done.
func (s *Service) rescueLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.rescueEvery)
	defer t.Stop()
	for {
		if _, err := s.rescueOnce(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.Error("rescue notifications left running", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
