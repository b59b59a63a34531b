package web_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/evaluator"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
)

// TestBrowserChannelReport drives the dashboard in headless Chromium: a
// webhook channel made with a weekly report gets the last complete week's
// report at once (the evaluator looks every 100 ms here, every minute by
// default), the list says so, and the edit form changes it to monthly and
// then to none. A PagerDuty channel's form has no report.
func TestBrowserChannelReport(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	srv, base := startDashboard(t, ctx, func(c *server.Config) {
		c.Delivery = delivery.Config{AllowPrivate: true}
		c.Evaluator = evaluator.Config{ReportInterval: 100 * time.Millisecond}
	})
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	addPerson(t, store, prj.ID, "ada@example.com", "report-password-1")
	receiver := newHook(t)

	b := openBrowser(t, ctx, base, "UTC")
	b.open("/", "Sign in to Vigil")
	b.fill("#email", "ada@example.com")
	b.fill("#password", "report-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("signed in", `!!document.querySelector('a[href="/channels"]')`, 10*time.Second)

	b.open("/channels/new?kind=pagerduty", "New PagerDuty channel")
	require.Equal(t, "false", b.eval(`String(!!document.querySelector("#c-report"))`), "PagerDuty takes no reports")

	b.open("/channels/new?kind=webhook", "New Webhook channel")
	b.checkLabels("the channel form")
	b.fill("#c-name", "weekly report")
	b.fill("#c-url", receiver.srv.URL+"/reports")
	b.eval(`document.querySelector("#c-report").value = "weekly"; ""`)
	b.click(`form[action="/channels"] button[type="submit"]`)
	b.waitFor("channel created", b.hasText("Created the channel weekly report."), 10*time.Second)
	b.waitFor("the list says so", `document.querySelector('tr[data-channel="weekly report"]').innerText.includes("weekly report")`, 5*time.Second)

	require.Eventually(t, func() bool { return len(receiver.received()) == 1 }, 20*time.Second, 20*time.Millisecond,
		"the last complete week's report is sent at once")
	var p struct {
		Event  string
		Report struct {
			Period     string
			Start, End time.Time
			Project    string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(receiver.received()[0]), &p))
	require.Equal(t, "report.weekly", p.Event)
	start, end := monitors.ReportPeriodAt(monitors.ReportWeekly, time.Now())
	require.True(t, p.Report.Start.Equal(start), "the last complete week starts %s, not %s", start, p.Report.Start)
	require.True(t, p.Report.End.Equal(end), "the last complete week ends %s, not %s", end, p.Report.End)
	require.Equal(t, prj.Name, p.Report.Project)

	chs, err := store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: prj.ID})
	require.NoError(t, err)
	require.Len(t, chs, 1)
	require.Equal(t, monitors.ReportWeekly, chs[0].Report)

	b.open("/channels/"+chs[0].ID+"/edit", "Edit weekly report")
	require.Equal(t, "weekly", b.eval(`document.querySelector("#c-report").value`))
	b.eval(`document.querySelector("#c-report").value = "monthly"; ""`)
	b.click(`form[action="/channels/` + chs[0].ID + `"] button[type="submit"]`)
	b.waitFor("saved", b.hasText("Saved the channel weekly report."), 10*time.Second)
	got, err := store.ChannelGet(ctx, prj.ID, chs[0].ID)
	require.NoError(t, err)
	require.Equal(t, monitors.ReportMonthly, got.Report)

	b.open("/channels/"+chs[0].ID+"/edit", "Edit weekly report")
	b.eval(`document.querySelector("#c-report").value = ""; ""`)
	b.click(`form[action="/channels/` + chs[0].ID + `"] button[type="submit"]`)
	b.waitFor("saved", b.hasText("Saved the channel weekly report."), 10*time.Second)
	got, err = store.ChannelGet(ctx, prj.ID, chs[0].ID)
	require.NoError(t, err)
	require.Equal(t, monitors.ReportNone, got.Report)
}
