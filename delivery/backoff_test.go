package delivery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
)

func TestBackoffDelay(t *testing.T) {
	t.Parallel()
	b := delivery.Backoff{}.WithDefaults()
	require.Equal(t, delivery.Backoff{Base: 10 * time.Second, Max: time.Hour, Jitter: 0.5}, b)
	for _, tc := range []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{1, 0, 10 * time.Second},
		{2, 0, 20 * time.Second},
		{3, 0, 40 * time.Second},
		{9, 0, 2560 * time.Second},
		{10, 0, time.Hour}, // 5120s, capped
		{500, 0, time.Hour},
		{0, 0, 10 * time.Second}, // attempts count from 1
		{1, 0.999999, 5*time.Second + 5*time.Microsecond},
		{1, 0.5, 7500 * time.Millisecond},
		{10, 1, 30 * time.Minute}, // r is clamped to [0, 1]
	} {
		require.Equal(t, tc.want, b.Delay(tc.attempt, tc.r), "attempt %d, r %v", tc.attempt, tc.r)
	}

	none := delivery.Backoff{Base: time.Second, Max: 4 * time.Second, Jitter: -1}.WithDefaults()
	require.Zero(t, none.Jitter)
	require.Equal(t, 4*time.Second, none.Delay(5, 0.9), "no jitter")
	require.Equal(t, time.Millisecond, delivery.Backoff{Base: time.Nanosecond, Max: time.Nanosecond}.Delay(1, 0),
		"never less than a millisecond")

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, now.Add(20*time.Second), b.NextAttemptAt(now, 2, 0, 0))
	require.Equal(t, now.Add(90*time.Second), b.NextAttemptAt(now, 2, 90*time.Second, 0), "the receiver's wait wins")
	require.Equal(t, now.Add(time.Second), b.NextAttemptAt(now, 9, time.Second, 0), "even when shorter")
}
