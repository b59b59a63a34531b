package retry_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/sdk/retry"
)

// fixedRand draws the smallest integer (or the largest with high) and a
// fixed float, so delays are exact.
type fixedRand struct {
	high bool
	f    float64
}

func (r fixedRand) IntN(n int) int {
	if r.high {
		return n - 1
	}
	return 0
}

func (r fixedRand) Float64() float64 { return r.f }

var (
	lowest  = fixedRand{f: 0}
	highest = fixedRand{high: true, f: 1 - 1e-12}
)

// within asserts that got is want seconds, give or take tol seconds: the
// articles print rounded figures.
func within(t *testing.T, want, tol float64, got time.Duration, msg string) {
	t.Helper()
	require.InDelta(t, want, got.Seconds(), tol, msg)
}

func TestHangfireDefaultMatchesArticleTable(t *testing.T) {
	t.Parallel()
	p := retry.HangfireDefault()
	require.Equal(t, "hangfire-default", p.Name())

	// "Hangfire Automatic Retry", table "The Delay Formula": delay before
	// retry n and time elapsed since the first failure, low and high, in
	// seconds, with the precision the article prints them at.
	const s, m, h = 1.0, 60.0, 3600.0
	rows := []struct {
		lo, hi, tol       float64
		elapLo, elapHi, e float64
	}{
		{15 * s, 44 * s, 0, 15 * s, 44 * s, 0},
		{16 * s, 74 * s, 0, 31 * s, 2 * m, 0.5 * m},
		{31 * s, 118 * s, 0, 1 * m, 4 * m, 0.5 * m},
		{1.6 * m, 3.5 * m, 0.05 * m, 2.6 * m, 7.5 * m, 0.05 * m},
		{4.5 * m, 6.9 * m, 0.05 * m, 7 * m, 14 * m, 0.5 * m},
		{10.7 * m, 13.6 * m, 0.05 * m, 18 * m, 28 * m, 0.5 * m},
		{22 * m, 25 * m, 0.5 * m, 40 * m, 53 * m, 0.5 * m},
		{40 * m, 44 * m, 0.5 * m, 1*h + 20*m, 1*h + 37*m, 0.5 * m},
		{68 * m, 73 * m, 1 * m, 2*h + 28*m, 2*h + 50*m, 0.5 * m},
		{1*h + 50*m, 1*h + 54*m, 0.5 * m, 4*h + 18*m, 4*h + 45*m, 0.5 * m},
	}
	var elapLo, elapHi time.Duration
	maxDelays := p.MaxDelays()
	require.Len(t, maxDelays, 10)
	require.Equal(t, 10, p.MaxRetries())
	for i, row := range rows {
		n := i + 1
		lo, ok := p.Delay(n, lowest)
		require.True(t, ok)
		hi, ok := p.Delay(n, highest)
		require.True(t, ok)
		within(t, row.lo, row.tol, lo, "low delay before retry")
		within(t, row.hi, row.tol, hi, "high delay before retry")
		require.Equal(t, hi, maxDelays[i])
		elapLo += lo
		elapHi += hi
		within(t, row.elapLo, row.e, elapLo, "low elapsed")
		within(t, row.elapHi, row.e, elapHi, "high elapsed")
	}
	// Ten retries mean eleven runs: the eleventh failure is final.
	_, ok := p.Delay(11, lowest)
	require.False(t, ok)
}

func TestHangfireFormulaExact(t *testing.T) {
	t.Parallel()
	p := retry.HangfireDefault()
	// (n-1)^4 + 15 + r*n with r = 7 before retry 3: 16 + 15 + 21 = 52 s.
	d, ok := p.Delay(3, sevenRand{})
	require.True(t, ok)
	require.Equal(t, 52*time.Second, d)

	// Every draw of a real source stays within the formula's range.
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		d, ok := p.Delay(2, rnd)
		require.True(t, ok)
		require.GreaterOrEqual(t, d, 16*time.Second)
		require.LessOrEqual(t, d, 74*time.Second)
	}
}

type sevenRand struct{}

func (sevenRand) IntN(int) int     { return 7 }
func (sevenRand) Float64() float64 { return 0.5 }

func TestHangfireAttempts(t *testing.T) {
	t.Parallel()
	// Attempts = 3 allows four runs in total.
	p := retry.Hangfire{Attempts: 3}
	for n := 1; n <= 3; n++ {
		_, ok := p.Delay(n, lowest)
		require.True(t, ok, "retry %d", n)
	}
	_, ok := p.Delay(4, lowest)
	require.False(t, ok)

	// Attempts = 0 turns retries off.
	_, ok = retry.Hangfire{}.Delay(1, lowest)
	require.False(t, ok)
	require.Empty(t, retry.Hangfire{}.MaxDelays())
}

