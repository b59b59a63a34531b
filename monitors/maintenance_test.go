package monitors_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// TestMaintenanceTable drives an hourly monitor (grace 5m) through a
// maintenance window from 10:30 to 12:00.
func TestMaintenanceTable(t *testing.T) {
	t.Parallel()
	win := []monitors.Period{{Start: at("2026-01-01T10:30:00Z"), End: at("2026-01-01T12:00:00Z")}}
	type step struct {
		ping monitors.PingKind // "" for a tick
		at   string
		// opened and resolved are the kinds opened and resolved so far.
		opened, resolved []monitors.IncidentKind
		deadline         string // the next deadline after the step, "" for none to check
	}
	missed := []monitors.IncidentKind{monitors.IncidentMissed}
	failed := []monitors.IncidentKind{monitors.IncidentFailed}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"a deadline inside waits for a fresh grace after the end", []step{
			{ping: monitors.PingSuccess, at: "2026-01-01T10:00:00Z", deadline: "2026-01-01T11:05:00Z"},
			{at: "2026-01-01T11:05:00Z", deadline: "2026-01-01T12:05:00Z"},
			{at: "2026-01-01T12:04:59Z"},
			{at: "2026-01-01T12:05:00Z", opened: missed},
		}},
		{"a ping in the fresh grace window ends it quietly", []step{
			{ping: monitors.PingSuccess, at: "2026-01-01T10:00:00Z"},
			{at: "2026-01-01T11:05:00Z", deadline: "2026-01-01T12:05:00Z"},
			{ping: monitors.PingSuccess, at: "2026-01-01T12:03:00Z", deadline: "2026-01-01T13:05:00Z"},
			{at: "2026-01-01T13:04:00Z"},
		}},
		{"a failure inside is judged but opens nothing; one after does", []step{
			{ping: monitors.PingFail, at: "2026-01-01T11:00:00Z"},
			{ping: monitors.PingFail, at: "2026-01-01T12:00:00Z", opened: failed},
		}},
		{"an incident open before stays open and is updated", []step{
			{ping: monitors.PingFail, at: "2026-01-01T10:00:00Z", opened: failed},
			{ping: monitors.PingFail, at: "2026-01-01T11:00:00Z", opened: failed},
			{ping: monitors.PingSuccess, at: "2026-01-01T11:30:00Z", opened: failed, resolved: failed},
		}},
		{"a rule due before the start but applied inside waits too", []step{
			{ping: monitors.PingSuccess, at: "2026-01-01T09:20:00Z", deadline: "2026-01-01T10:05:00Z"},
			{at: "2026-01-01T10:40:00Z", deadline: "2026-01-01T12:05:00Z"},
			{at: "2026-01-01T12:05:00Z", opened: missed},
		}},
		{"a rule due at the start itself is not planned work", []step{
			{ping: monitors.PingSuccess, at: "2026-01-01T09:25:00Z", deadline: "2026-01-01T10:05:00Z"},
			{at: "2026-01-01T10:05:00Z", opened: missed},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScenario(t, hourly())
			s.m.Maintenance = win
			for i, st := range tc.steps {
				if st.ping != "" {
					s.ping(st.ping, at(st.at))
				} else {
					tr, err := monitors.ApplyTime(s.m, at(st.at), monitors.TimeOptions{})
					require.NoError(t, err)
					s.record(tr)
				}
				require.Equal(t, st.opened, s.opened(), "step %d: opened", i)
				require.Equal(t, st.resolved, s.resolved(), "step %d: resolved", i)
				if st.deadline != "" {
					require.Equal(t, at(st.deadline), s.deadline(), "step %d: next deadline", i)
				}
			}
		})
	}
}

func TestMaintenanceWindowPeriods(t *testing.T) {
	t.Parallel()
	spec, err := monitors.ParseMaintenanceSchedule("0 2 * * 0", "Europe/Berlin")
	require.NoError(t, err)
	require.Equal(t, monitors.ScheduleCron, spec.Kind)
	w := &monitors.MaintenanceWindow{Name: "sunday", All: true, Schedule: spec, DurationSeconds: 7200}
	require.NoError(t, w.Validate())
	// The autumn change in Berlin: 2026-10-25, 03:00 CEST becomes 02:00 CET.
	p, ok := w.PeriodAt(at("2026-10-25T02:30:00Z"))
	require.True(t, ok)
	require.Equal(t, at("2026-10-25T00:00:00Z"), p.Start.UTC(), "02:00 CEST")
	require.Equal(t, at("2026-10-25T02:00:00Z"), p.End.UTC())
	require.True(t, w.Active(at("2026-10-25T01:59:00Z")))
	require.False(t, w.Active(at("2026-10-25T02:00:00Z")))
	p, _ = w.PeriodAt(at("2026-11-01T01:30:00Z"))
	require.Equal(t, at("2026-11-01T01:00:00Z"), p.Start.UTC(), "02:00 CET a week later")

	cal, err := monitors.ParseMaintenanceSchedule("Sun *-*-* 02:00:00", "Europe/Berlin")
	require.NoError(t, err)
	require.Equal(t, monitors.ScheduleOnCalendar, cal.Kind)

	ended := at("2026-10-25T01:00:00Z")
	w.EndedAt = &ended
	require.False(t, w.Active(at("2026-10-25T01:30:00Z")), "ended now")
	require.True(t, w.Active(at("2026-11-01T01:30:00Z")), "the next occurrence still comes")

	for _, tc := range []struct {
		field string
		w     monitors.MaintenanceWindow
	}{
		{"name", monitors.MaintenanceWindow{All: true, StartsAt: at("2026-01-01T10:00:00Z"), EndsAt: at("2026-01-01T11:00:00Z")}},
		{"monitors", monitors.MaintenanceWindow{Name: "x", StartsAt: at("2026-01-01T10:00:00Z"), EndsAt: at("2026-01-01T11:00:00Z")}},
		{"all", monitors.MaintenanceWindow{Name: "x", All: true, Tags: []string{"db"}, StartsAt: at("2026-01-01T10:00:00Z"), EndsAt: at("2026-01-01T11:00:00Z")}},
		{"ends_at", monitors.MaintenanceWindow{Name: "x", All: true, StartsAt: at("2026-01-01T10:00:00Z"), EndsAt: at("2026-01-01T09:00:00Z")}},
		{"starts_at", monitors.MaintenanceWindow{Name: "x", All: true, EndsAt: at("2026-01-01T09:00:00Z")}},
		{"duration_seconds", monitors.MaintenanceWindow{Name: "x", All: true, Schedule: spec}},
		{"tags", monitors.MaintenanceWindow{Name: "x", Tags: []string{"a b"}, StartsAt: at("2026-01-01T10:00:00Z"), EndsAt: at("2026-01-01T11:00:00Z")}},
	} {
		err := tc.w.Validate()
		var ve *monitors.ValidationError
		require.ErrorAs(t, err, &ve, tc.field)
		require.Equal(t, tc.field, ve.Field)
	}
	_, err = monitors.ParseMaintenanceSchedule("every sunday", "UTC")
	require.ErrorContains(t, err, "schedule")
	_, err = monitors.ParseMaintenanceSchedule("0 2 * * 0", "Mars/Olympus")
	var ve *monitors.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, "tz", ve.Field)
	_ = time.Second
}
