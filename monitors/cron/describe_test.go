package cron

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDescribe(t *testing.T) {
	t.Parallel()

	tests := []struct{ expr, want string }{
		{"30 2 * * *", "at 02:30 every day"},
		{"*/5 * * * *", "every 5 minutes"},
		{"1 1 * * 5L", "at 01:01 on the last Friday of the month"},
		{"* * * * *", "every minute"},
		{"0 * * * *", "every hour"},
		{"30 * * * *", "at minute 30 past every hour"},
		{"*/7 * * * *", "at every 7th minute past every hour"},
		{"0 */2 * * *", "every 2 hours"},
		{"30 */2 * * *", "at minute 30 past every 2nd hour"},
		{"*/5 9-17 * * 1-5", "at every 5th minute past every hour from 9 through 17 on weekdays (Monday through Friday)"},
		{"0 9-17 * * *", "at minute 0 past every hour from 9 through 17"},
		{"0 0,12 * * *", "at 00:00 and 12:00 every day"},
		{"0 8,12,18 * * *", "at 08:00, 12:00 and 18:00 every day"},
		{"15,45 8,20 * * *", "at 08:15, 08:45, 20:15 and 20:45 every day"},
		{"@yearly", "at 00:00 on January 1"},
		{"@monthly", "at 00:00 on day 1 of the month"},
		{"@weekly", "at 00:00 on Sunday"},
		{"@daily", "at 00:00 every day"},
		{"@hourly", "every hour"},
		{"0 0 1 1 *", "at 00:00 on January 1"},
		{"0 0 L * *", "at 00:00 on the last day of the month"},
		{"0 0 LW * *", "at 00:00 on the last weekday of the month"},
		{"0 0 1,L * *", "at 00:00 on day 1 and the last day of the month"},
		{"0 0 1,15 * *", "at 00:00 on days 1 and 15 of the month"},
		{"0 0 */2 * *", "at 00:00 on every 2nd day of the month"},
		{"0 0 1-7 * *", "at 00:00 on every day from 1 through 7 of the month"},
		{"1 1 1-7 * */7", "at 01:01 on every day from 1 through 7 of the month, but only if it is a Sunday"},
		{"0 0 13 * 5", "at 00:00 on day 13 of the month and on Friday"},
		{"0 0 * 2 MON#5", "at 00:00 on the fifth Monday of the month in February"},
		{"0 0 * * 1#1,1#3", "at 00:00 on the first Monday and the third Monday of the month"},
		{"0 0 * * 6,0", "at 00:00 on Saturday and Sunday"},
		{"0 0 * * 5-7", "at 00:00 on Friday through Sunday"},
		{"0 0 * * 0,1,2", "at 00:00 on Monday, Tuesday and Sunday"},
		{"0 0 * */3 *", "at 00:00 every day in January, April, July and October"},
		{"0 0 * 3-5 *", "at 00:00 every day in March through May"},
		{"0 0 1 1,7 *", "at 00:00 on day 1 of the month in January and July"},
		{"*/15 * * * * *", "every 15 seconds"},
		{"30 * * * * *", "at second 30 past every minute"},
		{"11,22 30 1,2,3,4 * * *", "at seconds 11 and 22 past minute 30 past every hour from 1 through 4"},
		{"* * * * * *", "every second"},
		{"15 30 2 * * *", "at 02:30:15 every day"},
		{"0 30 2 * * *", "at 02:30 every day"},
		{"*/15 30 * * * *", "at every 15th second past minute 30 past every hour"},
		{"* 9 * * *", "at every minute past hour 9"},
		{"5-10 * * * *", "at every minute from 5 through 10 past every hour"},
		{"1/20 * * * *", "at every 20th minute from 1 through 41 past every hour"},
		{"0 1/2 * * *", "at minute 0 past every 2nd hour from 1 through 23"},
		{"0 0 1-31 * MON", "at 00:00 every day"},
		{"0 0 */2 * 5L", "at 00:00 on every 2nd day of the month, but only if it is the last Friday of the month"},
		{"0 0 * * 1/2", "at 00:00 on Monday, Wednesday, Friday and Sunday"},
		{"0 0 LW 2 SAT", "at 00:00 on the last weekday of the month and on Saturday in February"},
		{"0 0 29 2 *", "at 00:00 on February 29"},
		{"0 12 * * 1-5", "at 12:00 on weekdays (Monday through Friday)"},
		{"0 0 * * ?", "at 00:00 every day"},
		{"0 0 ? * MON", "at 00:00 on Monday"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.expr)
		require.NoError(t, err, tt.expr)
		require.Equal(t, tt.want, e.Describe(), tt.expr)
	}
}

func TestOrdinal(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 22: "22nd", 23: "23rd", 30: "30th", 101: "101st", 111: "111th"} {
		require.Equal(t, want, ordinal(n))
	}
}
