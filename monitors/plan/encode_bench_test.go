package plan

import (
	"testing"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// benchStateMonitor is an interval monitor after three success pings, the
// state "vigil bench ingest" pings: what a ping's batch decodes and
// encodes once for each monitor.
func benchStateMonitor(tb testing.TB) (*monitors.Monitor, []byte) {
	m := &monitors.Monitor{ID: "m", Name: "job", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 60}}
	m.ApplyDefaults()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := monitors.ApplyPing(m, &monitors.Ping{Kind: monitors.PingSuccess, At: at.Add(time.Duration(i) * time.Minute)}); err != nil {
			tb.Fatal(err)
		}
	}
	st, err := EncodeState(m.State)
	if err != nil {
		tb.Fatal(err)
	}
	return m, st
}

func BenchmarkDecodeMonitorJSON(b *testing.B) {
	_, st := benchStateMonitor(b)
	b.ReportAllocs()
	for b.Loop() {
		var m monitors.Monitor
		if err := DecodeMonitorJSON(&m, st, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeState(b *testing.B) {
	m, _ := benchStateMonitor(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeState(m.State); err != nil {
			b.Fatal(err)
		}
	}
}