func TestHangfireDelaysInSecondsLastEntryRepeats(t *testing.T) {
	t.Parallel()
	// Attempts = 5 with { 60, 300, 900 } waits 60, 300, 900, 900 and 900 s.
	p := retry.Hangfire{Attempts: 5, DelaysInSeconds: []int{60, 300, 900}}
	require.Equal(t, "hangfire-delays", p.Name())
	want := []time.Duration{60 * time.Second, 300 * time.Second, 900 * time.Second, 900 * time.Second, 900 * time.Second}
	for i, w := range want {
		d, ok := p.Delay(i+1, highest)
		require.True(t, ok)
		require.Equal(t, w, d)
	}
	_, ok := p.Delay(6, lowest)
	require.False(t, ok)
	require.Equal(t, want, p.MaxDelays())

	// Attempts = 3 with { 60, 300, 900 } finishes within about 21 minutes of
	// the first failure (the article's hourly advice).
	var total time.Duration
	for _, d := range (retry.Hangfire{Attempts: 3, DelaysInSeconds: []int{60, 300, 900}}).MaxDelays() {
		total += d
	}
	require.Equal(t, 21*time.Minute, total)
}

func TestNexJobDefaultCurve(t *testing.T) {
	t.Parallel()
	p := retry.NexJobDefault()
	require.Equal(t, "nexjob-default", p.Name())

	// "roughly 16 to 74 seconds after the first failure".
	lo, ok := p.Delay(1, lowest)
	require.True(t, ok)
	hi, _ := p.Delay(1, highest)
	require.Equal(t, 16*time.Second, lo)
	require.Equal(t, 74*time.Second, hi)

	// "4.5 to 7 minutes after the fourth".
	lo, _ = p.Delay(4, lowest)
	hi, _ = p.Delay(4, highest)
	within(t, 4.5*60, 0.05*60, lo, "low after the fourth failure")
	within(t, 7*60, 0.1*60, hi, "high after the fourth failure")

	// MaxAttempts counts executions: ten runs, nine retries.
	require.Len(t, p.MaxDelays(), 9)
	require.Equal(t, 9, p.MaxRetries())
	_, ok = p.Delay(9, lowest)
	require.True(t, ok)
	_, ok = p.Delay(10, lowest)
	require.False(t, ok)
	require.Equal(t, hi, p.MaxDelays()[3])
}

func TestNexJobRetryAttribute(t *testing.T) {
	t.Parallel()
	// [Retry(5, InitialDelay = "00:00:30", Multiplier = 2.0, MaxDelay = "01:00:00")]:
	// ~30s → ~60s → ~120s → ~240s with ±10% jitter; 5 total attempts.
	p := retry.NexJob{Attempts: 5, InitialDelay: 30 * time.Second, Multiplier: 2, MaxDelay: time.Hour}
	require.Equal(t, "nexjob-retry", p.Name())
	for k, base := range []float64{30, 60, 120, 240} {
		lo, ok := p.Delay(k+1, lowest)
		require.True(t, ok)
		hi, _ := p.Delay(k+1, highest)
		mid, _ := p.Delay(k+1, fixedRand{f: 0.5})
		within(t, base*0.9, 1e-6, lo, "low jitter")
		within(t, base*1.1, 1e-6, hi, "high jitter")
		within(t, base, 1e-6, mid, "no jitter")
	}
	_, ok := p.Delay(5, lowest)
	require.False(t, ok)
	require.Len(t, p.MaxDelays(), 4)
	within(t, 240*1.1, 1e-6, p.MaxDelays()[3], "worst case before retry 4")

	// Multiplier 0 is NexJob's default of 2.
	d, _ := retry.NexJob{Attempts: 5, InitialDelay: 30 * time.Second}.Delay(3, fixedRand{f: 0.5})
	within(t, 120, 1e-6, d, "default multiplier")
}

func TestNexJobCapBeforeJitter(t *testing.T) {
	t.Parallel()
	// The cap applies before the jitter, so a delay can end up to 10% above it.
	p := retry.NexJob{Attempts: 10, InitialDelay: 30 * time.Minute, Multiplier: 2, MaxDelay: time.Hour}
	hi, ok := p.Delay(3, highest) // 2 h, capped to 1 h, then +10%
	require.True(t, ok)
	within(t, 66*60, 1e-6, hi, "capped then jittered up")
	lo, _ := p.Delay(3, lowest)
	within(t, 54*60, 1e-6, lo, "capped then jittered down")
	require.Equal(t, retry.NexJob{Attempts: 10, InitialDelay: 30 * time.Minute, MaxDelay: time.Hour}.MaxDelays()[5], 66*time.Minute)
}

