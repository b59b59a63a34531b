package quartz

import (
	"testing"
	"time"
)

// BenchmarkTimeAfter is one step of Quartz's algorithm; BenchmarkNext is
// what the state machine calls, which follows the chain (cron.Orbit).
func BenchmarkTimeAfter(b *testing.B) {
	e, loc := benchExpr(b)
	t := time.Date(2026, 3, 1, 0, 0, 0, 0, loc)
	for b.Loop() {
		t = e.TimeAfter(t, loc)
	}
}

func BenchmarkNext(b *testing.B) {
	e, loc := benchExpr(b)
	t := time.Date(2026, 3, 1, 0, 0, 0, 0, loc)
	for b.Loop() {
		t = e.Next(t, loc)
	}
}

func benchExpr(b *testing.B) (*Expr, *time.Location) {
	b.Helper()
	e, err := Parse("0 30 2 * * ?")
	if err != nil {
		b.Fatal(err)
	}
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		b.Fatal(err)
	}
	return e, loc
}
