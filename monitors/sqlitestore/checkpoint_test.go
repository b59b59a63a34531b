package sqlitestore_test

import (
	"database/sql"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// TestWALBoundedUnderSustainedWrites writes batches of pings without a
// pause, with readers running beside them, and checks that the WAL stops
// growing once the store checkpoints: commits themselves never checkpoint
// (without the checkpointer the WAL grows with every batch), and with it
// the WAL holds a few batches at most, however many are written.
func TestWALBoundedUnderSustainedWrites(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, prj, pings, walSize := walStore(t)
	batch := func() { pings(walMonitors) }

	// Without checkpoints every batch adds to the WAL.
	size := walSize()
	for range 6 {
		batch()
		grown := walSize()
		require.Greater(t, grown, size, "a commit does not checkpoint: the WAL grows")
		size = grown
	}
	six, _, err := sqlitestore.Checkpoint(s) // the frames of the creation and six batches
	require.NoError(t, err)
	require.Positive(t, six)

	// Readers come and go all the time, as the dashboard's and the API's do.
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := s.MonitorList(ctx, &monitors.MonitorListParams{ProjectID: prj.ID})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	defer func() { close(stop); readers.Wait() }()

	// With a checkpoint after each batch, the WAL starts over: it never
	// holds more than a dozen batches, and its file stops growing. Readers
	// that never leave a gap keep a PASSIVE checkpoint from doing that
	// alone; past restartFrames the checkpoint waits for them.
	sqlitestore.SetRestartFrames(s, six/2)
	maxFrames, restarts := 0, 0
	for range 40 {
		batch()
		frames, restarted, err := sqlitestore.Checkpoint(s)
		require.NoError(t, err)
		maxFrames = max(maxFrames, frames)
		if restarted {
			restarts++
		}
	}
	t.Logf("frames of six batches %d, most frames in the WAL after a checkpoint %d, restarts %d of 40, WAL file %d bytes",
		six, maxFrames, restarts, walSize())
	require.LessOrEqual(t, maxFrames, 2*six, "the WAL is bounded: 40 batches written, at most 12 in the WAL")
	require.LessOrEqual(t, walSize(), 2*size, "the WAL file stops growing")
}

// TestCheckpointCatchesUpBeforeRestart: before a RESTART checkpoint, which
// holds writers back while it copies, the checkpointer runs PASSIVE ones
// again while the last one copied catchUpFrames or more (what writers
// added meanwhile), and stops at one that copied less. A reader's
// snapshot stands in for the writers here: a PASSIVE checkpoint copies
// only the frames before it.
func TestCheckpointCatchesUpBeforeRestart(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := testdb.SQLitePath(t)
	s, err := sqlitestore.Open(ctx, path, sqlitestore.Options{Logger: testdb.Logger(t), CheckpointInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	prj := storetest.MustProject(t, s)
	ms := make([]*monitors.Monitor, 50)
	for i := range ms {
		ms[i] = storetest.MustMonitor(t, s, prj.ID, fmt.Sprintf("job-%02d", i), nil)
	}
	at := storetest.T0
	batches := func(n int) {
		for range n {
			at = at.Add(time.Minute)
			var pings []*monitors.PingRecordParams
			for _, m := range ms {
				pings = append(pings, storetest.Ping(m, monitors.PingSuccess, at))
			}
			storetest.MustRecord(t, s, pings...)
		}
	}
	batches(1)
	_, _, err = sqlitestore.Checkpoint(s)
	require.NoError(t, err)

	// Below restartFrames, one PASSIVE checkpoint and nothing else.
	sqlitestore.SetRestartFrames(s, 1<<20)
	batches(1)
	passive, _, restarted, _, err := sqlitestore.CheckpointRounds(s)
	require.NoError(t, err)
	require.Equal(t, 1, passive)
	require.False(t, restarted)
	sqlitestore.SetRestartFrames(s, 1)

	// A reader's snapshot after the first batches: the first PASSIVE
	// checkpoint copies up to it, the second copies nothing more, and the
	// RESTART one gives up waiting for the reader.
	batches(20)
	reader, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	require.NoError(t, err)
	defer reader.Close()
	rtx, err := reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	var n int
	require.NoError(t, rtx.QueryRowContext(ctx, "SELECT count(*) FROM pings").Scan(&n))
	batches(20)
	passive, copied, restarted, busy, err := sqlitestore.CheckpointRounds(s)
	require.NoError(t, err)
	require.Equal(t, 2, passive, "a second PASSIVE checkpoint after one that copied much")
	require.Zero(t, copied, "the reader's snapshot stopped it")
	require.True(t, restarted)
	require.True(t, busy, "the RESTART checkpoint gave up waiting for the reader")

	// Once the reader is gone the rest is copied, and the WAL restarts.
	require.NoError(t, rtx.Rollback())
	passive, copied, restarted, busy, err = sqlitestore.CheckpointRounds(s)
	require.NoError(t, err)
	require.Equal(t, 2, passive)
	require.Zero(t, copied)
	require.True(t, restarted)
	require.False(t, busy)
	batches(1)
	frames, _, err := sqlitestore.Checkpoint(s)
	require.NoError(t, err)
	require.Less(t, frames, sqlitestore.CatchUpFrames*4, "the WAL started over: one batch in it")
}

// TestWALFileKeptUntilWritesSlowDown: no commit cuts the WAL file, so a WAL
// that starts over is written over its old file instead of cut and grown
// back; a checkpoint cuts the file once it is past the size limit and the
// WAL fills less than a quarter of it.
func TestWALFileKeptUntilWritesSlowDown(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, _, batch, walSize := walStore(t)

	var limit int64
	require.NoError(t, sqlitestore.Writer(s).QueryRowContext(ctx, "PRAGMA journal_size_limit").Scan(&limit))
	require.EqualValues(t, -1, limit, "the writer's commits never cut the WAL file")

	const n = walMonitors
	for range 6 {
		batch(n)
	}
	busy := walSize()
	sqlitestore.SetWALSizeLimit(s, busy/2)

	// The WAL fills its whole file: the checkpoint copies it and keeps the
	// file.
	r, err := sqlitestore.RunCheckpoint(s)
	require.NoError(t, err)
	require.False(t, r.Truncated)
	require.Equal(t, r.Frames, r.Checkpointed, "every frame copied")
	require.Equal(t, busy, walSize())

	// The next commit starts the WAL over at the beginning of its file, and
	// keeps the file.
	batch(1)
	require.Equal(t, busy, walSize(), "a commit that starts the WAL over does not cut its file")

	// Writes have slowed down: the WAL fills less than a quarter of a file
	// past the limit, so the checkpoint cuts the file.
	r, err = sqlitestore.RunCheckpoint(s)
	require.NoError(t, err)
	require.True(t, r.Restarted)
	require.True(t, r.Truncated)
	require.Zero(t, walSize())

	// Writes go on in the cut file, and a file below the limit is kept
	// however little of it the WAL fills.
	for range 2 {
		batch(n)
	}
	grown := walSize()
	require.Positive(t, grown)
	sqlitestore.SetWALSizeLimit(s, grown)
	_, err = sqlitestore.RunCheckpoint(s)
	require.NoError(t, err)
	batch(1)
	r, err = sqlitestore.RunCheckpoint(s)
	require.NoError(t, err)
	require.False(t, r.Truncated)
	require.Equal(t, grown, walSize())
}

// walMonitors is how many monitors walStore creates.
const walMonitors = 300

// walStore opens a store that never checkpoints on its own, with
// walMonitors monitors in project prj. batch records one ping for each of
// the first n monitors, a minute after the batch before; walSize is the
// size of the WAL file.
func walStore(t *testing.T) (s *sqlitestore.Store, prj *monitors.Project, batch func(n int), walSize func() int64) {
	t.Helper()
	s, err := sqlitestore.Open(t.Context(), testdb.SQLitePath(t), sqlitestore.Options{Logger: testdb.Logger(t), CheckpointInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	prj = storetest.MustProject(t, s)
	var create []*monitors.PingRecordParams
	for i := range walMonitors {
		slug := fmt.Sprintf("job-%03d", i)
		create = append(create, &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true,
			NewMonitor: storetest.NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: storetest.T0}})
	}
	storetest.MustRecord(t, s, create...)
	at := storetest.T0
	batch = func(n int) {
		at = at.Add(time.Minute)
		pings := make([]*monitors.PingRecordParams, n)
		for i := range pings {
			pings[i] = &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: fmt.Sprintf("job-%03d", i),
				Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at, RemoteAddr: "127.0.0.1", UserAgent: "test"}}
		}
		storetest.MustRecord(t, s, pings...)
	}
	walSize = func() int64 {
		fi, err := os.Stat(sqlitestore.Path(s) + "-wal")
		require.NoError(t, err)
		return fi.Size()
	}
	return s, prj, batch, walSize
}
