package delivery

import (
	"math"
	"time"
)

// Defaults of [Backoff].
const (
	BackoffBaseDefault   = 10 * time.Second
	BackoffMaxDefault    = time.Hour
	BackoffJitterDefault = 0.5
)

// Backoff is the wait between delivery attempts when the receiver did not
// say how long to wait: Base after the first failed attempt, doubling after
// each one, up to Max, less a random part of up to Jitter of it, so that
// deliveries that failed together do not come back together.
//
// With the defaults the waits are about 10s, 20s, 40s, ..., then an hour
// each: some 30 attempts in the default retry window of a day.
type Backoff struct {
	// Base is the wait after the first failed attempt; 0 is
	// BackoffBaseDefault.
	Base time.Duration
	// Max caps the wait; 0 is BackoffMaxDefault.
	Max time.Duration
	// Jitter is the fraction of the wait that is random, up to 1. 0 is
	// BackoffJitterDefault; a negative value means no jitter.
	Jitter float64
}

// WithDefaults returns b with zero fields set to their defaults.
func (b Backoff) WithDefaults() Backoff {
	if b.Base <= 0 {
		b.Base = BackoffBaseDefault
	}
	if b.Max <= 0 {
		b.Max = BackoffMaxDefault
	}
	if b.Max < b.Base {
		b.Max = b.Base
	}
	if b.Jitter == 0 {
		b.Jitter = BackoffJitterDefault
	}
	b.Jitter = min(max(b.Jitter, 0), 1)
	return b
}

// Delay returns the wait after the attempt-th failed attempt (from 1), for
// a random draw r in [0, 1): the exponential wait, less r·Jitter of it. It
// is pure; callers draw r.
func (b Backoff) Delay(attempt int, r float64) time.Duration {
	attempt = max(attempt, 1)
	d := b.Max
	if exp := float64(b.Base) * math.Pow(2, float64(attempt-1)); exp < float64(b.Max) {
		d = time.Duration(exp)
	}
	r = min(max(r, 0), 1)
	jitter := min(max(b.Jitter, 0), 1)
	return max(d-time.Duration(float64(d)*jitter*r), time.Millisecond)
}

// NextAttemptAt returns when the attempt after the attempt-th failed one is
// due: now plus the receiver's wait when it gave one (retryAfter > 0), or
// plus Delay(attempt, r).
func (b Backoff) NextAttemptAt(now time.Time, attempt int, retryAfter time.Duration, r float64) time.Time {
	if retryAfter > 0 {
		return now.Add(retryAfter)
	}
	return now.Add(b.Delay(attempt, r))
}
