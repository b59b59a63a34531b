package delivery_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for reading River's tables
	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/delivery"
	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/pgstore"
	"github.com/vigilhq/vigil/monitors/sqlitestore"
	"github.com/vigilhq/vigil/monitors/storetest"
	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

const (
	hookSecret   = "whsec-0123456789abcdef"
	slackPath    = "/services/T0001/B0002/SLACKSECRETTOKEN"
	pdRoutingKey = "pdroutingkey0123456789abcdef012"
	tgBotToken   = "123456:ABCDEF-telegram-secret"
	ogAPIKey     = "opsgenie-api-key-0123"
)

// TestEveryKind sends an incident's opening and recovery to a channel of
// every kind, through the store's hook, River and the worker, to real
// receivers: HTTP servers, and an SMTP server for e-mail.
func TestEveryKind(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := map[string]*notifiertest.Receiver{}
			for _, k := range []string{"slack", "webhook", "pagerduty", "discord", "teams", "opsgenie", "telegram", "ntfy"} {
				recv[k] = notifiertest.NewReceiver(t, nil)
			}
			mailSrv := startMailServer(t)
			client := rewriteClient(t, map[string]*notifiertest.Receiver{
				"hooks.slack.com":            recv["slack"],
				"events.pagerduty.com":       recv["pagerduty"],
				"discord.com":                recv["discord"],
				"example.webhook.office.com": recv["teams"],
				"api.opsgenie.com":           recv["opsgenie"],
				"api.telegram.org":           recv["telegram"],
				"ntfy.sh":                    recv["ntfy"],
			})
			h := newHarness(t, dialect, func(c *delivery.Config) {
				c.HTTPClient = client
				c.SMTP = email.SMTPConfig{Host: "127.0.0.1", Port: mailSrv.Port, From: "Vigil <vigil@example.com>",
					TLS: email.TLSNone}
			})
			chans := []*monitors.Channel{
				h.channel("slack", "slack", map[string]any{"webhook_url": "https://hooks.slack.com" + slackPath}, false),
				h.channel("email", "email", map[string]any{"to": []string{"oncall@example.com"}}, false),
				h.channel("webhook", "webhook", map[string]any{"url": recv["webhook"].URL + "/hook", "secret": hookSecret}, false),
				h.channel("pagerduty", "pagerduty", map[string]any{"routing_key": pdRoutingKey}, false),
				h.channel("discord", "discord", map[string]any{"webhook_url": "https://discord.com/api/webhooks/1/discordsecret"}, false),
				h.channel("teams", "teams", map[string]any{"webhook_url": "https://example.webhook.office.com/workflows/teamssecret"}, false),
				h.channel("opsgenie", "opsgenie", map[string]any{"api_key": ogAPIKey}, false),
				h.channel("telegram", "telegram", map[string]any{"bot_token": tgBotToken, "chat_id": "-100123"}, false),
				h.channel("ntfy", "ntfy", map[string]any{"url": "https://ntfy.sh/vigil-alerts"}, false),
			}
			m := h.monitor("nightly-import", chans...)
			in := h.fail(m)
			h.clock.Set(T0.Add(12 * time.Minute))
			h.succeed(m)

			ds := h.settled(in.ID, 2*len(chans))
			for _, d := range ds {
				require.Equal(t, monitors.DeliverySent, d.State, "delivery %d to %s", d.ID, d.ChannelID)
				require.Equal(t, []monitors.AttemptOutcome{monitors.AttemptSuccess}, outcomes(d.AttemptLog))
			}

			// Each HTTP receiver got the opening, then the recovery.
			for kind, r := range recv {
				reqs := r.Requests()
				require.Len(t, reqs, 2, kind)
				for _, q := range reqs {
					require.Equal(t, http.MethodPost, q.Method, kind)
				}
			}
			opened, resolved := recv["webhook"].Requests()[0], recv["webhook"].Requests()[1]
			require.Equal(t, "/hook", opened.Path)
			require.Equal(t, "incident.opened", eventOf(t, opened.Body))
			require.Equal(t, "incident.resolved", eventOf(t, resolved.Body))
			for _, q := range []notifiertest.Request{opened, resolved} {
				require.NoError(t, webhook.Verify(hookSecret, q.Header.Get(webhook.SignatureHeader), q.Body,
					h.clock.Now(), time.Hour))
			}
			var payload struct {
				Incident struct {
					ID, Kind, Summary string
				}
				Monitor struct {
					ID, Name, Slug, URL string
					Tags                []string
				}
			}
			require.NoError(t, json.Unmarshal(opened.Body, &payload))
			require.Equal(t, in.ID, payload.Incident.ID)
			require.Equal(t, "failed", payload.Incident.Kind)
			require.Equal(t, in.Summary, payload.Incident.Summary)
			require.Equal(t, m.ID, payload.Monitor.ID)
			require.Equal(t, "nightly-import", payload.Monitor.Slug)
			require.Equal(t, []string{"etl"}, payload.Monitor.Tags)
			require.Equal(t, baseURL+"/monitors/"+m.ID, payload.Monitor.URL)

			// PagerDuty: trigger, then resolve, both keyed by the incident.
			var pd []struct {
				RoutingKey  string `json:"routing_key"`
				EventAction string `json:"event_action"`
				DedupKey    string `json:"dedup_key"`
			}
			for _, q := range recv["pagerduty"].Requests() {
				require.Equal(t, "/v2/enqueue", q.Path)
				var e struct {
					RoutingKey  string `json:"routing_key"`
					EventAction string `json:"event_action"`
					DedupKey    string `json:"dedup_key"`
				}
				require.NoError(t, json.Unmarshal(q.Body, &e))
				pd = append(pd, e)
			}
			require.Equal(t, "trigger", pd[0].EventAction)
			require.Equal(t, "resolve", pd[1].EventAction)
			for _, e := range pd {
				require.Equal(t, in.ID, e.DedupKey)
				require.Equal(t, pdRoutingKey, e.RoutingKey)
			}

			require.Equal(t, slackPath, recv["slack"].Requests()[0].Path)
			require.Contains(t, string(recv["slack"].Requests()[0].Body), "nightly-import")
			require.Equal(t, "/bot"+tgBotToken+"/sendMessage", recv["telegram"].Requests()[0].Path)
			require.Equal(t, "/vigil-alerts", recv["ntfy"].Requests()[0].Path)
			require.Equal(t, "/v2/alerts", recv["opsgenie"].Requests()[0].Path)
			require.Contains(t, recv["opsgenie"].Requests()[1].Path, "/close")

			// E-mail: two messages in one thread.
			mails := mailSrv.Messages()
			require.Len(t, mails, 2)
			require.Equal(t, []string{"oncall@example.com"}, mails[0].To)
			require.Contains(t, mails[0].Data, "DOWN nightly-import")
			require.Contains(t, mails[1].Data, "UP nightly-import")

			require.Equal(t, 2.0, counter(h, "vigil_delivery_attempts_total", "email", "success"))
			require.Equal(t, 2.0, counter(h, "vigil_delivery_attempts_total", "pagerduty", "success"))
		})
	}
}

