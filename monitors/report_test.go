package monitors_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

func TestReportPeriodAt(t *testing.T) {
	t.Parallel()
	utc := func(y int, m time.Month, d, h, mi int) time.Time { return time.Date(y, m, d, h, mi, 0, 0, time.UTC) }
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	for _, c := range []struct {
		p          monitors.ReportPeriod
		now        time.Time
		start, end time.Time
	}{
		// Weeks end on Monday 00:00 UTC.
		{monitors.ReportWeekly, utc(2026, 11, 30, 0, 0), utc(2026, 11, 23, 0, 0), utc(2026, 11, 30, 0, 0)},
		{monitors.ReportWeekly, utc(2026, 11, 29, 23, 59), utc(2026, 11, 16, 0, 0), utc(2026, 11, 23, 0, 0)},
		{monitors.ReportWeekly, utc(2026, 12, 2, 12, 0), utc(2026, 11, 23, 0, 0), utc(2026, 11, 30, 0, 0)},
		{monitors.ReportWeekly, utc(2027, 1, 1, 0, 0), utc(2026, 12, 21, 0, 0), utc(2026, 12, 28, 0, 0)},
		// Monday 00:30 in Berlin is still Sunday in UTC.
		{monitors.ReportWeekly, time.Date(2026, 11, 30, 0, 30, 0, 0, berlin), utc(2026, 11, 16, 0, 0), utc(2026, 11, 23, 0, 0)},
		// Months end on the 1st 00:00 UTC.
		{monitors.ReportMonthly, utc(2026, 12, 1, 0, 0), utc(2026, 11, 1, 0, 0), utc(2026, 12, 1, 0, 0)},
		{monitors.ReportMonthly, utc(2026, 11, 30, 23, 59), utc(2026, 10, 1, 0, 0), utc(2026, 11, 1, 0, 0)},
		{monitors.ReportMonthly, utc(2027, 1, 15, 0, 0), utc(2026, 12, 1, 0, 0), utc(2027, 1, 1, 0, 0)},
		{monitors.ReportMonthly, utc(2026, 3, 31, 0, 0), utc(2026, 2, 1, 0, 0), utc(2026, 3, 1, 0, 0)},
	} {
		t.Run(fmt.Sprintf("%s/%s", c.p, c.now.Format(time.RFC3339)), func(t *testing.T) {
			start, end := monitors.ReportPeriodAt(c.p, c.now)
			require.Equal(t, c.start, start)
			require.Equal(t, c.end, end)
			require.Equal(t, time.UTC, start.Location())
		})
	}
}

func TestReportsDue(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	week := func(d int) *time.Time { t := time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC); return &t }
	month := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	chs := []monitors.ReportChannel{
		{ID: "new", Report: monitors.ReportWeekly},                       // never reported: the last week at once
		{ID: "done", Report: monitors.ReportWeekly, LastStart: week(23)}, // this week's is sent
		{ID: "last", Report: monitors.ReportWeekly, LastStart: week(16)}, // on time
		{ID: "late", Report: monitors.ReportWeekly, LastStart: week(2)},  // two weeks never sent
		{ID: "monthly", Report: monitors.ReportMonthly, LastStart: &month},
		{ID: "none"},
	}
	due := monitors.ReportsDue(chs, now)
	got := map[string][3]any{}
	for _, d := range due {
		got[d.Channel.ID] = [3]any{d.Start.Format(time.DateOnly), d.End.Format(time.DateOnly), d.Skipped}
	}
	require.Equal(t, map[string][3]any{
		"new":  {"2026-11-23", "2026-11-30", 0},
		"last": {"2026-11-23", "2026-11-30", 0},
		"late": {"2026-11-23", "2026-11-30", 2},
		// October was sent; November ends on 1 December.
	}, got)
	require.Empty(t, monitors.ReportsDue(chs[4:5], time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)))
	d := monitors.ReportsDue(chs[4:5], time.Date(2026, 12, 1, 0, 0, 1, 0, time.UTC))
	require.Len(t, d, 1)
	require.Equal(t, 0, d[0].Skipped)
	require.Equal(t, "2026-11-01", d[0].Start.Format(time.DateOnly))
}

func TestValidateReportPeriod(t *testing.T) {
	t.Parallel()
	for _, ok := range []monitors.ReportPeriod{"", "weekly", "monthly"} {
		require.NoError(t, monitors.ValidateReportPeriod(ok))
	}
	err := monitors.ValidateReportPeriod("daily")
	var ve *monitors.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "report", ve.Field)
}

// TestBuildReportLists: lists hold at most ReportListMax monitors and the
// totals count them all; undeclared monitors and monitors made after the
// period are left out.
func TestBuildReportLists(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 7)
	var in []monitors.ReportInput
	for i := range 14 {
		m := &monitors.Monitor{ID: fmt.Sprintf("m%02d", i), Slug: fmt.Sprintf("job-%02d", i), CreatedAt: start.AddDate(0, 0, -1)}
		in = append(in, monitors.ReportInput{Monitor: m, Stats: monitors.UptimeStats{
			Incidents: map[monitors.IncidentKind]monitors.IncidentTally{monitors.IncidentMissed: {Count: 1, Duration: time.Duration(i) * time.Minute}}}})
	}
	in = append(in,
		monitors.ReportInput{Monitor: &monitors.Monitor{ID: "gone", CreatedAt: start, State: monitors.State{Status: monitors.StatusUndeclared}}},
		monitors.ReportInput{Monitor: &monitors.Monitor{ID: "after", CreatedAt: end}})
	r := monitors.BuildReport(monitors.ReportWeekly, start, end, end, in)
	require.Equal(t, 14, r.Monitors)
	require.Equal(t, 14, r.WithIncidentsTotal)
	require.Len(t, r.WithIncidents, monitors.ReportListMax)
	require.Equal(t, "job-13", r.WithIncidents[0].Slug, "most down time first")
	require.Equal(t, 14, r.NeverPingedTotal)
	require.Len(t, r.NeverPinged, monitors.ReportListMax)
	require.Equal(t, monitors.IncidentTally{Count: 14, Duration: 91 * time.Minute}, r.Incidents[monitors.IncidentMissed])
}
