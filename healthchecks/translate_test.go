package healthchecks_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/healthchecks"
	"github.com/vigilhq/vigil/monitors"
)

func TestScheduleSpec(t *testing.T) {
	t.Parallel()
	cron := func(expr, tz string) monitors.ScheduleSpec {
		return monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: tz, Dialect: monitors.DialectCronie}
	}
	cal := func(expr, tz string) monitors.ScheduleSpec {
		return monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: expr, TZ: tz}
	}
	for _, tc := range []struct {
		expr, tz string
		want     monitors.ScheduleSpec
	}{
		{"0,30 * * * *", "", cron("0,30 * * * *", "UTC")},
		{" 15 5 * * * ", "Europe/Riga", cron("15 5 * * *", "Europe/Riga")},
		{"@daily", "UTC", cron("@daily", "UTC")},
		{"*-*~1 12:00", "UTC", cal("*-*~1 12:00", "UTC")},
		{"Mon..Fri 02:30", "Europe/Berlin", cal("Mon..Fri 02:30", "Europe/Berlin")},
		{"daily", "UTC", cal("daily", "UTC")},
		// Neither reads it: the likelier kind, for its error.
		{"61 * * * *", "UTC", cron("61 * * * *", "UTC")},
		{"Mon..Fru 02:30", "UTC", cal("Mon..Fru 02:30", "UTC")},
	} {
		require.Equal(t, tc.want, healthchecks.ScheduleSpec(tc.expr, tc.tz), tc.expr)
	}

	robfig := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "UTC", Dialect: monitors.DialectRobfig}
	require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "30 2 * * *", TZ: "Europe/Berlin",
		Dialect: monitors.DialectRobfig}, healthchecks.ScheduleUpdate(robfig, "30 2 * * *", "Europe/Berlin"))
	require.Equal(t, cron("30 3 * * *", "UTC"), healthchecks.ScheduleUpdate(robfig, "30 3 * * *", ""))
	require.Equal(t, []string{"prod", "www"}, healthchecks.Tags("  prod www prod "))
	require.Equal(t, []string{}, healthchecks.Tags(""))
}

func TestKinds(t *testing.T) {
	t.Parallel()
	for hc, vigil := range map[string]string{"email": "email", "webhook": "webhook", "slack": "slack", "pd": "pagerduty",
		"opsgenie": "opsgenie", "discord": "discord", "msteamsw": "teams", "msteams": "teams", "telegram": "telegram", "ntfy": "ntfy"} {
		k, ok := healthchecks.VigilKind(hc)
		require.True(t, ok, hc)
		require.Equal(t, vigil, k)
	}
	for _, hc := range []string{"sms", "call", "po", "matrix", "signal", "whatsapp", "shell"} {
		_, ok := healthchecks.VigilKind(hc)
		require.False(t, ok, hc)
	}
	require.Equal(t, "pd", healthchecks.KindName("pagerduty"))
	require.Equal(t, "msteamsw", healthchecks.KindName("teams"))
	require.Equal(t, "slack", healthchecks.KindName("slack"))
}
