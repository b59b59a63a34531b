package retry

import (
	"math"
	"time"
)

// HangfireAttemptsDefault is the number of retries of Hangfire's global
// AutomaticRetry filter.
const HangfireAttemptsDefault = 10

// Hangfire is Hangfire's AutomaticRetry filter (checked against Hangfire
// 1.8.25).
//
// Attempts counts retries, not executions: Attempts = 10 allows one run and
// ten retries, and 0 disables retries. Without DelaysInSeconds the delay
// before retry n is Hangfire's built-in formula
//
//	(n-1)^4 + 15 + r*n seconds, r a uniform integer in 0..29
//
// With DelaysInSeconds, retry n waits DelaysInSeconds[n-1], and the last
// entry repeats when there are more attempts than entries.
type Hangfire struct {
	Attempts        int
	DelaysInSeconds []int
}

// HangfireDefault is Hangfire's default policy: ten retries on the built-in
// formula, from 15-44 s before the first to about 1 h 50 min - 1 h 54 min
// before the tenth.
func HangfireDefault() Hangfire {
	return Hangfire{Attempts: HangfireAttemptsDefault}
}

var _ Policy = Hangfire{}

// Name is "hangfire-default" for the built-in formula and "hangfire-delays"
// with DelaysInSeconds.
func (p Hangfire) Name() string {
	if len(p.DelaysInSeconds) > 0 {
		return "hangfire-delays"
	}
	return "hangfire-default"
}

// Delay implements [Policy]. Retry n follows failed execution n.
func (p Hangfire) Delay(attempt int, rnd Rand) (time.Duration, bool) {
	if attempt < 1 || attempt > p.Attempts {
		return 0, false
	}
	if len(p.DelaysInSeconds) > 0 {
		return p.listDelay(attempt), true
	}
	r := orGlobal(rnd).IntN(30)
	return hangfireFormula(attempt, r), true
}

// MaxRetries implements [Policy]: Attempts.
func (p Hangfire) MaxRetries() int { return max(p.Attempts, 0) }

// MaxDelays implements [Policy]: the formula with r = 29, or the list.
func (p Hangfire) MaxDelays() []time.Duration {
	return maxDelays(p.Attempts, func(n int) time.Duration {
		if len(p.DelaysInSeconds) > 0 {
			return p.listDelay(n)
		}
		return hangfireFormula(n, 29)
	})
}

func (p Hangfire) listDelay(retry int) time.Duration {
	s := p.DelaysInSeconds[min(retry, len(p.DelaysInSeconds))-1]
	return seconds(float64(s))
}

// hangfireFormula is Hangfire's DefaultDelayInSecondsByAttemptFunc for retry
// n and random draw r.
func hangfireFormula(n, r int) time.Duration {
	return seconds(math.Pow(float64(n-1), 4) + 15 + float64(r)*float64(n))
}
