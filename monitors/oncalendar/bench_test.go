package oncalendar_test

import (
	"testing"
	"time"

	"github.com/vigilhq/vigil/monitors/oncalendar"
)

// BenchmarkNext measures Next (the running timer's chain) and SystemdNext
// (one search of systemd's) of a daily and a frequent expression, from
// instants spread over a year, and from instants within the hours after
// an autumn change, where Next walks the chain from before the change.
func BenchmarkNext(b *testing.B) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		b.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, ny)
	autumn := time.Date(2026, 11, 1, 6, 0, 0, 0, time.UTC) // 01:00 EST, the second pass
	for _, expr := range []string{"Mon..Fri 02:30", "*:0/15"} {
		e, err := oncalendar.Parse(expr, ny)
		if err != nil {
			b.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			next func(time.Time) time.Time
			from func(i int) time.Time
		}{
			{"SystemdNext/year", e.SystemdNext, func(i int) time.Time { return start.Add(time.Duration(i%1213) * 7 * time.Hour) }},
			{"Next/year", e.Next, func(i int) time.Time { return start.Add(time.Duration(i%1213) * 7 * time.Hour) }},
			{"Next/autumn", e.Next, func(i int) time.Time { return autumn.Add(time.Duration(i%97) * time.Minute) }},
		} {
			b.Run(expr+"/"+tc.name, func(b *testing.B) {
				for i := range b.N {
					if tc.next(tc.from(i)).IsZero() {
						b.Fatal("no elapse")
					}
				}
			})
		}
	}
}
