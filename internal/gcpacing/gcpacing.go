// Package gcpacing sets how often the Go garbage collector of a Vigil
// server process runs, unless the environment already says.
//
// A server's live heap is small (a few MB, whatever the number of
// monitors: no per-monitor state is kept in memory) while a busy ingest
// allocates fast, so at Go's default GOGC=100 the collector runs many
// times a second and its marking is a large share of the CPU of a ping.
// A higher percent lets the heap grow further past the live heap before
// each cycle: fewer cycles for the same work, for more resident memory.
// docs/benchmarks.md ("Sixth round: the collector's pacing and the ping's
// allocations") has the measurements behind PercentDefault.
package gcpacing

import "runtime/debug"

// PercentDefault is the collector's percent (GOGC) of a Vigil server
// process when the environment sets no GOGC.
const PercentDefault = 400

// Apply sets the collector's percent to PercentDefault when getenv("GOGC")
// is empty, and returns the percent it set; it returns 0 and changes
// nothing when GOGC is set, which the Go runtime has already applied. A
// GOMEMLIMIT of the environment applies either way (the runtime reads it):
// with a memory limit, the collector runs more often as the heap nears it.
func Apply(getenv func(string) string) int {
	if getenv("GOGC") != "" {
		return 0
	}
	debug.SetGCPercent(PercentDefault)
	return PercentDefault
}
