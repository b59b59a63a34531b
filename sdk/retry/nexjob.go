package retry

import (
	"math"
	"time"
)

// NexJobAttemptsDefault is NexJob's default options.MaxAttempts: total
// executions, so nine retries.
const NexJobAttemptsDefault = 10

// NexJob is NexJob's retry behaviour.
//
// Attempts counts total executions including the first run: 5 means one run
// and four retries, and 0 or 1 means no retry.
//
// Without InitialDelay, the wait after the a-th failed execution is NexJob's
// default RetryDelayFactory:
//
//	a^4 + 15 + r*(a+1) seconds, r a uniform integer in 0..29
//
// With InitialDelay (the [Retry] attribute), the wait before retry k is
// InitialDelay * Multiplier^(k-1), capped at MaxDelay (0: no cap), then
// multiplied by a uniform jitter in [0.9, 1.1). The cap applies before the
// jitter, so a delay can end up to 10% above MaxDelay. Multiplier 0 means
// NexJob's default of 2.
type NexJob struct {
	Attempts     int
	InitialDelay time.Duration
	Multiplier   float64
	MaxDelay     time.Duration
}

// NexJobDefault is NexJob's default policy: ten executions on the built-in
// curve, 16-74 s after the first failure.
func NexJobDefault() NexJob {
	return NexJob{Attempts: NexJobAttemptsDefault}
}

var _ Policy = NexJob{}

// nexJobJitter is the fraction either way of NexJob's [Retry] jitter.
const nexJobJitter = 0.1

// Name is "nexjob-default" for the built-in curve and "nexjob-retry" for an
// exponential [Retry] policy.
func (p NexJob) Name() string {
	if p.InitialDelay > 0 {
		return "nexjob-retry"
	}
	return "nexjob-default"
}

// Delay implements [Policy].
func (p NexJob) Delay(attempt int, rnd Rand) (time.Duration, bool) {
	if attempt < 1 || attempt >= p.Attempts {
		return 0, false
	}
	rnd = orGlobal(rnd)
	if p.InitialDelay > 0 {
		jitter := 1 - nexJobJitter + 2*nexJobJitter*rnd.Float64()
		return scale(p.base(attempt), jitter), true
	}
	return nexJobCurve(attempt, rnd.IntN(30)), true
}

// MaxRetries implements [Policy]: Attempts - 1.
func (p NexJob) MaxRetries() int { return max(p.Attempts-1, 0) }

// MaxDelays implements [Policy].
func (p NexJob) MaxDelays() []time.Duration {
	return maxDelays(p.Attempts-1, func(k int) time.Duration {
		if p.InitialDelay > 0 {
			return scale(p.base(k), 1+nexJobJitter)
		}
		return nexJobCurve(k, 29)
	})
}

// base is the capped exponential delay before retry k, without jitter.
func (p NexJob) base(k int) time.Duration {
	m := p.Multiplier
	if m == 0 {
		m = 2
	}
	d := seconds(p.InitialDelay.Seconds() * math.Pow(m, float64(k-1)))
	if p.MaxDelay > 0 {
		d = min(d, p.MaxDelay)
	}
	return d
}

// nexJobCurve is NexJob's default RetryDelayFactory after a attempts.
func nexJobCurve(a, r int) time.Duration {
	return seconds(math.Pow(float64(a), 4) + 15 + float64(r)*float64(a+1))
}
