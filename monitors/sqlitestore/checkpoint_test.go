package sqlitestore_test

import (
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
	s, err := sqlitestore.Open(ctx, testdb.SQLitePath(t), sqlitestore.Options{Logger: testdb.Logger(t), CheckpointInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	prj := storetest.MustProject(t, s)
	const n = 300
	var create []*monitors.PingRecordParams
	for i := range n {
		slug := fmt.Sprintf("job-%03d", i)
		create = append(create, &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: slug, Create: true,
			NewMonitor: storetest.NewMonitor("", slug, nil), Ping: monitors.Ping{Kind: monitors.PingSuccess, At: storetest.T0}})
	}
	storetest.MustRecord(t, s, create...)

	at := storetest.T0
	batch := func() {
		at = at.Add(time.Minute)
		pings := make([]*monitors.PingRecordParams, n)
		for i := range pings {
			pings[i] = &monitors.PingRecordParams{ProjectPingKey: prj.PingKey, Slug: fmt.Sprintf("job-%03d", i),
				Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at, RemoteAddr: "127.0.0.1", UserAgent: "test"}}
		}
		storetest.MustRecord(t, s, pings...)
	}
	walSize := func() int64 {
		fi, err := os.Stat(sqlitestore.Path(s) + "-wal")
		require.NoError(t, err)
		return fi.Size()
	}

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
