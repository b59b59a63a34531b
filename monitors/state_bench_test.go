package monitors_test

import (
	"testing"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// BenchmarkApplyPingRun applies a run's start and success pings to an
// hourly monitor, one run an hour, with the run rules off (as every
// monitor was before them) and with all of them on.
func BenchmarkApplyPingRun(b *testing.B) {
	for _, bc := range []struct {
		name string
		set  func(m *monitors.Monitor)
	}{
		{"rules-off", func(*monitors.Monitor) {}},
		{"rules-on", func(m *monitors.Monitor) {
			m.MinRuntimeSeconds, m.EarlySeconds, m.TooOften = 60, 300, monitors.TooOftenAlert
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := &monitors.Monitor{ID: "m", Name: "job", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *"},
				MaxRuntimeSeconds: 3600}
			bc.set(m)
			m.ApplyDefaults()
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			b.ReportAllocs()
			for b.Loop() {
				start := &monitors.Ping{Kind: monitors.PingStart, At: at, RID: "r"}
				end := &monitors.Ping{Kind: monitors.PingSuccess, At: at.Add(2 * time.Minute), RID: "r"}
				if _, err := monitors.ApplyPing(m, start); err != nil {
					b.Fatal(err)
				}
				if _, err := monitors.ApplyPing(m, end); err != nil {
					b.Fatal(err)
				}
				at = at.Add(time.Hour)
			}
		})
	}
}
