package monitors

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestScheduleCacheBounded checks that the cache keeps at most its size of
// schedules, however many distinct ones pass through it, that it keeps the
// most recently used, and that an evicted one parses again to an equal
// schedule.
func TestScheduleCacheBounded(t *testing.T) {
	t.Parallel()
	const size = 64
	c := newScheduleCache(size)
	spec := func(i int) ScheduleSpec {
		return ScheduleSpec{Kind: ScheduleCron, Expr: fmt.Sprintf("%d %d * * *", i%60, i/60%24), TZ: "Europe/Berlin"}
	}
	first, err := c.parse(spec(0))
	require.NoError(t, err)
	for i := 1; i < 10*size; i++ {
		if i%8 == 0 {
			again, err := c.parse(spec(0)) // kept in use: never evicted
			require.NoError(t, err)
			require.Same(t, first, again, "a schedule in use is parsed once")
		}
		_, err := c.parse(spec(i))
		require.NoError(t, err)
		require.LessOrEqual(t, c.lru.Len(), size, "after %d distinct schedules", i+1)
	}
	require.Equal(t, size, c.lru.Len())
	require.False(t, c.lru.Contains(spec(1)), "the least recently used are evicted")
	again, err := c.parse(spec(1))
	require.NoError(t, err)
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	want, err := parseSchedule(spec(1))
	require.NoError(t, err)
	require.Equal(t, want.Next(from), again.Next(from))

	// Errors are not cached: they are reported every time, and take no
	// room.
	n := c.lru.Len()
	for range 3 {
		_, err := c.parse(ScheduleSpec{Kind: ScheduleCron, Expr: "61 * * * *"})
		require.Error(t, err)
	}
	require.Equal(t, n, c.lru.Len())
}

// BenchmarkScheduleNext measures what a ping or an evaluation does with a
// monitor's schedule: ParseSchedule, then Next. "cached" is ParseSchedule
// (the cache warm); "uncached" parses the spec every time, as Vigil would
// without the cache. parse-cached and parse-uncached are the look-up or
// parse alone, next-only the computation of Next alone.
func BenchmarkScheduleNext(b *testing.B) {
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, spec := range []ScheduleSpec{
		{Kind: ScheduleCron, Expr: "30 2 * * *", TZ: "Europe/Berlin"},
		{Kind: ScheduleCron, Expr: "30 2 * * *", TZ: "Europe/Berlin", Dialect: DialectRobfig},
		{Kind: ScheduleCron, Expr: "0 30 2 ? * MON-FRI", TZ: "Europe/Berlin", Dialect: DialectQuartz},
		{Kind: ScheduleOnCalendar, Expr: "Mon..Fri 02:30", TZ: "Europe/Berlin"},
		{Kind: ScheduleInterval, EverySeconds: 3600},
	} {
		name := string(spec.Kind)
		if spec.Dialect != "" {
			name = string(spec.Dialect)
		} else if spec.Kind == ScheduleCron {
			name = "cronie"
		}
		at := func(i int) time.Time { return from.Add(time.Duration(i%1000) * 7 * time.Hour) }
		b.Run(name+"/cached", func(b *testing.B) {
			for i := range b.N {
				s, err := ParseSchedule(spec)
				if err != nil {
					b.Fatal(err)
				}
				s.Next(at(i))
			}
		})
		b.Run(name+"/uncached", func(b *testing.B) {
			for i := range b.N {
				s, err := parseSchedule(spec)
				if err != nil {
					b.Fatal(err)
				}
				s.Next(at(i))
			}
		})
		b.Run(name+"/parse-cached", func(b *testing.B) {
			for range b.N {
				if _, err := ParseSchedule(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parse-uncached", func(b *testing.B) {
			for range b.N {
				if _, err := parseSchedule(spec); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/next-only", func(b *testing.B) {
			s, err := parseSchedule(spec)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				s.Next(at(i))
			}
		})
	}
}
