package storetest

import (
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// ChainEnd is how a simulated retry chain ends.
type ChainEnd int

// Chain ends.
const (
	// ChainSucceeds: the last attempt succeeds.
	ChainSucceeds ChainEnd = iota
	// ChainFails: the last attempt fails with no retry announced.
	ChainFails
	// ChainGoesSilent: the last attempt fails announcing a retry that
	// never comes (its job was deleted, its server died).
	ChainGoesSilent
)

// HangfireDelay is Hangfire's default delay before retry n at its longest:
// (n-1)^4 + 15 + 29n seconds.
func HangfireDelay(n int) time.Duration {
	return time.Duration((n-1)*(n-1)*(n-1)*(n-1)+15+29*n) * time.Second
}

// HangfireChain returns the pings of one occurrence of a recurring job
// under Hangfire's default retry policy at its longest delays, in time
// order: attempts 1 to last start at occ and at each announced retry, run
// 5 seconds, and fail announcing the next retry, until end. Each ping has
// a run id of its own attempt and, when keyed, names the occurrence with
// scheduled_at, as the SDK does.
func HangfireChain(occ time.Time, last int, end ChainEnd, keyed bool) []monitors.Ping {
	var out []monitors.Ping
	t := occ
	for n := 1; n <= last; n++ {
		p := monitors.Ping{Kind: monitors.PingStart, At: t, Attempt: n, RID: fmt.Sprintf("%s/%d", occ.Format("15:04"), n)}
		if keyed {
			p.ScheduledAt = ptr(occ)
		}
		out = append(out, p)
		t = t.Add(5 * time.Second)
		p.At = t
		switch {
		case n == last && end == ChainSucceeds:
			p.Kind = monitors.PingSuccess
			return append(out, p)
		case n == last && end == ChainFails:
			p.Kind = monitors.PingFail
			return append(out, p)
		}
		next := t.Add(HangfireDelay(n))
		p.Kind, p.RetryAt = monitors.PingFail, ptr(next)
		out = append(out, p)
		t = next
	}
	return out
}