// counter reads the counter name{kind, outcome} from the harness's
// registry; 0 when it was never counted.
func counter(h *harness, name, kind, outcome string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	require.NoError(h.t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["kind"] == kind && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestFailTwiceThenSucceed: a receiver that fails twice, then succeeds,
// gets exactly one accepted delivery, and three attempts are logged.
func TestFailTwiceThenSucceed(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			var accepted atomic.Int32
			fails := statuses(http.StatusServiceUnavailable, http.StatusRequestTimeout)
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				rec := &statusRecorder{ResponseWriter: w}
				fails(rec, r)
				if rec.code == http.StatusOK {
					accepted.Add(1)
				}
			})
			h := newHarness(t, dialect, nil)
			ch := h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))

			ds := h.settled(in.ID, 1)
			d := ds[0]
			require.Equal(t, monitors.DeliverySent, d.State)
			require.Equal(t, 3, d.Attempts)
			require.Equal(t, int32(1), accepted.Load(), "accepted once")
			require.Len(t, recv.Requests(), 3)
			as := d.AttemptLog
			require.Equal(t, []monitors.AttemptOutcome{monitors.AttemptRetry, monitors.AttemptRetry, monitors.AttemptSuccess}, outcomes(as))
			require.Equal(t, []int{1, 2, 3}, []int{as[0].Attempt, as[1].Attempt, as[2].Attempt})
			require.Equal(t, 503, as[0].StatusCode)
			require.Equal(t, 408, as[1].StatusCode)
			require.Contains(t, as[0].Error, "HTTP 503")
			for _, a := range as[:2] {
				require.NotNil(t, a.NextAttemptAt)
				require.Equal(t, ch.ID, a.ChannelID)
				require.Equal(t, in.ID, a.IncidentID)
				require.Equal(t, monitors.EventOpened, a.Event)
			}
			require.Empty(t, as[2].Error)
			require.Nil(t, as[2].NextAttemptAt)
			h.jobsEventually(map[string]int{"completed": 1})
			require.Equal(t, 2.0, counter(h, "vigil_delivery_attempts_total", "webhook", "retry"))
			require.Equal(t, 1.0, counter(h, "vigil_delivery_attempts_total", "webhook", "success"))
		})
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// TestPermanentStopsAtOnce: a 400 is not retried.
func TestPermanentStopsAtOnce(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "bad payload", http.StatusBadRequest)
			})
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))

			d := h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliveryFailed, d.State)
			require.Len(t, d.AttemptLog, 1)
			a := d.AttemptLog[0]
			require.Equal(t, monitors.AttemptFailed, a.Outcome)
			require.Equal(t, 400, a.StatusCode)
			require.Contains(t, a.Error, "HTTP 400 Bad Request: bad payload")
			require.Nil(t, a.NextAttemptAt)
			require.NotNil(t, d.FinishedAt)
			require.Len(t, recv.Requests(), 1)
			h.jobsEventually(map[string]int{"cancelled": 1}) // River does not try again
		})
	}
}

