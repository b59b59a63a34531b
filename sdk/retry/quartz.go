package retry

import (
	"math"
	"time"
)

// The Quartz policies follow Quartz.NET's trigger retry policies. In all of
// them MaxAttempts counts retries after the first failure: QuartzFixed{3, …}
// runs a job that keeps failing four times. They implement
// [OccurrenceBounded]: a retry that would land at, or within a second of,
// the trigger's next occurrence is dropped, so an hourly trigger with a
// 90-minute wait is never retried.

// QuartzFixed waits Interval before every retry.
type QuartzFixed struct {
	MaxAttempts int
	Interval    time.Duration
}

// QuartzExponential waits InitialDelay * Factor^(k-1) before retry k, capped
// at MaxDelay (0: no cap). With Jitter j, each wait is multiplied by a value
// drawn uniformly from [1-j, 1+j) and is still bounded by MaxDelay.
type QuartzExponential struct {
	MaxAttempts  int
	InitialDelay time.Duration
	Factor       float64
	MaxDelay     time.Duration
	Jitter       float64
}

// QuartzExplicit lists the waits: len(Delays) retries, retry k waiting
// Delays[k-1] (the last entry repeats if more retries are asked for).
type QuartzExplicit struct {
	Delays []time.Duration
}

var (
	_ OccurrenceBounded = QuartzFixed{}
	_ OccurrenceBounded = QuartzExponential{}
	_ OccurrenceBounded = QuartzExplicit{}
)

// Name implements [Policy].
func (QuartzFixed) Name() string { return "quartz-fixed" }

// Delay implements [Policy].
func (p QuartzFixed) Delay(attempt int, _ Rand) (time.Duration, bool) {
	if attempt < 1 || attempt > p.MaxAttempts {
		return 0, false
	}
	return p.Interval, true
}

// DelayBefore implements [OccurrenceBounded].
func (p QuartzFixed) DelayBefore(attempt int, rnd Rand, failedAt, next time.Time) (time.Duration, bool) {
	return beforeNext(p, attempt, rnd, failedAt, next)
}

// MaxRetries implements [Policy].
func (p QuartzFixed) MaxRetries() int { return max(p.MaxAttempts, 0) }

// MaxDelays implements [Policy].
func (p QuartzFixed) MaxDelays() []time.Duration {
	return maxDelays(p.MaxAttempts, func(int) time.Duration { return p.Interval })
}

// Name implements [Policy].
func (QuartzExponential) Name() string { return "quartz-exponential" }

// Delay implements [Policy].
func (p QuartzExponential) Delay(attempt int, rnd Rand) (time.Duration, bool) {
	if attempt < 1 || attempt > p.MaxAttempts {
		return 0, false
	}
	d := p.base(attempt)
	if p.Jitter > 0 {
		d = p.capped(scale(d, 1-p.Jitter+2*p.Jitter*orGlobal(rnd).Float64()))
	}
	return d, true
}

// DelayBefore implements [OccurrenceBounded].
func (p QuartzExponential) DelayBefore(attempt int, rnd Rand, failedAt, next time.Time) (time.Duration, bool) {
	return beforeNext(p, attempt, rnd, failedAt, next)
}

// MaxRetries implements [Policy].
func (p QuartzExponential) MaxRetries() int { return max(p.MaxAttempts, 0) }

// MaxDelays implements [Policy].
func (p QuartzExponential) MaxDelays() []time.Duration {
	return maxDelays(p.MaxAttempts, func(k int) time.Duration {
		return p.capped(scale(p.base(k), 1+p.Jitter))
	})
}

func (p QuartzExponential) base(k int) time.Duration {
	return p.capped(seconds(p.InitialDelay.Seconds() * math.Pow(p.Factor, float64(k-1))))
}

func (p QuartzExponential) capped(d time.Duration) time.Duration {
	if p.MaxDelay > 0 {
		return min(d, p.MaxDelay)
	}
	return d
}

// Name implements [Policy].
func (QuartzExplicit) Name() string { return "quartz-explicit" }

// Delay implements [Policy].
func (p QuartzExplicit) Delay(attempt int, _ Rand) (time.Duration, bool) {
	if attempt < 1 || attempt > len(p.Delays) {
		return 0, false
	}
	return listDelay(p.Delays, attempt), true
}

// DelayBefore implements [OccurrenceBounded].
func (p QuartzExplicit) DelayBefore(attempt int, rnd Rand, failedAt, next time.Time) (time.Duration, bool) {
	return beforeNext(p, attempt, rnd, failedAt, next)
}

// MaxRetries implements [Policy].
func (p QuartzExplicit) MaxRetries() int { return len(p.Delays) }

// MaxDelays implements [Policy].
func (p QuartzExplicit) MaxDelays() []time.Duration {
	return maxDelays(len(p.Delays), func(k int) time.Duration { return listDelay(p.Delays, k) })
}

// quartzNextMargin is how close to the next occurrence a retry may land
// before Quartz drops it.
const quartzNextMargin = time.Second

// beforeNext applies Quartz's rule that a retry never displaces the
// trigger's next occurrence.
func beforeNext(p Policy, attempt int, rnd Rand, failedAt, next time.Time) (time.Duration, bool) {
	d, ok := p.Delay(attempt, rnd)
	if !ok || next.IsZero() {
		return d, ok
	}
	if !failedAt.Add(d).Before(next.Add(-quartzNextMargin)) {
		return 0, false
	}
	return d, true
}