func TestNexJobNoRetry(t *testing.T) {
	t.Parallel()
	// [Retry(0)] and [Retry(1)] both dead-letter on the first failure.
	for _, attempts := range []int{0, 1} {
		for _, p := range []retry.NexJob{{Attempts: attempts}, {Attempts: attempts, InitialDelay: time.Second}} {
			_, ok := p.Delay(1, lowest)
			require.False(t, ok)
			require.Empty(t, p.MaxDelays())
		}
	}
}

func TestQuartzFixed(t *testing.T) {
	t.Parallel()
	// Fixed(3, …) runs a job that keeps failing four times.
	p := retry.QuartzFixed{MaxAttempts: 3, Interval: 5 * time.Minute}
	require.Equal(t, "quartz-fixed", p.Name())
	for n := 1; n <= 3; n++ {
		d, ok := p.Delay(n, nil)
		require.True(t, ok)
		require.Equal(t, 5*time.Minute, d)
	}
	_, ok := p.Delay(4, nil)
	require.False(t, ok)
	require.Equal(t, []time.Duration{5 * time.Minute, 5 * time.Minute, 5 * time.Minute}, p.MaxDelays())
}

func TestQuartzExponential(t *testing.T) {
	t.Parallel()
	// 30s, 1m, 2m, 4m, 8m — but never longer than ten minutes.
	p := retry.QuartzExponential{MaxAttempts: 5, InitialDelay: 30 * time.Second, Factor: 2, MaxDelay: 10 * time.Minute}
	require.Equal(t, "quartz-exponential", p.Name())
	want := []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute}
	for i, w := range want {
		d, ok := p.Delay(i+1, highest)
		require.True(t, ok)
		require.Equal(t, w, d)
	}
	_, ok := p.Delay(6, lowest)
	require.False(t, ok)
	require.Equal(t, want, p.MaxDelays())

	// The ceiling: a seventh retry would wait 32m, but waits 10m.
	long := retry.QuartzExponential{MaxAttempts: 7, InitialDelay: 30 * time.Second, Factor: 2, MaxDelay: 10 * time.Minute}
	d, _ := long.Delay(7, lowest)
	require.Equal(t, 10*time.Minute, d)
}

func TestQuartzExponentialJitter(t *testing.T) {
	t.Parallel()
	// Jitter 0.2: the first retry lands between 24 and 36 seconds after the
	// failure, the second between 48 and 72.
	p := retry.QuartzExponential{MaxAttempts: 5, InitialDelay: 30 * time.Second, Factor: 2, MaxDelay: 10 * time.Minute, Jitter: 0.2}
	for k, bounds := range [][2]float64{{24, 36}, {48, 72}, {96, 144}, {192, 288}} {
		lo, _ := p.Delay(k+1, lowest)
		hi, _ := p.Delay(k+1, highest)
		within(t, bounds[0], 1e-6, lo, "low")
		within(t, bounds[1], 1e-6, hi, "high")
	}
	// Still bounded by the ceiling: 8m * 1.2 = 9.6m stays, and a capped 10m
	// wait jittered up stays at 10m.
	hi, _ := p.Delay(5, highest)
	within(t, 9.6*60, 1e-6, hi, "below the ceiling")
	capped := retry.QuartzExponential{MaxAttempts: 7, InitialDelay: 30 * time.Second, Factor: 2, MaxDelay: 10 * time.Minute, Jitter: 0.2}
	hi, _ = capped.Delay(7, highest)
	require.Equal(t, 10*time.Minute, hi)
	lo, _ := capped.Delay(7, lowest)
	require.Equal(t, 8*time.Minute, lo)
	require.Equal(t, 10*time.Minute, capped.MaxDelays()[6])
	within(t, 36, 1e-6, capped.MaxDelays()[0], "worst case before retry 1")

	// A real source stays in [24s, 36s].
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		d, _ := p.Delay(1, rnd)
		require.GreaterOrEqual(t, d, 24*time.Second)
		require.LessOrEqual(t, d, 36*time.Second)
	}
}

func TestQuartzExplicit(t *testing.T) {
	t.Parallel()
	// Try again quickly twice, then give the upstream system an hour.
	p := retry.QuartzExplicit{Delays: []time.Duration{10 * time.Second, time.Minute, time.Hour}}
	require.Equal(t, "quartz-explicit", p.Name())
	for i, w := range p.Delays {
		d, ok := p.Delay(i+1, nil)
		require.True(t, ok)
		require.Equal(t, w, d)
	}
	_, ok := p.Delay(4, nil)
	require.False(t, ok)
	require.Equal(t, p.Delays, p.MaxDelays())
}