// TestRetryAfter: 429 and 503 with Retry-After wait as long as the
// receiver asked.
func TestRetryAfter(t *testing.T) {
	t.Parallel()
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			var (
				mu    sync.Mutex
				times []time.Time
			)
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				times = append(times, time.Now())
				if len(times) == 1 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(code)
				}
			})
			h := newHarness(t, "sqlite", nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))

			d := h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliverySent, d.State)
			a := d.AttemptLog[0]
			require.Equal(t, monitors.AttemptRetry, a.Outcome)
			require.Equal(t, code, a.StatusCode)
			require.Equal(t, a.FinishedAt.Add(time.Second), *a.NextAttemptAt, "the next attempt is when the receiver said")
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, times, 2)
			require.GreaterOrEqual(t, times[1].Sub(times[0]), time.Second, "and not before: the backoff alone is 5ms")
		})
	}
}

// TestPrivateTargets: a channel may not reach a private address unless the
// operator allows it.
func TestPrivateTargets(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, func(c *delivery.Config) { c.AllowPrivate = false })
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))

			d := h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliveryFailed, d.State)
			require.Len(t, d.AttemptLog, 1)
			require.Contains(t, d.AttemptLog[0].Error, "is private (loopback)")
			require.Empty(t, recv.Requests(), "no connection was made")

			allowed := newHarness(t, dialect, func(c *delivery.Config) { c.AllowPrivate = true })
			allowed.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in = allowed.fail(allowed.monitor("job"))
			require.Equal(t, monitors.DeliverySent, allowed.settled(in.ID, 1)[0].State)
			require.Len(t, recv.Requests(), 1)
		})
	}
}

// TestRestart: a receiver that is down while Vigil restarts gets the
// notification after the restart.
func TestRestart(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			var up atomic.Bool
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				if !up.Load() {
					w.WriteHeader(http.StatusBadGateway)
				}
			})
			h := newHarness(t, dialect, func(c *delivery.Config) {
				// Slow enough that the retries before the restart stay few.
				c.Backoff = delivery.Backoff{Base: 100 * time.Millisecond, Max: 200 * time.Millisecond, Jitter: -1}
			})
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))
			d := h.deliveries(in.ID)[0]
			before := h.attempts(in.ID, d.ID, 1)
			require.Equal(t, monitors.AttemptRetry, before[0].Outcome)

			h.stop() // Vigil is down; so is the receiver
			up.Store(true)
			h.restart()

			d = h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliverySent, d.State)
			as := d.AttemptLog
			n := len(as)
			require.GreaterOrEqual(t, n, 2)
			for i, a := range as[:n-1] {
				require.Equal(t, monitors.AttemptRetry, a.Outcome, "attempt %d, before the restart", i+1)
				require.Equal(t, http.StatusBadGateway, a.StatusCode)
			}
			require.Equal(t, monitors.AttemptSuccess, as[n-1].Outcome, "the first attempt after the restart succeeds")
			require.Equal(t, n, as[n-1].Attempt, "attempts are numbered across the restart")
			require.Len(t, recv.Requests(), n, "one request per logged attempt")
		})
	}
}

