package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// WAL has grown past restartFrames.
//
// A WAL that starts over keeps its file, and the writer overwrites it from
// its beginning: no commit cuts the file (the writer's journal_size_limit
// is -1). Cutting it on the first commit after each restart, as
// journal_size_limit does, made that commit truncate the file and the
// commits after it grow it back, every second under sustained ingest
// (a second of writes is more than 64 MiB of WAL at 5,000 pings a
// second): in three interleaved pairs at half the maximum ingest rate,
// the p99 of a ping was 21 to 27 ms with the cut and 10.5 to 17.6 ms
// without it (docs/benchmarks.md, Ingest, eighth round on SQLite). The
// checkpointer cuts the file instead, once writes have slowed down: when
// the file is larger than walSizeLimit and the frames in the WAL fill
// less than a quarter of it, it runs a
// TRUNCATE checkpoint (a RESTART one that also truncates the file to
// nothing), which waits for readers as a RESTART does. So the file keeps
// about the size of the busiest interval's writes while they last, and no
// more than four times what an interval writes, or walSizeLimit, after.
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
	// CheckpointIntervalDefault is how often the store checkpoints. Under
	// sustained ingest a second of writes is 13 to 14 KB of WAL a ping:
	// about 135 MB at 10,000 pings a second (docs/benchmarks.md).
	CheckpointIntervalDefault = time.Second
	// walSizeLimit is the size up to which the WAL file is never cut:
	// past it, the checkpointer truncates a file that the WAL fills less
	// than a quarter of.
	walSizeLimit = 64 << 20
	// walFrameHeader is the header of each frame of the WAL, before its
	// page.
	walFrameHeader = 24
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
	// walPath is the WAL file; past sizeLimit bytes, a checkpoint that
	// finds the WAL filling less than a quarter of it truncates it.
	// frameSize is the bytes of one frame (the page and its header).
	walPath              string
	sizeLimit, frameSize int64
}

// openCheckpointer opens the checkpoint connection on dsn, whose WAL file
// is walPath, and, when interval is positive, starts checkpointing every
// interval.
func openCheckpointer(ctx context.Context, dsn, walPath string, interval time.Duration, s *Store) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint connection: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	var pageSize int64
	if err := db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize); err != nil {
		db.Close()
		return nil, fmt.Errorf("open checkpoint connection: page size: %w", err)
	}
	loopCtx, stop := context.WithCancel(context.Background())
	c := &checkpointer{db: db, stop: stop, restartFrames: restartFramesDefault,
		walPath: walPath, sizeLimit: walSizeLimit, frameSize: pageSize + walFrameHeader}
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
	Restarted    bool // a RESTART or TRUNCATE checkpoint ran after the PASSIVE ones
	Truncated    bool // it was a TRUNCATE one: the WAL file was cut
	// Passive is how many PASSIVE checkpoints ran, and Copied the frames
	// the last of them copied (about what was written while the one before
	// it ran, and so about what the RESTART one has left to copy).
	Passive, Copied int
}

// checkpoint runs one PASSIVE checkpoint and, when the WAL holds more than
// restartFrames, more PASSIVE ones to catch up and a RESTART one; or a
// TRUNCATE one instead when the WAL file is past sizeLimit and the WAL
// fills less than a quarter of it.
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
	if err != nil {
		return r, err
	}
	cut, err := c.oversized(r.Frames)
	if err != nil {
		return r, err
	}
	mode := "RESTART"
	switch {
	case cut:
		mode = "TRUNCATE"
	case r.Frames <= c.restartFrames:
		return r, nil
	}
	r, err = c.run(ctx, mode)
	r.Restarted, r.Truncated, r.Passive, r.Copied = true, cut && err == nil && !r.Busy, passive, copied
	return r, err
}

// oversized reports whether the WAL file is past sizeLimit and frames fill
// less than a quarter of it.
func (c *checkpointer) oversized(frames int) (bool, error) {
	fi, err := os.Stat(c.walPath)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("size of the WAL file: %w", err)
	}
	return fi.Size() > c.sizeLimit && int64(frames)*c.frameSize < fi.Size()/4, nil
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
