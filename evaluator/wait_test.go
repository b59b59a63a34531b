package evaluator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWait(t *testing.T) {
	t.Parallel()
	e, err := New(nil, Config{})
	require.NoError(t, err)
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	for _, tc := range []struct {
		name string
		pass Pass
		want time.Duration
	}{
		{"nothing will fall due: poll", Pass{}, time.Second},
		{"a deadline soon: wake then", Pass{NextDeadline: at(300 * time.Millisecond)}, 300 * time.Millisecond},
		{"a deadline far: poll", Pass{NextDeadline: at(time.Hour)}, time.Second},
		{"deadlines close together share a pass", Pass{NextDeadline: at(5 * time.Millisecond)}, passGapMin},
		{"due but held by another evaluator: look again soon", Pass{NextDeadline: at(-time.Second)}, passGapMin},
	} {
		require.Equal(t, tc.want, e.wait(&tc.pass, now), tc.name)
	}
}