// TestRetryWindow: retrying ends when the next attempt would fall after the
// window, counted from the event on the injected clock.
func TestRetryWindow(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			var h *harness
			var calls atomic.Int32
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, _ *http.Request) {
				if calls.Add(1) == 2 {
					// The second attempt ends a day later.
					h.clock.Set(T0.Add(25 * time.Hour))
				}
				w.WriteHeader(http.StatusInternalServerError)
			})
			h = newHarness(t, dialect, func(c *delivery.Config) { c.RetryWindow = 24 * time.Hour })
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))

			d := h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliveryFailed, d.State)
			require.Equal(t, []monitors.AttemptOutcome{monitors.AttemptRetry, monitors.AttemptFailed}, outcomes(d.AttemptLog))
			require.Contains(t, d.AttemptLog[1].Error, "the retry window of 1d is over")
			require.Equal(t, T0.Add(25*time.Hour), *d.FinishedAt)
			require.Equal(t, int32(2), calls.Load())
		})
	}
}

// TestOrder: a recovery waits for the alert it ends, to the same channel.
func TestOrder(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			var openedTries atomic.Int32
			recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
				var p struct{ Event string }
				_ = json.NewDecoder(r.Body).Decode(&p)
				if p.Event == "incident.opened" && openedTries.Add(1) <= 3 {
					w.WriteHeader(http.StatusServiceUnavailable)
				}
			})
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			m := h.monitor("job")
			in := h.fail(m)
			h.succeed(m)

			ds := h.settled(in.ID, 2)
			require.Equal(t, monitors.DeliverySent, ds[0].State)
			require.Equal(t, monitors.DeliverySent, ds[1].State)
			var events []string
			for _, q := range recv.Requests() {
				events = append(events, eventOf(t, q.Body))
			}
			require.Equal(t, []string{"incident.opened", "incident.opened", "incident.opened", "incident.opened",
				"incident.resolved"}, events)
			require.Len(t, ds[1].AttemptLog, 1, "the recovery waited rather than failed")
		})
	}
}

// TestReminder: an incident that stays open is re-alerted every interval.
func TestReminder(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, func(c *delivery.Config) { c.ReminderInterval = time.Hour })
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))
			h.settled(in.ID, 1)

			ctx := context.Background()
			h.clock.Set(T0.Add(59 * time.Minute))
			n, err := h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, n)
			h.clock.Set(T0.Add(time.Hour))
			n, err = h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, n)

			ds := h.settled(in.ID, 2)
			require.Equal(t, monitors.EventReminder, ds[1].Event)
			require.Equal(t, monitors.DeliverySent, ds[1].State)
			reqs := recv.Requests()
			require.Len(t, reqs, 2)
			require.Equal(t, "incident.reminder", eventOf(t, reqs[1].Body))

			n, err = h.svc.RemindOnce(ctx)
			require.NoError(t, err)
			require.Zero(t, n, "once per interval")
		})
	}
}

// TestEnqueueInTransaction: when the jobs cannot be enqueued, the event is
// not recorded either.
func TestEnqueueInTransaction(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite", nil)
	h.channel("webhook", "hook", map[string]any{"url": "https://example.com/hook"}, true)
	m := h.monitor("job")
	h.stop()

	refuse := errors.New("queue unavailable")
	s, err := sqlitestore.Open(context.Background(), h.db, sqlitestore.Options{
		EnqueueDeliveries: func(context.Context, *sql.Tx, []*monitors.Delivery) error { return refuse }})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.PingRecordBatch(context.Background(), &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
		{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail, At: T0}}}})
	require.ErrorIs(t, err, refuse)
	ins, err := s.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: h.prj.ID})
	require.NoError(t, err)
	require.Empty(t, ins, "no incident without its deliveries")
	pings, err := s.PingList(context.Background(), &monitors.HistoryListParams{ProjectID: h.prj.ID, MonitorID: m.ID})
	require.NoError(t, err)
	require.Empty(t, pings, "nothing of the batch was written")
}

