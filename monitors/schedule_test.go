package monitors_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func TestScheduleDialects(t *testing.T) {
	t.Parallel()
	cron := func(expr, tz string, d monitors.Dialect) monitors.ScheduleSpec {
		return monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: tz, Dialect: d}
	}
	for _, tt := range []struct {
		spec  monitors.ScheduleSpec
		field string
		msg   string
	}{
		{cron("0 0 2 * * *", "", "vixie"), "schedule.dialect", `"vixie" is not one of cronie, robfig, quartz`},
		{cron("0 30 2 ? * 1#2", "Europe/Berlin", ""), "schedule.expr", `set schedule.dialect to "quartz"`},
		{cron("0 0 2 ? * MON", "", monitors.DialectCronie), "schedule.expr", "? is not cronie syntax"},
		{cron("0 0 L * *", "", monitors.DialectRobfig), "schedule.expr", `valid in the cronie dialect: set schedule.dialect to "cronie"`},
		{cron("@every 9000h", "", monitors.DialectRobfig), "schedule.expr", "@every must be between 1s and 366 days"},
		{cron("@every 1h", "", monitors.DialectCronie), "schedule.expr", `set schedule.dialect to "robfig"`},
		{cron("0 0 2 * * * *", "", monitors.DialectRobfig), "schedule.expr", "robfig/cron"},
		{cron("30 2 * * *", "", monitors.DialectQuartz), "schedule.expr",
			"seconds first (in the quartz dialect; it is valid in the cronie and robfig dialects"},
		{cron("0 0 2 * * *", "", monitors.DialectQuartz), "schedule.expr", "write ? in one of them"},
		{cron("0 0 2 ? * 1#2 2019", "", monitors.DialectQuartz), "schedule.expr", "never fires"},
	} {
		_, err := monitors.ValidateSchedule(tt.spec)
		var ve *monitors.ValidationError
		require.ErrorAs(t, err, &ve, "%+v", tt.spec)
		require.Equal(t, tt.field, ve.Field, "%+v", tt.spec)
		require.Contains(t, ve.Message, tt.msg, "%+v", tt.spec)
	}

	// Stored schedules with ? still read as before.
	_, err := monitors.ParseSchedule(cron("0 0 2 ? * MON", "", monitors.DialectCronie))
	require.NoError(t, err)

	s, err := monitors.ValidateSchedule(cron("30 2 * * *", "America/New_York", monitors.DialectRobfig))
	require.NoError(t, err)
	from := time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)
	require.Equal(t, "2026-03-09T02:30:00-04:00", s.Next(from).In(s.Location()).Format(time.RFC3339))
	require.Equal(t, "2026-03-07T02:30:00-05:00", s.Prev(from).In(s.Location()).Format(time.RFC3339))

	s, err = monitors.ValidateSchedule(cron("CRON_TZ=Europe/Berlin 0 0 2 * * *", "UTC", monitors.DialectRobfig))
	require.NoError(t, err)
	require.Equal(t, "Europe/Berlin", s.Location().String(), "the expression's zone wins")

	s, err = monitors.ValidateSchedule(cron("@every 15m", "", monitors.DialectRobfig))
	require.NoError(t, err)
	require.Equal(t, monitors.Interval{Every: 15 * time.Minute}, s, "an interval from the previous run")

	s, err = monitors.ValidateSchedule(cron("0 30 2 ? * 1#2", "America/New_York", monitors.DialectQuartz))
	require.NoError(t, err)
	from = time.Date(2026, 3, 1, 0, 0, 0, 0, s.Location())
	require.Equal(t, "2026-04-12T02:30:00-04:00", s.Next(from).In(s.Location()).Format(time.RFC3339), "Quartz skips 8 March")
	require.Equal(t, "at 02:30 on the second Sunday of the month", monitors.ScheduleWords(s))
	require.Equal(t, "0 30 2 ? * 1#2 (America/New_York, quartz)", cron("0 30 2 ? * 1#2", "America/New_York", monitors.DialectQuartz).Describe())

	m := &monitors.Monitor{Name: "x", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}}
	m.ApplyDefaults()
	require.Equal(t, cron("0 2 * * *", "UTC", monitors.DialectCronie), m.Schedule)
}