func TestQuartzRetryNeverDisplacesNextOccurrence(t *testing.T) {
	t.Parallel()
	failedAt := time.Date(2026, 3, 1, 2, 0, 5, 0, time.UTC)
	nextHour := time.Date(2026, 3, 1, 3, 0, 0, 0, time.UTC)

	// An hourly trigger with a 90-minute wait is never retried.
	_, ok := retry.QuartzFixed{MaxAttempts: 3, Interval: 90 * time.Minute}.DelayBefore(1, nil, failedAt, nextHour)
	require.False(t, ok)

	// Landing exactly at, or within a second of, the next fire time drops it.
	until := nextHour.Sub(failedAt)
	for _, d := range []time.Duration{until, until - time.Second, until - 999*time.Millisecond} {
		_, ok := retry.QuartzFixed{MaxAttempts: 3, Interval: d}.DelayBefore(1, nil, failedAt, nextHour)
		require.False(t, ok, "wait %s", d)
	}
	// Just over a second before it is kept.
	d, ok := retry.QuartzFixed{MaxAttempts: 3, Interval: until - 1001*time.Millisecond}.DelayBefore(1, nil, failedAt, nextHour)
	require.True(t, ok)
	require.Equal(t, until-1001*time.Millisecond, d)

	// The rule applies to every Quartz kind, after the jitter.
	exp := retry.QuartzExponential{MaxAttempts: 5, InitialDelay: 50 * time.Minute, Factor: 2, Jitter: 0.2}
	_, ok = exp.DelayBefore(1, lowest, failedAt, nextHour) // 40m: fits
	require.True(t, ok)
	_, ok = exp.DelayBefore(1, highest, failedAt, nextHour) // 60m: does not
	require.False(t, ok)
	_, ok = retry.QuartzExplicit{Delays: []time.Duration{2 * time.Hour}}.DelayBefore(1, nil, failedAt, nextHour)
	require.False(t, ok)

	// Without a next occurrence, DelayBefore is Delay.
	d, ok = retry.QuartzFixed{MaxAttempts: 3, Interval: 90 * time.Minute}.DelayBefore(1, nil, failedAt, time.Time{})
	require.True(t, ok)
	require.Equal(t, 90*time.Minute, d)
}

func TestPoliciesRejectBadInput(t *testing.T) {
	t.Parallel()
	policies := []retry.Policy{
		retry.HangfireDefault(), retry.NexJobDefault(),
		retry.QuartzFixed{MaxAttempts: 1, Interval: time.Second},
		retry.QuartzExplicit{Delays: []time.Duration{time.Second}},
	}
	for _, p := range policies {
		_, ok := p.Delay(0, nil)
		require.False(t, ok, p.Name())
		_, ok = p.Delay(-3, nil)
		require.False(t, ok, p.Name())
	}
	// Absurd retry counts saturate instead of overflowing, and declare a
	// bounded list.
	huge := retry.Hangfire{Attempts: 1 << 40}
	d, ok := huge.Delay(1<<30, lowest)
	require.True(t, ok)
	require.Positive(t, d)
	require.Len(t, huge.MaxDelays(), retry.MaxDelaysLimit)
	require.Equal(t, 1<<40, huge.MaxRetries())
	d, ok = retry.QuartzExponential{MaxAttempts: 5000, InitialDelay: time.Hour, Factor: 10}.Delay(4000, lowest)
	require.True(t, ok)
	require.Positive(t, d)
}

func TestRiverDefault(t *testing.T) {
	t.Parallel()
	p := retry.River{}
	require.Equal(t, "river-default", p.Name())
	// "after the first failure a new try will be scheduled in 1 seconds, 16
	// seconds after the second, 1 minute and 21 seconds after the third".
	for a, want := range []time.Duration{time.Second, 16 * time.Second, 81 * time.Second} {
		d, ok := p.Delay(a+1, fixedRand{f: 0.5})
		require.True(t, ok)
		require.Equal(t, want, d)
		lo, _ := p.Delay(a+1, lowest)
		hi, _ := p.Delay(a+1, highest)
		within(t, want.Seconds()*0.9, 1e-6, lo, "-10%")
		within(t, want.Seconds()*1.1, 1e-6, hi, "+10%")
	}
	// MaxAttempts counts executions, 25 by default.
	require.Equal(t, 24, p.MaxRetries())
	_, ok := p.Delay(24, lowest)
	require.True(t, ok)
	_, ok = p.Delay(25, lowest)
	require.False(t, ok)
	_, ok = retry.River{MaxAttempts: 1}.Delay(1, lowest)
	require.False(t, ok)
	require.Equal(t, []time.Duration{1100 * time.Millisecond, 17600 * time.Millisecond}, retry.River{MaxAttempts: 3}.MaxDelays())
}
