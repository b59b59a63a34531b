package delivery_test

import (
	"context"
	"encoding/json"
	"mime"
	"net/http"
	netmail "net/mail"
	"strconv"
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

// TestReportDelivery claims a week's report for a webhook that fails once,
// a Slack channel, an e-mail channel, and a PagerDuty channel stored with
// a report (as no person can make one): the report goes through the
// delivery path like an incident, the webhook's retry sends the same body
// under the same Vigil-Delivery-Id, the e-mail stands alone, and PagerDuty
// fails for good without a request.
func TestReportDelivery(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			hook := notifiertest.NewReceiver(t, statuses(http.StatusServiceUnavailable))
			slackRecv, pdRecv := notifiertest.NewReceiver(t, nil), notifiertest.NewReceiver(t, nil)
			mailSrv := startMailServer(t)
			h := newHarness(t, dialect, func(c *delivery.Config) {
				c.HTTPClient = rewriteClient(t, map[string]*notifiertest.Receiver{
					"hooks.slack.com": slackRecv, "events.pagerduty.com": pdRecv})
				c.SMTP = email.SMTPConfig{Host: "127.0.0.1", Port: mailSrv.Port, From: "Vigil <vigil@example.com>",
					TLS: email.TLSNone}
			})
			ctx := context.Background()
			storetest.SeedReportWeek(t, h.store, h.prj.ID)
			now := storetest.ReportWeekEnd.Add(30 * time.Second)
			h.clock.Set(now)
			report, err := monitors.LoadReport(ctx, h.store, h.prj.ID, monitors.ReportWeekly,
				storetest.ReportWeekStart, storetest.ReportWeekEnd, now)
			require.NoError(t, err)

			withReport := func(kind, name string, config any) *monitors.Channel {
				raw, err := json.Marshal(config)
				require.NoError(t, err)
				ch, err := h.store.ChannelCreate(ctx, &monitors.ChannelCreateParams{ID: storetest.RandomID("ch_"),
					ProjectID: h.prj.ID, Kind: kind, Name: name, Config: raw, Report: monitors.ReportWeekly, Now: T0})
				require.NoError(t, err)
				return ch
			}
			chans := map[string]*monitors.Channel{
				"webhook":   withReport("webhook", "hook", map[string]any{"url": hook.URL + "/reports", "secret": hookSecret}),
				"slack":     withReport("slack", "slack", map[string]any{"webhook_url": "https://hooks.slack.com" + slackPath}),
				"email":     withReport("email", "mail", map[string]any{"to": []string{"team@example.com"}}),
				"pagerduty": withReport("pagerduty", "pager", map[string]any{"routing_key": pdRoutingKey}),
			}
			claimed := map[string]*monitors.Delivery{}
			for kind, ch := range chans {
				r := *report
				r.ID, r.ChannelID = monitors.ReportID(ch.ID, monitors.ReportWeekly, storetest.ReportWeekStart), ch.ID
				d, err := h.store.ReportClaim(ctx, &monitors.ReportClaimParams{Report: &r, Now: now})
				require.NoError(t, err, kind)
				claimed[kind] = d
			}
			settled := map[string]*monitors.Delivery{}
			require.Eventually(t, func() bool {
				for kind, d := range claimed {
					got, err := h.store.DeliveryGet(ctx, h.prj.ID, d.ID)
					require.NoError(t, err)
					if got.State == monitors.DeliveryPending {
						return false
					}
					settled[kind] = got
				}
				return true
			}, 20*time.Second, 10*time.Millisecond, "the reports were not delivered")

			require.Equal(t, monitors.DeliverySent, settled["webhook"].State)
			require.Equal(t, 2, settled["webhook"].Attempts, "503, then 200")
			reqs := hook.Requests()
			require.Len(t, reqs, 2)
			id := "report-" + chans["webhook"].ID + ".weekly.2026-11-23." + strconv.FormatInt(claimed["webhook"].ID, 10)
			for _, q := range reqs {
				require.Equal(t, id, q.Header.Get(webhook.DeliveryIDHeader), "the same on every attempt")
				require.Equal(t, "report.weekly", eventOf(t, q.Body))
				require.NoError(t, webhook.Verify(hookSecret, q.Header.Get(webhook.SignatureHeader), q.Body, now, time.Hour))
			}
			require.Equal(t, string(reqs[0].Body), string(reqs[1].Body), "every attempt sends the same report")

			require.Equal(t, monitors.DeliverySent, settled["slack"].State)
			sl := slackRecv.Only(t)
			require.Contains(t, string(sl.Body), "Weekly report for project: week of 23–29 Nov 2026 (UTC)")
			require.Contains(t, string(sl.Body), "\\u003chttps://vigil.example.com/monitors/")

			require.Equal(t, monitors.DeliverySent, settled["email"].State)
			msgs := mailSrv.Messages()
			require.Len(t, msgs, 1)
			msg, err := netmail.ReadMessage(strings.NewReader(msgs[0].Data))
			require.NoError(t, err)
			subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
			require.NoError(t, err)
			require.Equal(t, "[Vigil] Weekly report for project: week of 23–29 Nov 2026 (UTC)", subject)
			require.Empty(t, msg.Header.Get("In-Reply-To"), "a report starts a thread of its own")
			require.Equal(t, "<vigil.vigil-report-"+chans["email"].ID+"-weekly-2026-11-23-"+
				strconv.FormatInt(claimed["email"].ID, 10)+"@example.com>", strings.TrimSpace(msg.Header.Get("Message-ID")))
			require.Contains(t, msgs[0].Data, "Monitors with incidents:")

			require.Equal(t, monitors.DeliveryFailed, settled["pagerduty"].State)
			require.Equal(t, 1, settled["pagerduty"].Attempts)
			require.Empty(t, pdRecv.Requests(), "PagerDuty is never sent a report")
			h.jobsEventually(map[string]int{"completed": 3, "cancelled": 1})
			// A queue of their own, which binaries older than reports do
			// not work.
			require.Equal(t, map[string]int{delivery.ReportQueueName: 4}, h.jobQueues())
		})
	}
}
