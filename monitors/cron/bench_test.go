package cron

import (
	"testing"
	"time"
)

// BenchmarkNext measures Next for typical expressions. Each iteration
// starts from a different instant, so zone lookups are not cached.
func BenchmarkNext(b *testing.B) {
	cases := []struct {
		name, expr, zone string
	}{
		{"every5min/UTC", "*/5 * * * *", "UTC"},
		{"every5min/NewYork", "*/5 * * * *", "America/New_York"},
		{"daily0230/NewYork", "30 2 * * *", "America/New_York"},
		{"weekdays0900/Berlin", "0 9 * * MON-FRI", "Europe/Berlin"},
		{"lastFriday/NewYork", "1 1 * * 5L", "America/New_York"},
		{"yearly/LordHowe", "@yearly", "Australia/Lord_Howe"},
		{"leapMonday/UTC", "0 0 * 2 MON#5", "UTC"},
		{"seconds/Santiago", "*/15 * * * * *", "America/Santiago"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			e, err := Parse(c.expr)
			if err != nil {
				b.Fatal(err)
			}
			loc := mustLoad(b, c.zone)
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			i := 0
			for b.Loop() {
				// Step through the year in 7h13m strides.
				if e.Next(start.Add(time.Duration(i%1213)*(7*time.Hour+13*time.Minute)), loc).IsZero() {
					b.Fatal("no next fire")
				}
				i++
			}
		})
	}
}

func BenchmarkPrev(b *testing.B) {
	e, err := Parse("30 2 * * *")
	if err != nil {
		b.Fatal(err)
	}
	loc := mustLoad(b, "America/New_York")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		if e.Prev(start.Add(time.Duration(i%1213)*(7*time.Hour+13*time.Minute)), loc).IsZero() {
			b.Fatal("no previous fire")
		}
		i++
	}
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse("0,30 9-17 * * MON-FRI"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRobfigNext compares, for one daily expression in New York, this
// package's Next (cronie, the baseline), robfig/cron's own Schedule.Next
// (LibraryNext), and the robfig dialect's Next, which follows the chain of
// fire times (Orbit) and so calls robfig's Next about ten times.
func BenchmarkRobfigNext(b *testing.B) {
	loc := mustLoad(b, "America/New_York")
	e, err := Parse("30 2 * * *")
	if err != nil {
		b.Fatal(err)
	}
	r, err := ParseRobfig("30 2 * * *")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		next func(time.Time) time.Time
	}{
		{"cronie", func(t time.Time) time.Time { return e.Next(t, loc) }},
		{"robfig-library", func(t time.Time) time.Time { return r.LibraryNext(t, loc) }},
		{"robfig-dialect", func(t time.Time) time.Time { return r.Next(t, loc) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if c.next(start.Add(time.Duration(i%1213) * (7*time.Hour + 13*time.Minute))).IsZero() {
					b.Fatal("no next fire")
				}
				i++
			}
		})
	}
}
