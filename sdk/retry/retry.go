package retry

import (
	"math"
	"math/rand/v2"
	"time"
)

// Rand is the randomness a policy draws its jitter from. A *rand.Rand from
// math/rand/v2 satisfies it; tests pass a fixed one so delays are exact.
type Rand interface {
	// IntN returns a uniform integer in [0, n).
	IntN(n int) int
	// Float64 returns a uniform float in [0, 1).
	Float64() float64
}

// Policy is a scheduler's retry policy.
//
// attempt is the number of the execution that just failed: 1 for the first
// run of an occurrence, 2 for its first retry, and so on.
type Policy interface {
	// Name identifies the policy in a monitor declaration, such as
	// "hangfire-default".
	Name() string
	// Delay reports how long the scheduler waits after failed execution
	// attempt before it runs the next one, and false when it does not retry.
	// A nil rnd draws from math/rand/v2's global source.
	Delay(attempt int, rnd Rand) (time.Duration, bool)
	// MaxRetries is the number of retries after the first execution.
	MaxRetries() int
	// MaxDelays lists the longest wait before each retry: element i is the
	// worst case before retry i+1, and its length is MaxRetries capped at
	// [MaxDelaysLimit].
	MaxDelays() []time.Duration
}

// OccurrenceBounded is implemented by policies whose retries must not run
// into the next occurrence of a recurring schedule (Quartz's rule).
type OccurrenceBounded interface {
	Policy
	// DelayBefore is Delay for an execution that failed at failedAt when the
	// schedule's next occurrence is next. A zero next means no next
	// occurrence is known, and DelayBefore behaves like Delay.
	DelayBefore(attempt int, rnd Rand, failedAt, next time.Time) (time.Duration, bool)
}

// MaxDelaysLimit caps the length of [Policy.MaxDelays], so that a policy with
// an absurd number of retries still declares in a bounded payload.
const MaxDelaysLimit = 100

// maxDuration is the largest time.Duration, about 292 years.
const maxDuration = time.Duration(math.MaxInt64)

// globalRand draws from math/rand/v2's top-level functions.
type globalRand struct{}

func (globalRand) IntN(n int) int   { return rand.IntN(n) }
func (globalRand) Float64() float64 { return rand.Float64() }

func orGlobal(rnd Rand) Rand {
	if rnd == nil {
		return globalRand{}
	}
	return rnd
}

// seconds converts a float number of seconds to a Duration, saturating at
// the largest Duration instead of overflowing.
func seconds(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	if s >= maxDuration.Seconds() {
		return maxDuration
	}
	return time.Duration(s * float64(time.Second))
}

// scale multiplies d by f, saturating like [seconds].
func scale(d time.Duration, f float64) time.Duration {
	return seconds(d.Seconds() * f)
}

// maxDelays calls worst for retries 1..n (n capped at MaxDelaysLimit).
func maxDelays(n int, worst func(retry int) time.Duration) []time.Duration {
	n = min(n, MaxDelaysLimit)
	if n <= 0 {
		return nil
	}
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = worst(i + 1)
	}
	return out
}

// listDelay returns delays[retry-1], repeating the last entry past the end.
func listDelay(delays []time.Duration, retry int) time.Duration {
	if len(delays) == 0 {
		return 0
	}
	return delays[min(retry, len(delays))-1]
}