// TestTestChannel sends test notifications the way delivery jobs are sent.
func TestTestChannel(t *testing.T) {
	t.Parallel()
	ok := notifiertest.NewReceiver(t, nil)
	bad := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		// A receiver that echoes what it was called on.
		http.Error(w, "no such hook "+r.URL.Path, http.StatusNotFound)
	})
	h := newHarness(t, "sqlite", nil)
	ctx := context.Background()
	sender := h.svc.Sender()

	ch := h.channel("webhook", "ops hook", map[string]any{"url": ok.URL, "secret": hookSecret}, false)
	require.NoError(t, sender.TestChannel(ctx, ch))
	q := ok.Only(t)
	require.Equal(t, "test", eventOf(t, q.Body))
	require.NoError(t, webhook.Verify(hookSecret, q.Header.Get(webhook.SignatureHeader), q.Body, T0, time.Minute))
	require.Contains(t, string(q.Body), "ops hook")

	slackCh := h.channel("slack", "slack", map[string]any{"webhook_url": bad.URL + slackPath}, false)
	err := sender.TestChannel(ctx, slackCh)
	require.ErrorContains(t, err, "404 Not Found")
	notifiertest.AssertNoSecretLeak(t, err, slackPath, "SLACKSECRETTOKEN")

	mailCh := h.channel("email", "mail", map[string]any{"to": []string{"a@example.com"}}, false)
	require.ErrorIs(t, sender.TestChannel(ctx, mailCh), delivery.ErrKindUnavailable)

	require.Equal(t, 1.0, counter(h, "vigil_delivery_test_notifications_total", "webhook", "success"))
	require.Equal(t, 1.0, counter(h, "vigil_delivery_test_notifications_total", "slack", "failed"))
}

// TestNoSecretInLog: what the attempt log keeps has no secret, even when
// the receiver echoes one.
func TestNoSecretInLog(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unknown webhook "+r.URL.Path+" token="+r.Header.Get("X-Token"), http.StatusGone)
	})
	h := newHarness(t, "sqlite", nil)
	h.channel("slack", "slack", map[string]any{"webhook_url": recv.URL + slackPath}, true)
	h.channel("webhook", "hook", map[string]any{"url": recv.URL + "/h", "headers": map[string]string{"X-Token": "hdr-secret-42"}}, true)
	in := h.fail(h.monitor("job"))
	for _, d := range h.settled(in.ID, 2) {
		require.Equal(t, monitors.DeliveryFailed, d.State)
		text := d.AttemptLog[0].Error
		require.Contains(t, text, "410 Gone")
		for _, secret := range []string{"SLACKSECRETTOKEN", "hdr-secret-42"} {
			require.NotContains(t, text, secret)
		}
	}
}

// TestEmailWithoutServerWaits: e-mail without an SMTP server is retried,
// in case the operator configures one and restarts.
func TestEmailWithoutServerWaits(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "sqlite", func(c *delivery.Config) {
		c.Backoff = delivery.Backoff{Base: time.Hour, Jitter: -1}
	})
	h.channel("email", "mail", map[string]any{"to": []string{"a@example.com"}}, true)
	in := h.fail(h.monitor("job"))
	d := h.deliveries(in.ID)[0]
	as := h.attempts(in.ID, d.ID, 1)
	require.Equal(t, monitors.AttemptRetry, as[0].Outcome, "the operator may configure SMTP and restart")
	require.Contains(t, as[0].Error, "VIGIL_SMTP_HOST")
	require.Equal(t, T0.Add(time.Hour), *as[0].NextAttemptAt)
}

// TestOrderWaitIsBounded: a delivery waits for an earlier one to the same
// channel only within its own retry window, so one whose job is gone (say,
// cancelled by hand in River) cannot hold the channel for ever.
func TestOrderWaitIsBounded(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, nil)
	h := newHarness(t, "sqlite", func(c *delivery.Config) { c.RetryWindow = time.Hour })
	h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
	m := h.monitor("job")
	h.stop()

	// The alert is recorded by a store without the queue: a delivery
	// without a job.
	plain, err := sqlitestore.Open(context.Background(), h.db, sqlitestore.Options{})
	require.NoError(t, err)
	storetest.MustRecord(t, plain, storetest.Ping(m, monitors.PingFail, T0))
	require.NoError(t, plain.Close())

	h.restart()
	h.succeed(m)
	ins, err := h.store.IncidentList(context.Background(), &monitors.IncidentListParams{ProjectID: h.prj.ID})
	require.NoError(t, err)
	in := ins[0]
	require.Eventually(t, func() bool { return h.snoozes() >= 2 }, 20*time.Second, 10*time.Millisecond,
		"the recovery waits for the alert")
	for _, d := range h.deliveries(in.ID) {
		require.Equal(t, monitors.DeliveryPending, d.State)
		require.Empty(t, d.AttemptLog)
	}
	require.Empty(t, recv.Requests())

	h.clock.Set(T0.Add(time.Hour + time.Second))
	require.Eventually(t, func() bool {
		ds := h.deliveries(in.ID)
		return ds[1].State == monitors.DeliverySent
	}, 20*time.Second, 10*time.Millisecond)
	require.Equal(t, monitors.DeliveryPending, h.deliveries(in.ID)[0].State, "the alert never had a job")
	require.Equal(t, "incident.resolved", eventOf(t, recv.Only(t).Body))
}

