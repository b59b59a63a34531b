package delivery_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
)

func TestNewNotification(t *testing.T) {
	t.Parallel()
	opened := T0
	resolved := T0.Add(12 * time.Minute)
	lastPing := T0.Add(-23 * time.Hour)
	in := &monitors.Incident{ID: "inc_1", MonitorID: "mon 1", Kind: monitors.IncidentMissed, OpenedAt: opened,
		ResolvedAt: &resolved, Summary: "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)"}
	m := &monitors.Monitor{ID: "mon 1", Name: "Nightly import", Slug: "nightly-import", Tags: []string{"etl"},
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *", TZ: "Europe/Berlin"},
		State:    monitors.State{Status: monitors.StatusUp, LastPingAt: lastPing}}
	d := &monitors.Delivery{ID: 7, IncidentID: "inc_1", Event: monitors.EventResolved, Summary: "nightly-import ran again"}

	n := delivery.NewNotification(d, in, m, resolved.Add(time.Second), baseURL+"/")
	require.NoError(t, n.Validate())
	require.Equal(t, &notifiers.Notification{
		Event: notifiers.EventResolved,
		Incident: notifiers.Incident{ID: "inc_1", Kind: notifiers.IncidentMissed, OpenedAt: opened, ResolvedAt: &resolved,
			Summary: "nightly-import ran again", Details: "Incident: " + in.Summary},
		Monitor: notifiers.Monitor{ID: "mon 1", Name: "Nightly import", Slug: "nightly-import", Status: "up",
			Tags: []string{"etl"}, URL: baseURL + "/monitors/mon%201", Schedule: "0 2 * * * (Europe/Berlin)",
			LastPingAt: &lastPing},
		SentAt:     resolved.Add(time.Second),
		BaseURL:    baseURL,
		DeliveryID: "inc_1.7",
	}, n)
	require.Equal(t, "UP Nightly import: recovered after 12m", n.Headline())
	require.Equal(t, "inc_1", n.DedupKey())

	// An opening carries the incident's own summary, and the expected time.
	expected := T0.Add(time.Hour)
	m.State = monitors.State{Status: monitors.StatusDown, Expected: expected}
	n = delivery.NewNotification(&monitors.Delivery{Event: monitors.EventOpened, Summary: in.Summary}, in, m, T0, baseURL)
	require.Equal(t, in.Summary, n.Incident.Summary)
	require.Empty(t, n.Incident.Details)
	require.Equal(t, "down", n.Monitor.Status)
	require.Equal(t, &expected, n.Monitor.NextExpectedAt)
	require.Nil(t, n.Monitor.LastPingAt)
	require.Equal(t, "DOWN Nightly import: missed", n.Headline())
}
