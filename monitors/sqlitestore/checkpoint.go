package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// Checkpoints copy the WAL back into the database file. SQLite's own
// (wal_autocheckpoint) runs inside the commit that finds the WAL past its
// threshold, so that commit, and every ping waiting on the writer behind
// it, waits for the copy: measured, 90 to 150 ms at p95 and p99 at half
// of the maximum ingest rate. The store turns it off on the writer and
// checkpoints from a connection of its own instead, on a timer, never
// inside a commit.
//
// A PASSIVE checkpoint takes no lock that a writer or a reader waits on: it
// copies the frames that no reader still needs and stops. Once it has
// copied them all, the writer's next transaction starts the WAL over from
// its beginning, so the file stops growing, but only when no reader is
// still reading from the WAL at that moment. Readers that overlap without
// a gap (the dashboard, the API) can keep that moment from ever coming: the
// WAL then grows with every commit (measured in
// TestWALBoundedUnderSustainedWrites: 40 batches, never restarted). So
// when a PASSIVE checkpoint leaves more than restartFrames in the WAL, the
// checkpointer runs a RESTART one: it takes the write lock (when no
// transaction holds it) and waits for the readers of the old frames to
// finish, so that the next writer starts the WAL over. While it waits, new
// writers wait too, so it waits at most restartWaitMS (the checkpoint
// connection's busy timeout) and otherwise gives up, to try again on the
// next tick: a ping waits a few milliseconds at worst, and only when the
// WAL has grown past restartFrames. journal_size_limit then cuts the file
// back to walSizeLimit.

const (
	// CheckpointIntervalDefault is how often the store checkpoints. At
	// the ingest rates of docs/benchmarks.md a second of writes is 10 to
	// 20 MiB of WAL.
	CheckpointIntervalDefault = time.Second
	// walSizeLimit is the journal_size_limit: the size the WAL file is
	// cut back to when it starts over.
	walSizeLimit = 64 << 20
	// restartFramesDefault is the WAL size, in pages, past which a
	// checkpoint makes the WAL start over: 16 MiB at 4 KiB pages.
	restartFramesDefault = 4096
	// restartWaitMS bounds how long a RESTART checkpoint holds writers back
	// while it waits for readers.
	restartWaitMS = 5
)

// checkpointer runs PASSIVE checkpoints on a connection of its own.
type checkpointer struct {
	db   *sql.DB
	stop context.CancelFunc
	done sync.WaitGroup
	mu   sync.Mutex // one checkpoint at a time
	// restartFrames is the WAL size, in frames, past which a checkpoint
	// waits for readers so that the WAL starts over.
	restartFrames int
}

// openCheckpointer opens the checkpoint connection on dsn and, when
// interval is positive, starts checkpointing every interval.
func openCheckpointer(ctx context.Context, dsn string, interval time.Duration, s *Store) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open checkpoint connection: %w", err)
	}
	loopCtx, stop := context.WithCancel(context.Background())
	c := &checkpointer{db: db, stop: stop, restartFrames: restartFramesDefault}
	if interval > 0 {
		c.done.Go(func() {
			t := time.NewTicker(interval)
			defer t.Stop()
			for {
				select {
				case <-loopCtx.Done():
					return
				case <-t.C:
				}
				if _, err := c.checkpoint(loopCtx); err != nil && loopCtx.Err() == nil {
					s.log.Warn("checkpoint the SQLite WAL", "err", err)
				}
			}
		})
	}
	return c, nil
}

// checkpointResult is what PRAGMA wal_checkpoint reports.
type checkpointResult struct {
	Busy         bool // the checkpoint could not finish (a reader or writer held it up)
	Frames       int  // frames in the WAL
	Checkpointed int  // frames copied into the database file, now or before
	Restarted    bool // a RESTART checkpoint ran after the PASSIVE one
}

// checkpoint runs one PASSIVE checkpoint, and a RESTART one after it when
// the WAL holds more than restartFrames.
func (c *checkpointer) checkpoint(ctx context.Context) (checkpointResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.run(ctx, "PASSIVE")
	if err != nil || r.Frames <= c.restartFrames {
		return r, err
	}
	r, err = c.run(ctx, "RESTART")
	r.Restarted = true
	return r, err
}

func (c *checkpointer) run(ctx context.Context, mode string) (checkpointResult, error) {
	var r checkpointResult
	var busy int
	if err := c.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(`+mode+`)`).Scan(&busy, &r.Frames, &r.Checkpointed); err != nil {
		return r, fmt.Errorf("wal_checkpoint(%s): %w", mode, err)
	}
	r.Busy = busy != 0
	return r, nil
}

// close stops the timer and closes the connection.
func (c *checkpointer) close() error {
	c.stop()
	c.done.Wait()
	return c.db.Close()
}
