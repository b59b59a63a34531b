package ingest

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// keyLimiter limits the pings of each key with a token bucket per key
// (golang.org/x/time/rate). Buckets live in shards, each under its own lock,
// so concurrent pings of different keys rarely wait for one another. A
// bucket that has filled up again is the same as a new one, so sweep drops
// those: memory is bounded by the keys active in the last burst/rate
// seconds, not by every key ever seen (an unknown key is limited too,
// before any lookup, so a flood of made-up keys costs no database work).
type keyLimiter struct {
	limit  rate.Limit
	burst  int
	shards [64]limiterShard
}

type limiterShard struct {
	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// sweepAt is the number of buckets in one shard past which allow sweeps
// the shard before adding another.
const sweepAt = 4096

func newKeyLimiter(perSecond float64, burst int) *keyLimiter {
	if perSecond <= 0 {
		return nil
	}
	l := &keyLimiter{limit: rate.Limit(perSecond), burst: burst}
	for i := range l.shards {
		l.shards[i].buckets = make(map[string]*rate.Limiter)
	}
	return l
}

// allow takes one token from key's bucket at now. When there is none, it
// returns false and how long until there is.
func (l *keyLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	sh := &l.shards[hashKey(key)%uint32(len(l.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	b, ok := sh.buckets[key]
	if !ok {
		if len(sh.buckets) >= sweepAt {
			l.sweepShard(sh, now)
		}
		b = rate.NewLimiter(l.limit, l.burst)
		sh.buckets[key] = b
	}
	if b.AllowN(now, 1) {
		return true, 0
	}
	missing := 1 - b.TokensAt(now)
	wait := time.Duration(math.Ceil(missing / float64(l.limit) * float64(time.Second)))
	return false, max(wait, time.Nanosecond)
}

// empty reports whether key's bucket has no token at now, and how long
// until it has one. It makes no bucket: a key without one is full.
func (l *keyLimiter) empty(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	sh := &l.shards[hashKey(key)%uint32(len(l.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	b, ok := sh.buckets[key]
	if !ok {
		return false, 0
	}
	tokens := b.TokensAt(now)
	if tokens >= 1 {
		return false, 0
	}
	wait := time.Duration(math.Ceil((1 - tokens) / float64(l.limit) * float64(time.Second)))
	return true, max(wait, time.Nanosecond)
}

// sweep drops the buckets that are full again.
func (l *keyLimiter) sweep(now time.Time) {
	if l == nil {
		return
	}
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		l.sweepShard(sh, now)
		sh.mu.Unlock()
	}
}

func (l *keyLimiter) sweepShard(sh *limiterShard, now time.Time) {
	for k, b := range sh.buckets {
		if b.TokensAt(now) >= float64(l.burst) {
			delete(sh.buckets, k)
		}
	}
}

// size returns how many buckets are kept.
func (l *keyLimiter) size() int {
	if l == nil {
		return 0
	}
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.buckets)
		sh.mu.Unlock()
	}
	return n
}
