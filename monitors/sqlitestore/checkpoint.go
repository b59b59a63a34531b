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
//
// A RESTART checkpoint also copies, and syncs into the database file, the
// frames written while the PASSIVE one before it ran (a PASSIVE checkpoint
// copies the frames there were when it began), and holds writers back
// while it does: under sustained ingest a PASSIVE checkpoint took 50 to
// 360 ms (on a loaded 2-core machine), so the RESTART found hundreds to
// thousands of frames left, and no ping was committed while it copied and
// synced them. So before a RESTART the checkpointer runs PASSIVE ones
// again, each copying what was written during the one before, until one
// copies fewer than catchUpFrames (or catchUpRounds have run): the
// RESTART then copies and syncs about what the last one did. Its fsync
// still holds writers back (measured at 1,000 pings/s, load 18 to 20: a
// RESTART took 0.1 to 96 ms, median 30 ms, against 17 to 106 ms, median
// 42 ms, without the extra rounds).

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
	// catchUpFrames and catchUpRounds bound the PASSIVE checkpoints run
	// before a RESTART one: until one copies fewer than catchUpFrames, at
	// most catchUpRounds of them.
	catchUpFrames = 64
	catchUpRounds = 4
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
	Restarted    bool // a RESTART checkpoint ran after the PASSIVE ones
	// Passive is how many PASSIVE checkpoints ran, and Copied the frames
	// the last of them copied (about what was written while the one before
	// it ran, and so about what the RESTART one has left to copy).
	Passive, Copied int
}

// checkpoint runs one PASSIVE checkpoint and, when the WAL holds more than
// restartFrames, more PASSIVE ones to catch up and a RESTART one.
func (c *checkpointer) checkpoint(ctx context.Context) (checkpointResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, err := c.run(ctx, "PASSIVE")
	passive, copied := 1, r.Checkpointed
	for err == nil && r.Frames > c.restartFrames && copied >= catchUpFrames && passive < catchUpRounds {
		prev := r
		if r, err = c.run(ctx, "PASSIVE"); err != nil {
			break
		}
		passive++
		copied = r.Checkpointed - prev.Checkpointed
		if r.Checkpointed < prev.Checkpointed {
			copied = r.Checkpointed // the WAL started over in between
		}
	}
	r.Passive, r.Copied = passive, copied
	if err != nil || r.Frames <= c.restartFrames {
		return r, err
	}
	r, err = c.run(ctx, "RESTART")
	r.Restarted, r.Passive, r.Copied = true, passive, copied
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