// TestAttemptTimeout: an attempt that outlives its timeout is retried.
func TestAttemptTimeout(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			<-r.Context().Done() // hangs until the client gives up
		}
	})
	h := newHarness(t, "sqlite", func(c *delivery.Config) { c.Timeout = 200 * time.Millisecond })
	h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
	in := h.fail(h.monitor("job"))

	d := h.settled(in.ID, 1)[0]
	require.Equal(t, monitors.DeliverySent, d.State)
	require.Equal(t, []monitors.AttemptOutcome{monitors.AttemptRetry, monitors.AttemptSuccess}, outcomes(d.AttemptLog))
	require.Contains(t, d.AttemptLog[0].Error, "attempt timed out")
}

// TestSentIsNeverSentAgain: a job that runs again for a delivery that was
// sent (River's rescue of a job it thought stuck, say) sends nothing.
func TestSentIsNeverSentAgain(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := notifiertest.NewReceiver(t, nil)
			h := newHarness(t, dialect, nil)
			h.channel("webhook", "hook", map[string]any{"url": recv.URL}, true)
			in := h.fail(h.monitor("job"))
			d := h.settled(in.ID, 1)[0]
			require.Equal(t, monitors.DeliverySent, d.State)
			h.jobsEventually(map[string]int{"completed": 1})

			// A second job for the same delivery.
			ctx := context.Background()
			switch s := h.store.(type) {
			case *sqlitestore.Store:
				enq, err := delivery.NewSQLiteEnqueuer()
				require.NoError(t, err)
				tx, err := s.DB().BeginTx(ctx, nil)
				require.NoError(t, err)
				require.NoError(t, enq.Enqueue(ctx, tx, []*monitors.Delivery{d}))
				require.NoError(t, tx.Commit())
			case *pgstore.Store:
				enq, err := delivery.NewPostgresEnqueuer()
				require.NoError(t, err)
				tx, err := s.Pool().Begin(ctx)
				require.NoError(t, err)
				require.NoError(t, enq.Enqueue(ctx, tx, []*monitors.Delivery{d}))
				require.NoError(t, tx.Commit(ctx))
			}
			h.jobsEventually(map[string]int{"completed": 2})
			require.Len(t, recv.Requests(), 1, "sent once")
			require.Len(t, h.deliveries(in.ID)[0].AttemptLog, 1)
		})
	}
}

