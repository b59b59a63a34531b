package monitors_test

import (
	"testing"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// BenchmarkNextDeadline derives the next deadline of an interval monitor
// that was just pinged, as every ping's write does.
func BenchmarkNextDeadline(b *testing.B) {
	m := &monitors.Monitor{ID: "m", Name: "job", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60}}
	m.ApplyDefaults()
	if _, err := monitors.ApplyPing(m, &monitors.Ping{Kind: monitors.PingSuccess, At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if m.NextDeadline() == nil {
			b.Fatal("no deadline")
		}
	}
}
