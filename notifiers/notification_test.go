package notifiers_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
)

func TestHeadline(t *testing.T) {
	t.Parallel()
	updated := notifiertest.Notification(notifiers.EventUpdated)
	updated.Incident.Kind = notifiers.IncidentFailed
	noName := notifiertest.Opened()
	noName.Monitor.Name = ""
	kind := func(k notifiers.IncidentKind) *notifiers.Notification {
		n := notifiertest.Opened()
		n.Incident.Kind = k
		return n
	}
	cases := []struct {
		n    *notifiers.Notification
		want string
	}{
		{notifiertest.Opened(), "DOWN nightly-import: missed"},
		{notifiertest.Resolved(), "UP nightly-import: recovered after 12m"},
		{notifiertest.Notification(notifiers.EventReminder), "STILL DOWN nightly-import: missed, down for 2h"},
		{updated, "DOWN nightly-import: failed (update)"},
		{notifiertest.Notification(notifiers.EventTest), "TEST nightly-import: test notification from Vigil"},
		{noName, "DOWN nightly-import: missed"},
		{notifiertest.TooFast(), "DOWN nightly-backup: succeeded too fast, in 2s"},
		{kind(notifiers.IncidentTooFast), "DOWN nightly-import: succeeded too fast"},
		{kind(notifiers.IncidentEarly), "DOWN nightly-import: started early"},
		{kind(notifiers.IncidentTooOften), "DOWN nightly-import: ran too often"},
	}
	for _, c := range cases {
		require.Equal(t, c.want, c.n.Headline())
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	cases := map[time.Duration]string{
		0:                                     "0s",
		45 * time.Second:                      "45s",
		59*time.Second + 600*time.Millisecond: "1m",
		12*time.Minute + 20*time.Second:       "12m",
		12*time.Minute + 31*time.Second:       "13m",
		time.Hour:                             "1h",
		time.Hour + 5*time.Minute:             "1h 5m",
		26 * time.Hour:                        "1d 2h",
		72*time.Hour + 10*time.Minute:         "3d",
	}
	for d, want := range cases {
		require.Equal(t, want, notifiers.FormatDuration(d), d.String())
	}
}

func TestDedupKeyAndDowntime(t *testing.T) {
	t.Parallel()
	opened := notifiertest.Opened()
	require.Equal(t, "inc_01HZX3M4W6", opened.DedupKey())
	require.Zero(t, opened.Downtime())
	require.Equal(t, 2*time.Second, opened.OpenFor())

	resolved := notifiertest.Resolved()
	require.Equal(t, opened.DedupKey(), resolved.DedupKey(), "open and resolve share a key")
	require.Equal(t, 12*time.Minute+20*time.Second, resolved.Downtime())
	require.Equal(t, resolved.Downtime(), resolved.OpenFor())

	test := notifiertest.Notification(notifiers.EventTest)
	require.Equal(t, test.DedupKey(), notifiertest.Notification(notifiers.EventTest).DedupKey(), "a retried test keeps its key")
	later := notifiertest.Notification(notifiers.EventTest)
	later.SentAt = later.SentAt.Add(time.Minute)
	require.NotEqual(t, test.DedupKey(), later.DedupKey(), "another test is another alert")
}

func TestFacts(t *testing.T) {
	t.Parallel()
	require.Equal(t, []notifiers.Fact{
		{Label: "Schedule", Value: "0 2 * * * (Europe/Berlin)"},
		{Label: "Expected", Value: "2026-03-14 01:00 UTC"},
		{Label: "Last ping", Value: "2026-03-13 01:00 UTC"},
		{Label: "Opened", Value: "2026-03-14 01:05 UTC"},
		{Label: "Tags", Value: "etl, billing"},
	}, notifiertest.Opened().Facts())

	require.Equal(t, []notifiers.Fact{
		{Label: "Schedule", Value: "0 2 * * * (Europe/Berlin)"},
		{Label: "Last ping", Value: "2026-03-13 01:00 UTC"},
		{Label: "Opened", Value: "2026-03-14 01:05 UTC"},
		{Label: "Resolved", Value: "2026-03-14 01:17 UTC"},
		{Label: "Downtime", Value: "12m"},
		{Label: "Tags", Value: "etl, billing"},
	}, notifiertest.Resolved().Facts())

	never := notifiertest.Opened()
	never.Monitor.LastPingAt = nil
	require.Contains(t, never.Facts(), notifiers.Fact{Label: "Last ping", Value: "never"})
}

func TestNotificationValidate(t *testing.T) {
	t.Parallel()
	for _, e := range []notifiers.Event{notifiers.EventOpened, notifiers.EventResolved, notifiers.EventUpdated,
		notifiers.EventReminder, notifiers.EventTest} {
		require.NoError(t, notifiertest.Notification(e).Validate(), e)
	}
	bad := notifiertest.Resolved()
	bad.Event = "incident.exploded"
	bad.Incident.ID = ""
	bad.Incident.Kind = "bored"
	bad.SentAt = time.Time{}
	err := bad.Validate()
	require.Error(t, err)
	for _, part := range []string{`event "incident.exploded"`, "incident id is empty", `incident kind "bored"`, "sent_at is zero"} {
		require.Contains(t, err.Error(), part)
	}
	noResolved := notifiertest.Resolved()
	noResolved.Incident.ResolvedAt = nil
	require.ErrorContains(t, noResolved.Validate(), "resolved notification has no resolved_at")
}
