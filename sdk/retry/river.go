package retry

import (
	"math"
	"time"
)

// RiverMaxAttemptsDefault is River's default MaxAttempts: total executions.
const RiverMaxAttemptsDefault = 25

// River is River's DefaultClientRetryPolicy (riverqueue/river v0.51):
// after the a-th failed attempt, the next runs a^4 seconds later, ±10%
// uniform jitter (1 s after the first failure, 16 s after the second,
// 1 min 21 s after the third). MaxAttempts counts total executions, like
// River's; 0 means River's default of 25.
type River struct {
	MaxAttempts int
}

var _ Policy = River{}

const riverJitter = 0.1

// Name implements [Policy].
func (River) Name() string { return "river-default" }

func (p River) maxAttempts() int {
	if p.MaxAttempts == 0 {
		return RiverMaxAttemptsDefault
	}
	return p.MaxAttempts
}

// Delay implements [Policy].
func (p River) Delay(attempt int, rnd Rand) (time.Duration, bool) {
	if attempt < 1 || attempt >= p.maxAttempts() {
		return 0, false
	}
	return seconds(math.Pow(float64(attempt), 4) * (1 - riverJitter + 2*riverJitter*orGlobal(rnd).Float64())), true
}

// MaxRetries implements [Policy].
func (p River) MaxRetries() int { return max(p.maxAttempts()-1, 0) }

// MaxDelays implements [Policy].
func (p River) MaxDelays() []time.Duration {
	return maxDelays(p.MaxRetries(), func(a int) time.Duration {
		return seconds(math.Pow(float64(a), 4) * (1 + riverJitter))
	})
}
