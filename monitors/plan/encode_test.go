package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// TestDecodeListedGivesCopies: the list cache hands out copies, so that a
// caller changing one monitor's state or retry policy changes no other
// monitor read from the same JSON.
func TestDecodeListedGivesCopies(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	st := monitors.State{Status: monitors.StatusRetrying, LastPingAt: at,
		Retries: []monitors.RetryWait{{At: at, FailAt: at}}, Open: map[monitors.IncidentKind]time.Time{monitors.IncidentFailed: at}}
	state, err := EncodeState(st)
	require.NoError(t, err)
	retry, err := EncodeRetryPolicy(&monitors.RetryPolicy{MaxRetries: 2, MaxDelaysSeconds: []int64{10, 20}})
	require.NoError(t, err)

	var first, second, plain monitors.Monitor
	require.NoError(t, decodeListed(&first, state, retry))
	require.NoError(t, DecodeMonitorJSON(&plain, state, retry))
	require.Equal(t, plain, first, "the same as decoding it")
	first.State.Retries[0].Attempt = 9
	first.State.Open[monitors.IncidentMissed] = at
	first.RetryPolicy.MaxDelaysSeconds[0] = 99
	require.NoError(t, decodeListed(&second, state, retry))
	require.Equal(t, plain, second, "from the cache, untouched by the change to the first")
}