// TestUndeclaredMonitorTellsWithoutPaging: a source stops declaring a
// monitor with an open incident. The incident is closed with no recovery
// notice anywhere; each channel that does not page gets one
// monitor.undeclared, and PagerDuty and Opsgenie get nothing; declared
// again, monitor.redeclared follows the same way.
func TestUndeclaredMonitorTellsWithoutPaging(t *testing.T) {
	t.Parallel()
	for _, dialect := range dialects {
		t.Run(dialect, func(t *testing.T) {
			t.Parallel()
			recv := map[string]*notifiertest.Receiver{}
			for _, k := range []string{"slack", "webhook", "pagerduty", "opsgenie"} {
				recv[k] = notifiertest.NewReceiver(t, nil)
			}
			client := rewriteClient(t, map[string]*notifiertest.Receiver{
				"hooks.slack.com":      recv["slack"],
				"events.pagerduty.com": recv["pagerduty"],
				"api.opsgenie.com":     recv["opsgenie"],
			})
			h := newHarness(t, dialect, func(c *delivery.Config) { c.HTTPClient = client })
			chans := []*monitors.Channel{
				h.channel("slack", "slack", map[string]any{"webhook_url": "https://hooks.slack.com" + slackPath}, true),
				h.channel("webhook", "webhook", map[string]any{"url": recv["webhook"].URL + "/hook", "secret": hookSecret}, true),
				h.channel("pagerduty", "pagerduty", map[string]any{"routing_key": pdRoutingKey}, true),
				h.channel("opsgenie", "opsgenie", map[string]any{"api_key": ogAPIKey}, true),
			}
			m := storetest.MustMonitor(t, h.store, h.prj.ID, "invoices", func(m *monitors.Monitor) {
				m.Source, m.Discovered = "billing", true
			})
			in := h.fail(m)
			h.settled(in.ID, len(chans))

			sync := func(fn func(m *monitors.Monitor, now time.Time) (*monitors.Transition, error)) {
				t.Helper()
				err := h.store.MonitorSync(context.Background(), &monitors.MonitorSyncParams{ProjectID: h.prj.ID, Source: "billing",
					Fn: func(cur []*monitors.Monitor, _ map[string][]string) (*monitors.MonitorSyncPlan, error) {
						require.Len(t, cur, 1)
						c := *cur[0]
						tr, err := fn(&c, h.clock.Now())
						return &monitors.MonitorSyncPlan{Update: []monitors.MonitorSyncUpdate{{Monitor: &c, Transition: tr}}}, err
					}})
				require.NoError(t, err)
			}
			h.clock.Set(T0.Add(time.Hour))
			sync(monitors.Undeclare)
			got, err := h.store.IncidentGet(context.Background(), h.prj.ID, in.ID)
			require.NoError(t, err)
			require.NotNil(t, got.ResolvedAt, "closed")
			require.Contains(t, got.ResolveSummary, "no longer declared")
			gone, err := h.store.MonitorGet(context.Background(), h.prj.ID, m.ID)
			require.NoError(t, err)
			require.Equal(t, monitors.StatusUndeclared, gone.State.Status)
			require.False(t, gone.Paused)

			wait := func(kind string, n int) []notifiertest.Request {
				t.Helper()
				require.Eventually(t, func() bool { return len(recv[kind].Requests()) >= n }, 20*time.Second, 10*time.Millisecond,
					"%s did not get %d requests", kind, n)
				return recv[kind].Requests()
			}
			hook := wait("webhook", 2)
			require.Equal(t, "monitor.undeclared", eventOf(t, hook[1].Body))
			require.Contains(t, string(hook[1].Body), `invoices is no longer declared by source \"billing\"`)
			var notice webhook.Payload
			require.NoError(t, json.Unmarshal(hook[1].Body, &notice))
			require.Nil(t, notice.Incident, "a monitor event has no incident")
			require.NotNil(t, notice.MonitorEvent)
			require.Equal(t, T0.Add(time.Hour), notice.MonitorEvent.At, "when the source stopped declaring it")
			require.Equal(t, "billing", notice.Monitor.Source)
			slackBody := string(wait("slack", 2)[1].Body)
			require.Contains(t, slackBody, "no longer declared")
			require.Contains(t, slackBody, `*Source*\nbilling`)
			require.Contains(t, slackBody, `*Undeclared*\n`+notifiers.FormatTime(T0.Add(time.Hour)))

			h.clock.Set(T0.Add(2 * time.Hour))
			sync(monitors.Redeclare)
			hook = wait("webhook", 3)
			require.Equal(t, "monitor.redeclared", eventOf(t, hook[2].Body))
			wait("slack", 3)

			// Every event went to every channel that informs, once; the
			// pagers got the incident's trigger only, never a resolve.
			evs, err := h.store.IncidentEventList(context.Background(), &monitors.IncidentEventListParams{ProjectID: h.prj.ID})
			require.NoError(t, err)
			var kinds []monitors.IncidentEventKind
			for _, e := range evs {
				kinds = append(kinds, e.Kind)
			}
			require.Equal(t, []monitors.IncidentEventKind{monitors.EventOpened, monitors.EventMonitorUndeclared, monitors.EventMonitorRedeclared}, kinds)
			// One job per delivery: 4 for the incident, 2 for each notice.
			h.jobsEventually(map[string]int{"completed": len(chans) + 2 + 2})
			for _, k := range []string{"pagerduty", "opsgenie"} {
				require.Len(t, recv[k].Requests(), 1, "%s: the incident's alert only", k)
			}
			require.Len(t, recv["webhook"].Requests(), 3)
			require.Len(t, recv["slack"].Requests(), 3)
		})
	}
}
