package oncalendar_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors/oncalendar"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"Mon..Fri 02:30":          "at 02:30 on Monday to Friday",
		"Sat,Sun 01:00":           "at 01:00 on Saturday and Sunday",
		"*-*-* *:00/15:00":        "every 15 minutes",
		"daily":                   "at 00:00 every day",
		"*-*~01 02:30":            "at 02:30 on the last day of the month",
		"*-*~03 02:30":            "at 02:30 on the 3rd last day of the month",
		"hourly":                  "at minute 0 of every hour",
		"minutely":                "every minute",
		"weekly":                  "at 00:00 on Monday",
		"monthly":                 "at 00:00 on the 1st of the month",
		"quarterly":               "at 00:00 on the 1st of the month in January, April, July and October",
		"*-*-* 08,20:15":          "at 08:15 and 20:15 every day",
		"Mon..Fri 02:30 UTC":      "at 02:30 on Monday to Friday (UTC)",
		"12:00 Europe/Berlin":     "at 12:00 every day (Europe/Berlin)",
		"*-*-* *:*:*":             "every second",
		"2026-03-29 02:30:15":     "at 02:30:15 on the 29th of the month in March in 2026",
		"*-*-1..7 03:00":          "at 03:00 on days 1 to 7 of the month",
		"*-*-* 1..4:15":           "at minute 15 of hour 1 to 4 every day",
		"*:0/20":                  "every 20 minutes",
		"*-*-* 02:30:00.5":        "at 02:30:00.5 every day",
		"Mon,Wed,Fri *-*-* 08:00": "at 08:00 on Monday, Wednesday and Friday",
	} {
		e, err := oncalendar.Parse(expr, time.UTC)
		require.NoError(t, err, expr)
		require.Equal(t, want, e.Describe(), expr)
	}
}
