package cron

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func bitsOf(vals ...int) uint64 {
	var m uint64
	for _, v := range vals {
		m |= 1 << v
	}
	return m
}

func rangeBits(lo, hi, step int) uint64 {
	var m uint64
	for v := lo; v <= hi; v += step {
		m |= 1 << v
	}
	return m
}

func TestParseFields(t *testing.T) {
	t.Parallel()

	tests := []struct {
		expr   string
		check  func(t *testing.T, e *Expr)
		str    string
		wall   bool
		dayAnd bool
	}{
		{"*/15 * * * *", func(t *testing.T, e *Expr) {
			require.Equal(t, bitsOf(0, 15, 30, 45), e.minute)
			require.Equal(t, rangeBits(0, 23, 1), e.hour)
			require.Equal(t, bitsOf(0), e.second)
		}, "*/15 * * * *", false, true},
		{"5-20/5 1,3,22-23 * * *", func(t *testing.T, e *Expr) {
			require.Equal(t, bitsOf(5, 10, 15, 20), e.minute)
			require.Equal(t, bitsOf(1, 3, 22, 23), e.hour)
		}, "5-20/5 1,3,22-23 * * *", true, true},
		{"7/20 * * * *", func(t *testing.T, e *Expr) { // a/n runs to the end of the field
			require.Equal(t, bitsOf(7, 27, 47), e.minute)
		}, "7/20 * * * *", false, true},
		{"0 0 */100,1-7 * MON", func(t *testing.T, e *Expr) { // a step beyond the range keeps the start
			require.Equal(t, uint32(rangeBits(1, 7, 1)), e.dom)
			require.Equal(t, uint8(bitsOf(1)), e.dow)
		}, "0 0 */100,1-7 * MON", true, true},
		{"0 0 1 jan-mar/2,Dec *", func(t *testing.T, e *Expr) {
			require.Equal(t, uint16(bitsOf(1, 3, 12)), e.month)
		}, "0 0 1 JAN-MAR/2,DEC *", true, true},
		{"0 0 * * 7", func(t *testing.T, e *Expr) { // 7 is Sunday
			require.Equal(t, uint8(bitsOf(0)), e.dow)
		}, "0 0 * * 7", true, true},
		{"0 0 * * 5-7", func(t *testing.T, e *Expr) {
			require.Equal(t, uint8(bitsOf(5, 6, 0)), e.dow)
		}, "0 0 * * 5-7", true, true},
		{"0 0 * * fri-sun", func(t *testing.T, e *Expr) { // SUN as a range end is the end of the week
			require.Equal(t, uint8(bitsOf(5, 6, 0)), e.dow)
		}, "0 0 * * FRI-SUN", true, true},
		{"0 0 * * */2", func(t *testing.T, e *Expr) {
			require.Equal(t, uint8(bitsOf(0, 2, 4, 6)), e.dow)
		}, "0 0 * * */2", true, true},
		{"0 0 * * 1/2", func(t *testing.T, e *Expr) { // runs to 7, as in cronsim: 7 is Sunday
			require.Equal(t, uint8(bitsOf(1, 3, 5, 0)), e.dow)
		}, "0 0 * * 1/2", true, true},
		{"0 0 ? * MON-FRI", func(t *testing.T, e *Expr) {
			require.Equal(t, uint32(rangeBits(1, 31, 1)), e.dom)
			require.Equal(t, uint8(bitsOf(1, 2, 3, 4, 5)), e.dow)
		}, "0 0 ? * MON-FRI", true, true},
		{"0 0 1,15 * MON", func(t *testing.T, e *Expr) {
			require.Equal(t, uint32(bitsOf(1, 15)), e.dom)
		}, "0 0 1,15 * MON", true, false},
		{"0 0 l,lw,10 * *", func(t *testing.T, e *Expr) {
			require.True(t, e.domLast)
			require.True(t, e.domLastWeekday)
			require.Equal(t, uint32(bitsOf(10)), e.dom)
		}, "0 0 L,LW,10 * *", true, true},
		{"1 1 * * 5L,0l,7L,FRIL", func(t *testing.T, e *Expr) {
			require.Equal(t, uint8(bitsOf(5, 0)), e.dowLast)
			require.Equal(t, uint8(0), e.dow)
		}, "1 1 * * 5L,0L,7L,FRIL", true, true},
		{"1 1 * * 5#3,mon#1,7#5", func(t *testing.T, e *Expr) {
			require.Equal(t, uint8(bitsOf(3)), e.dowNth[5])
			require.Equal(t, uint8(bitsOf(1)), e.dowNth[1])
			require.Equal(t, uint8(bitsOf(5)), e.dowNth[0])
		}, "1 1 * * 5#3,MON#1,7#5", true, true},
		{"  30\t2 *  * *\n", nil, "30 2 * * *", true, true},
		{"*/10 * * * * *", func(t *testing.T, e *Expr) {
			require.True(t, e.HasSeconds())
			require.Equal(t, bitsOf(0, 10, 20, 30, 40, 50), e.second)
			require.Equal(t, rangeBits(0, 59, 1), e.minute)
		}, "*/10 * * * * *", false, true},
		{"0 30 1-10 * * *", func(t *testing.T, e *Expr) {
			require.True(t, e.HasSeconds())
		}, "0 30 1-10 * * *", true, true},
		{"0-59 2 * * *", nil, "0-59 2 * * *", true, true}, // cronie looks at the first character only
		{"0 */2 * * *", nil, "0 */2 * * *", false, true},
		{"* 2 * * *", nil, "* 2 * * *", false, true},
		{"@yearly", func(t *testing.T, e *Expr) {
			require.Equal(t, uint16(bitsOf(1)), e.month)
			require.Equal(t, uint32(bitsOf(1)), e.dom)
			require.False(t, e.HasSeconds())
		}, "@yearly", true, true},
		{"@Annually", nil, "@annually", true, true},
		{"@monthly", nil, "@monthly", true, true},
		{"@weekly", func(t *testing.T, e *Expr) {
			require.Equal(t, uint8(bitsOf(0)), e.dow)
		}, "@weekly", true, true},
		{"@daily", nil, "@daily", true, true},
		{"@MIDNIGHT", nil, "@midnight", true, true},
		{"@hourly", nil, "@hourly", false, true},
	}
	for _, tt := range tests {
		e, err := Parse(tt.expr)
		require.NoError(t, err, tt.expr)
		require.Equal(t, tt.str, e.String(), tt.expr)
		require.Equal(t, tt.wall, e.wallClock, "wall clock %q", tt.expr)
		require.Equal(t, tt.dayAnd, e.dayAnd, "day AND %q", tt.expr)
		if tt.check != nil {
			tt.check(t, e)
		}
		again, err := Parse(e.String())
		require.NoError(t, err, "String() parses again")
		require.Equal(t, e.String(), again.String())
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()

	tests := []struct{ expr, msg string }{
		{"61 * * * *", `minute field "61": value 61 out of range 0-59`},
		{"* * * *", `expected 5 or 6 fields, got 4`},
		{"* * * * * * *", `expected 5 or 6 fields, got 7`},
		{"", `empty expression: expected 5 or 6 fields or a descriptor such as @daily`},
		{"0 0 30 2 *", `never fires: day 30 does not exist in February`},
		{"0 0 31 2,4 *", `never fires: day 31 does not exist in February or April`},
		{"0 0 30,31 FEB *", `never fires: days 30 and 31 do not exist in February`},
		{"0 0 0 31 4,6 *", `never fires: day 31 does not exist in April or June`},
		{"1 1 */100 * MON#4", `never fires: day-of-month "*/100" and day-of-week "MON#4" never fall on the same day (when either field starts with * or ?, a day must match both)`},
		{"0 0 */100 2 MON#5", `never fires: day-of-month "*/100" and day-of-week "MON#5" never fall on the same day in February (when either field starts with * or ?, a day must match both)`},
		{"@reboot", `unknown descriptor "@reboot": expected one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly`},
		{"@daily 1", `descriptor @daily takes no fields, got 1 more`},
		{"@every 5m", `unknown descriptor "@every": expected one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly`},
		{"CRON_TZ=UTC 0 0 * * *", `time zone prefix "CRON_TZ=UTC" is not part of a cron expression: set the schedule's time zone instead`},
		{"*/0 * * * *", `minute field "*/0": step must be at least 1`},
		{"5-3 * * * *", `minute field "5-3": range 5-3 goes backwards (5 is after 3)`},
		{"* * * * SAT-MON", `day-of-week field "SAT-MON": range SAT-MON goes backwards (6 is after 1)`},
		{"* * * * MON#6", `day-of-week field "MON#6": week 6 after # out of range 1-5`},
		{"* * * * 1,MON#0", `day-of-week field "1,MON#0": item "MON#0": week 0 after # out of range 1-5`},
		{"* * * * 5#x", `day-of-week field "5#x": week "X" after # is not a number`},
		{"* * * * L", `day-of-week field "L": "L" needs a weekday before it, e.g. 5L for the last Friday of the month`},
		{"L * * * *", `minute field "L": L and W are only allowed in the day-of-month and day-of-week fields`},
		{"* 5W * * *", `hour field "5W": L and W are only allowed in the day-of-month and day-of-week fields`},
		{"* * 15W * *", `day-of-month field "15W": nW (nearest weekday) is not supported; LW (last weekday of the month) is`},
		{"* * L-3 * *", `day-of-month field "L-3": L-n (days before the end of the month) is not supported; L and LW are`},
		{"* * 1#2 * *", `day-of-month field "1#2": # is only allowed in the day-of-week field`},
		{"* ? * * *", `hour field "?": "?" is only allowed in the day-of-month and day-of-week fields`},
		{"* * ?/2 * *", `day-of-month field "?/2": "?" must be the whole field`},
		{"* * * FOO *", `month field "FOO": invalid value "FOO": expected 1-12 or JAN-DEC`},
		{"* * * MON *", `month field "MON": "MON" is a day name, not a month`},
		{"* * * * JAN", `day-of-week field "JAN": "JAN" is a month name, not a day`},
		{"* * * * MON-FOO", `day-of-week field "MON-FOO": invalid value "FOO": expected 0-7 or SUN-SAT`},
		{"1,,2 * * * *", `minute field "1,,2": empty item in list`},
		{"1, * * * *", `minute field "1,": empty item in list`},
		{"* * 0 * *", `day-of-month field "0": value 0 out of range 1-31`},
		{"* * * 13 *", `month field "13": value 13 out of range 1-12`},
		{"* * * * 8", `day-of-week field "8": value 8 out of range 0-7`},
		{"* 24 * * *", `hour field "24": value 24 out of range 0-23`},
		{"60 * * * * *", `second field "60": value 60 out of range 0-59`},
		{"99999999999 * * * *", `minute field "99999999999": value 99999999999 out of range 0-59`},
		{"*/ * * * *", `minute field "*/": step is missing after / in "*/"`},
		{"5/x * * * *", `minute field "5/x": step "X" is not a number`},
		{"-5 * * * *", `minute field "-5": range "-5" has no start`},
		{"5- * * * *", `minute field "5-": range "5-" has no end`},
		{"1-2-3 * * * *", `minute field "1-2-3": range "1-2-3" has more than one -`},
		{"a * * * *", `minute field "a": invalid value "A": expected a number 0-59`},
		{"* * 5L * *", `day-of-month field "5L": invalid value "5L": expected a number 1-31`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.expr)
		require.EqualError(t, err, tt.msg, tt.expr)
	}

	_, err := Parse("0 0 30 2 *")
	require.ErrorIs(t, err, ErrNeverFires)
	_, err = Parse("61 * * * *")
	require.NotErrorIs(t, err, ErrNeverFires)
}

// TestParseAcceptsWhatFires: expressions that fire rarely are accepted,
// and fire.
func TestParseAcceptsWhatFires(t *testing.T) {
	t.Parallel()
	for _, expr := range []string{
		"0 0 29 2 *",      // leap days
		"0 0 * 2 MON#5",   // 29 February on a Monday: every 28 or 40 years
		"0 0 31 2,4,5 *",  // 31 May
		"0 0 30 2 MON",    // OR rule: any Monday in February
		"0 0 */30 2 *",    // days 1 and 31: 1 February
		"0 0 LW 2 SAT",    // OR rule
		"0 0 29 2 SUN#5",  // OR rule with a leap-only weekday
		"0 0 L 2 *",       // 28 or 29 February
		"0 0 31 * 5L",     // OR rule
		"0 0 * * 0#5",     // fifth Sunday
		"0 0 */7 * MON#1", // AND rule: days 1, 8, 15, 22, 29 that are a first Monday (day 1)
	} {
		e, err := Parse(expr)
		require.NoError(t, err, expr)
		require.False(t, e.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.UTC).IsZero(), expr)
	}
}
