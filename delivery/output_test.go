package delivery_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

// TestFailureOutput: the output of a failing run, its exit status and its
// attempt reach a webhook, Slack and e-mail through the store, River and
// real receivers; with notify_output off, the output stays out.
func TestFailureOutput(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			hook, slack := notifiertest.NewReceiver(t, nil), notifiertest.NewReceiver(t, nil)
			mailSrv := startMailServer(t)
			h := newHarness(t, dialect, func(c *delivery.Config) {
				c.HTTPClient = rewriteClient(t, map[string]*notifiertest.Receiver{"hooks.slack.com": slack})
				c.SMTP = email.SMTPConfig{Host: "127.0.0.1", Port: mailSrv.Port, From: "Vigil <vigil@example.com>",
					TLS: email.TLSNone}
			})
			chans := []*monitors.Channel{
				h.channel("webhook", "webhook", map[string]any{"url": hook.URL}, false),
				h.channel("slack", "slack", map[string]any{"webhook_url": "https://hooks.slack.com" + slackPath}, false),
				h.channel("email", "email", map[string]any{"to": []string{"oncall@example.com"}}, false),
			}
			const output = "copying 1200 rows\nwriting /var/data <tmp>\nboom: disk full\n"
			failRun := func(m *monitors.Monitor, rid string) *monitors.Incident {
				start := storetest.Ping(m, monitors.PingStart, h.clock.Now())
				start.Ping.RID, start.Ping.Attempt = rid, 4
				storetest.MustRecord(t, h.store, start)
				h.clock.Set(h.clock.Now().Add(1500 * time.Millisecond))
				code := 3
				fail := storetest.Ping(m, monitors.PingFail, h.clock.Now())
				fail.Ping.RID, fail.Ping.Attempt, fail.Ping.ExitCode, fail.Ping.Body = rid, 4, &code, output
				storetest.MustRecord(t, h.store, fail)
				ins, err := h.store.IncidentList(t.Context(), &monitors.IncidentListParams{ProjectID: h.prj.ID,
					MonitorID: m.ID, OpenOnly: true})
				require.NoError(t, err)
				require.Len(t, ins, 1)
				return ins[0]
			}

			m := h.monitor("nightly-import", chans...)
			in := failRun(m, "run-1")
			for _, d := range h.settled(in.ID, len(chans)) {
				require.Equal(t, monitors.DeliverySent, d.State)
			}

			var payload webhook.Payload
			require.NoError(t, json.Unmarshal(hook.Only(t).Body, &payload))
			require.NotNil(t, payload.Ping)
			require.Equal(t, "copying 1200 rows\nwriting /var/data <tmp>\nboom: disk full", payload.Ping.Body)
			require.Equal(t, 3, *payload.Ping.ExitCode)
			require.Equal(t, 4, payload.Ping.Attempt)
			require.Equal(t, "fail", payload.Ping.Kind)
			require.NotNil(t, payload.Run)
			require.Equal(t, "run-1", payload.Run.RID)
			require.Equal(t, int64(1500), *payload.Run.DurationMS)
			require.Equal(t, baseURL+"/monitors/"+m.ID+"#run-1", payload.Run.URL)

			slackBody := string(slack.Only(t).Body)
			require.Contains(t, slackBody, "boom: disk full")
			require.Contains(t, slackBody, `writing /var/data \u0026lt;tmp\u0026gt;`, "escaped for mrkdwn")
			require.Contains(t, slackBody, `*Exit status*\n3`)
			require.Contains(t, slackBody, "failed after 4 attempts")

			mails := mailSrv.Messages()
			require.Len(t, mails, 1)
			data := strings.ReplaceAll(mails[0].Data, "=\r\n", "") // quoted-printable soft breaks
			require.Contains(t, data, "boom: disk full")
			require.Contains(t, data, "Exit status: 3")
			require.Contains(t, data, "&lt;tmp&gt;", "escaped in the HTML part")

			// notify_output: false keeps the output out, and nothing else.
			quiet := storetest.MustMonitor(t, h.store, h.prj.ID, "quiet", func(m *monitors.Monitor) {
				m.HideOutput = true
				m.Channels = []string{chans[0].ID}
			})
			in = failRun(quiet, "run-2")
			h.settled(in.ID, 1)
			reqs := hook.Requests()
			require.Len(t, reqs, 2)
			payload = webhook.Payload{}
			require.NoError(t, json.Unmarshal(reqs[1].Body, &payload))
			require.Empty(t, payload.Ping.Body)
			require.Equal(t, 3, *payload.Ping.ExitCode)
			require.NotContains(t, string(reqs[1].Body), "disk full")
		})
	}
}
