package monitors_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func TestParseScheduleOnCalendar(t *testing.T) {
	t.Parallel()
	spec := monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "Mon..Fri 02:30", TZ: "Europe/Berlin"}
	s, err := monitors.ParseSchedule(spec)
	require.NoError(t, err)
	berlin := s.Location()
	require.Equal(t, "Europe/Berlin", berlin.String())
	from := time.Date(2026, 3, 27, 0, 0, 0, 0, berlin)
	require.Equal(t, "2026-03-27T02:30:00+01:00", s.Next(from).Format(time.RFC3339))
	require.Equal(t, "2026-03-30T02:30:00+02:00", s.Next(s.Next(from)).Format(time.RFC3339))
	require.Equal(t, "2026-03-27T02:30:00+01:00", s.Prev(time.Date(2026, 3, 30, 2, 30, 0, 0, berlin)).Format(time.RFC3339))
	require.Equal(t, "OnCalendar=Mon..Fri 02:30 (at 02:30 on Monday to Friday, Europe/Berlin)", spec.Describe())
	require.Equal(t, "at 02:30 on Monday to Friday (Europe/Berlin)", s.(monitors.OnCalendarSchedule).Describe())

	// A zone in the expression wins over tz.
	s, err = monitors.ParseSchedule(monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "daily Asia/Kolkata", TZ: "Europe/Berlin"})
	require.NoError(t, err)
	require.Equal(t, "Asia/Kolkata", s.Location().String())
	require.Equal(t, "at 00:00 every day (Asia/Kolkata)", s.(monitors.OnCalendarSchedule).Describe())

	for _, tc := range []struct {
		spec  monitors.ScheduleSpec
		field string
		msg   string
	}{
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "Mon..Fri 24:00"}, "schedule.expr", `"Mon..Fri 24:00" is not a systemd calendar expression: hour 24 is out of range (0 to 23)`},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "*-02-30"}, "schedule.expr", `"*-02-30" never elapses after 2020-01-01`},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "2019-01-01"}, "schedule.expr", "never elapses"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: ""}, "schedule.expr", "is required"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "daily", EverySeconds: 60}, "schedule.every_seconds", "only for interval"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "daily", TZ: "Nowhere/Land"}, "schedule.tz", "unknown time zone"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "daily", Dialect: monitors.DialectRobfig}, "schedule.dialect", "only for cron"},
		{monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "*:*/15"}, "schedule.expr", "* takes no repetition in the minute: write 0/15"},
	} {
		_, err := monitors.ParseSchedule(tc.spec)
		var ve *monitors.ValidationError
		require.True(t, errors.As(err, &ve), "%+v: %v", tc.spec, err)
		require.Equal(t, tc.field, ve.Field, "%+v", tc.spec)
		require.Contains(t, ve.Error(), tc.msg, "%+v", tc.spec)
	}
}
