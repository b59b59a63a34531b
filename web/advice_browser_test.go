package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/server"
	"github.com/vigilhq/vigil/web"
)

// TestBrowserAdviceAndOccurrences drives the dashboard in headless
// Chromium: the list flags the monitors whose settings call for advice,
// the monitor page shows the advice in full (the same strings as the API's
// warnings), and its ping list shows the occurrence each ping named
// (scheduled_at).
func TestBrowserAdviceAndOccurrences(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	srv, base := startDashboard(t, ctx, func(c *server.Config) { c.Web = web.Config{RefreshInterval: time.Second} })
	store := srv.Store()
	projects, err := store.ProjectList(ctx)
	require.NoError(t, err)
	prj := projects[0]
	addPerson(t, store, prj.ID, "ada@example.com", "advice-password-1")

	hourly := insertMonitor(t, store, prj.ID, "hourly-sync", func(m *monitors.Monitor) {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}
		m.GraceSeconds = 3600
		m.RetryPolicy = &monitors.RetryPolicy{Name: "hangfire-default", MaxRetries: 10,
			MaxDelaysSeconds: []int64{44, 74, 118, 212, 416, 814, 1514, 2648, 4372, 6866}}
	})
	insertMonitor(t, store, prj.ID, "quiet-job", func(m *monitors.Monitor) {
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}
	})
	var adviser monitors.Adviser
	want := adviser.Advise(hourly, time.Now())
	require.Len(t, want, 2)

	// Two attempts of one occurrence, and a ping that named none.
	now := time.Now().UTC().Truncate(time.Second)
	occ := now.Truncate(time.Hour)
	retryAt := now.Add(time.Minute)
	code := 3
	record(t, store, hourly,
		monitors.Ping{Kind: monitors.PingFail, At: now.Add(-2 * time.Minute), Attempt: 1, ScheduledAt: &occ, RetryAt: &retryAt, ExitCode: &code},
		monitors.Ping{Kind: monitors.PingLog, At: now.Add(-time.Minute), Body: "a note"},
		monitors.Ping{Kind: monitors.PingSuccess, At: now, Attempt: 2, ScheduledAt: &occ})

	b := openBrowser(t, ctx, base, "UTC")

	b.open("/", "Sign in to Vigil")
	b.fill("#email", "ada@example.com")
	b.fill("#password", "advice-password-1")
	b.click(`form[action="/login"] button[type="submit"]`)
	b.waitFor("the list", `!!document.querySelector('tr[data-slug="hourly-sync"]')`, 10*time.Second)

	// The list: a flag naming the fields, the full advice in its title.
	flag := `document.querySelector('tr[data-slug="hourly-sync"] .advice-flag a')`
	b.waitFor("the advice flag", flag+`?.textContent.includes("2 warnings: retry_policy, grace_seconds")`, 5*time.Second)
	require.Equal(t, strings.Join(monitors.AdviceStrings(want), "\n"), b.eval(flag+`.title`))
	require.Equal(t, "false", b.eval(`String(!!document.querySelector('tr[data-slug="quiet-job"] .advice-flag'))`), "no advice, no flag")
	b.checkLabels("the list with advice")
	b.capture("list-advice", chromedp.CaptureScreenshot())

	// The monitor page: each advice in full, and the list's link leads there.
	b.click(`tr[data-slug="hourly-sync"] .advice-flag a`)
	b.waitFor("the advice card", `!!document.querySelector(".card-advice")`, 10*time.Second)
	for _, a := range want {
		got := b.eval(fmt.Sprintf(`document.querySelector('.card-advice li[data-field=%q]').textContent`, a.Field))
		require.Equal(t, a.String(), strings.TrimSpace(got))
	}
	require.Contains(t, b.eval(`document.querySelector(".card-advice").textContent`), "4h44m")
	b.checkLabels("the monitor page with advice")
	b.capture("monitor-advice", chromedp.CaptureScreenshot())

	// The ping list: "Scheduled for" holds the occurrence of each attempt,
	// and nothing for the ping that named none.
	cells := b.eval(`[...document.querySelectorAll(".pings tbody tr")].map(tr => {
		const c = tr.querySelector('td[data-label="Scheduled for"] time');
		return tr.querySelector(".ping-kind").textContent + "=" + (c ? c.getAttribute("datetime") : "");
	}).join(" ")`)
	iso := occ.Format(time.RFC3339)
	require.Equal(t, "success="+iso+" log= fail="+iso, cells)
	require.Equal(t, "Scheduled for", b.eval(`document.querySelectorAll(".pings thead th")[1].textContent`))

	// Advice taken: the card goes, on the page's own refresh.
	_, err = store.MonitorModify(ctx, &monitors.MonitorModifyParams{ProjectID: prj.ID, ID: hourly.ID,
		Fn: func(m *monitors.Monitor) (*monitors.Transition, error) {
			m.GraceSeconds, m.RetryPolicy = 300, nil
			return &monitors.Transition{}, nil
		}})
	require.NoError(t, err)
	b.waitFor("no advice", `!document.querySelector(".card-advice")`, 10*time.Second)
	require.Empty(t, b.eval(`sessionStorage.getItem("problems") || ""`))
}
