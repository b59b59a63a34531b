package server

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOneSender: the delivery service is made once, on the queue the
// store's opening returned, and the test notifications of the API and the
// dashboard go through its Sender (and HTTP client).
func TestOneSender(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := New(ctx, Config{DatabaseURL: filepath.Join(t.TempDir(), "vigil.db"), Listen: "127.0.0.1:0",
		LogLevel: "info", LogFormat: "text", KeepPings: 100, KeepRuns: 100, PruneInterval: time.Minute}, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.store.Close() })
	svc, err := srv.delivery()
	require.NoError(t, err)
	again, err := srv.delivery()
	require.NoError(t, err)
	require.Same(t, svc, again)
	tester, ok := srv.apiChannelTester().(channelTester)
	require.True(t, ok)
	require.Same(t, svc.Sender(), tester.sender)
}
