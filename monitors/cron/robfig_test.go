package cron

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	robfig "github.com/robfig/cron/v3"
	"github.com/stretchr/testify/require"
)

// TestDifferentialRobfig compares random standard expressions with
// robfig/cron's parser in UTC, where there is no daylight saving time and
// robfig is correct.
//
// The generator stays inside the syntax both engines read the same way:
//   - robfig joins day-of-month and day-of-week with AND only when one of
//     them is exactly * (its "star bit"), Vixie cron when one starts with *.
//     So */n appears in one of the two fields only when the other is *.
//   - robfig's day-of-week range is 0-6, so a/n there stops at 6, while
//     here (as in cronsim and Vixie's 0-7 range) 1/2 also reaches 7, Sunday.
//     The generator writes no a/n in the day-of-week field, and no 7.
//   - robfig gives up after five years; expressions are built to fire
//     more often than that.
func TestDifferentialRobfig(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20260308, 1101))

	const cases = 3000
	compared := 0
	for range cases {
		expr := randomStandardExpr(rng)
		e, err := Parse(expr)
		if err != nil {
			require.ErrorIs(t, err, ErrNeverFires, expr)
			continue
		}
		rs, err := robfig.ParseStandard(expr)
		require.NoError(t, err, "robfig rejects %q", expr)

		start := time.Date(2000+rng.IntN(60), time.Month(1+rng.IntN(12)), 1+rng.IntN(28),
			rng.IntN(24), rng.IntN(60), rng.IntN(60), 0, time.UTC)
		ours, theirs := start, start
		for i := range 20 {
			ours = e.Next(ours, time.UTC)
			theirs = rs.Next(theirs)
			require.False(t, theirs.IsZero(), "robfig found nothing for %q", expr)
			require.Equal(t, theirs, ours, "fire %d of %q after %s", i+1, expr, start)
		}
		compared++
	}
	require.Greater(t, compared, cases*9/10, "most generated expressions fire")
	t.Logf("%d expressions compared", compared)
}

func randomStandardExpr(rng *rand.Rand) string {
	minute := randomField(rng, 0, 59, nil, true)
	hour := randomField(rng, 0, 23, nil, true)
	month := randomField(rng, 1, 12, monthNames[:], true)
	var dom, dow string
	switch rng.IntN(4) {
	case 0: // both restricted, no star: OR
		dom = randomField(rng, 1, 31, nil, false)
		dow = randomField(rng, 0, 6, dayNames[:], false)
	case 1:
		dom = "*"
		dow = randomField(rng, 0, 6, dayNames[:], false)
	case 2:
		dom = randomField(rng, 1, 31, nil, true)
		dow = "*"
	default:
		dom, dow = "*", "*"
	}
	return strings.Join([]string{minute, hour, dom, month, dow}, " ")
}

// randomField builds a field of one to three items. names, when given,
// are sometimes used for values (index 0 is the field's first value).
func randomField(rng *rand.Rand, lo, hi int, names []string, allowStar bool) string {
	if allowStar && rng.IntN(4) == 0 {
		return "*"
	}
	val := func(v int) string {
		if names != nil && rng.IntN(2) == 0 {
			name := names[v-lo]
			if rng.IntN(2) == 0 {
				name = strings.ToLower(name)
			}
			return name
		}
		return fmt.Sprint(v)
	}
	n := 1 + rng.IntN(3)
	items := make([]string, 0, n)
	for range n {
		a := lo + rng.IntN(hi-lo+1)
		b := a + rng.IntN(hi-a+1)
		step := 1 + rng.IntN((hi-lo)/2+1)
		switch k := rng.IntN(6); {
		case k == 0 && allowStar && len(items) == 0:
			items = append(items, fmt.Sprintf("*/%d", step))
		case k == 1:
			items = append(items, val(a)+"-"+val(b))
		case k == 2:
			items = append(items, fmt.Sprintf("%s-%s/%d", val(a), val(b), step))
		case k == 3 && names == nil:
			items = append(items, fmt.Sprintf("%d/%d", a, step)) // a/n, not in day-of-week (see above)
		default:
			items = append(items, val(a))
		}
	}
	return strings.Join(items, ",")
}

// TestRobfigDST pins what the package documentation says of robfig/cron's
// own Next around daylight-saving changes, against ours.
func TestRobfigDST(t *testing.T) {
	t.Parallel()
	ny := mustLoad(t, "America/New_York")
	chain := func(next func(time.Time) time.Time, start string) []string {
		var out []string
		cur := mustTime(t, start).In(ny)
		for range 3 {
			cur = next(cur)
			out = append(out, cur.Format(time.RFC3339))
		}
		return out
	}
	for _, c := range []struct {
		expr, start  string
		robfig, ours []string
	}{
		{"30 2 * * *", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00", "2026-03-11T02:30:00-04:00"},
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		{"30 1 * * *", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"},
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00", "2026-11-03T01:30:00-05:00"}},
	} {
		rs, err := robfig.ParseStandard(c.expr)
		require.NoError(t, err)
		require.Equal(t, c.robfig, chain(rs.Next, c.start), "robfig %q", c.expr)
		e, err := Parse(c.expr)
		require.NoError(t, err)
		require.Equal(t, c.ours, chain(func(tm time.Time) time.Time { return e.Next(tm, ny) }, c.start), c.expr)
	}
}
