package pagerduty_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/notifiertest"
	"github.com/vigilhq/vigil/notifiers/pagerduty"
)

const routingKey = "R0UT1NGKEY0123456789abcdefABCDEF"

// accepted answers like the Events API does.
func accepted(w http.ResponseWriter, r *http.Request) {
	var body struct {
		DedupKey string `json:"dedup_key"`
	}
	_ = json.NewDecoder(r.Body).Decode(&body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "success", "message": "Event processed", "dedup_key": body.DedupKey})
}

func newNotifier(t *testing.T, serverURL string, cfg pagerduty.Config) *pagerduty.Notifier {
	t.Helper()
	n, err := pagerduty.New(cfg, notifiers.WithHTTPClient(notifiertest.HTTPClient(t)), notifiers.WithAPIURL(serverURL))
	require.NoError(t, err)
	return n
}

func TestTriggerAndResolve(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, accepted)
	p := newNotifier(t, recv.URL, pagerduty.Config{RoutingKey: routingKey})
	require.NoError(t, p.Notify(context.Background(), notifiertest.Opened()))
	require.NoError(t, p.Notify(context.Background(), notifiertest.Resolved()))

	reqs := recv.Requests()
	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, http.MethodPost, req.Method)
		require.Equal(t, "/v2/enqueue", req.Path)
		require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	}

	var trigger map[string]any
	require.NoError(t, json.Unmarshal(reqs[0].Body, &trigger))
	require.Equal(t, map[string]any{
		"routing_key":  routingKey,
		"event_action": "trigger",
		"dedup_key":    "inc_01HZX3M4W6",
		"client":       "Vigil",
		"client_url":   "https://vigil.example.com",
		"links": []any{map[string]any{
			"href": "https://vigil.example.com/monitors/mon_7f3a",
			"text": "Open nightly-import in Vigil",
		}},
		"payload": map[string]any{
			"summary":   "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)",
			"source":    "nightly-import",
			"severity":  "critical",
			"timestamp": "2026-03-14T01:05:00.000Z",
			"component": "nightly-import",
			"group":     "etl",
			"class":     "missed",
			"custom_details": map[string]any{
				"event":     "incident.opened",
				"monitor":   "nightly-import",
				"status":    "down",
				"details":   "Expected at 2026-03-14 01:00 UTC; last ping (success) at 2026-03-13 01:00 UTC.",
				"Schedule":  "0 2 * * * (Europe/Berlin)",
				"Expected":  "2026-03-14 01:00 UTC",
				"Last ping": "2026-03-13 01:00 UTC",
				"Opened":    "2026-03-14 01:05 UTC",
				"Tags":      "etl, billing",
			},
		},
	}, trigger)

	var resolve map[string]any
	require.NoError(t, json.Unmarshal(reqs[1].Body, &resolve))
	require.Equal(t, map[string]any{
		"routing_key":  routingKey,
		"event_action": "resolve",
		"dedup_key":    "inc_01HZX3M4W6",
	}, resolve)
}

func TestSeverityAndEvents(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, accepted)
	p := newNotifier(t, recv.URL, pagerduty.Config{RoutingKey: routingKey, Severity: "warning"})
	for _, e := range []notifiers.Event{notifiers.EventUpdated, notifiers.EventReminder, notifiers.EventTest} {
		require.NoError(t, p.Notify(context.Background(), notifiertest.Notification(e)))
	}
	type event struct {
		EventAction string `json:"event_action"`
		DedupKey    string `json:"dedup_key"`
		Payload     struct {
			Summary  string `json:"summary"`
			Severity string `json:"severity"`
		} `json:"payload"`
	}
	var got []event
	for _, req := range recv.Requests() {
		var e event
		require.NoError(t, json.Unmarshal(req.Body, &e))
		got = append(got, e)
	}
	require.Len(t, got, 3)
	require.Equal(t, "trigger", got[0].EventAction, "an update is a trigger on the same dedup_key")
	require.Equal(t, "inc_01HZX3M4W6", got[0].DedupKey)
	require.Equal(t, "warning", got[0].Payload.Severity)
	require.Equal(t, "trigger", got[1].EventAction)
	require.Equal(t, "inc_01HZX3M4W6", got[1].DedupKey)
	require.Equal(t, "trigger", got[2].EventAction)
	require.Equal(t, "info", got[2].Payload.Severity, "a test never pages at full severity")
	require.Equal(t, "TEST nightly-import: test notification from Vigil", got[2].Payload.Summary)
	require.Contains(t, got[2].DedupKey, "vigil-test-mon_7f3a-")
}

func TestStatusTable(t *testing.T) {
	t.Parallel()
	notifiertest.RunNotifierStatusTable(t, notifiertest.StatusTable(), notifiertest.Opened(),
		func(t *testing.T, serverURL string) notifiers.Notifier {
			return newNotifier(t, serverURL, pagerduty.Config{RoutingKey: routingKey})
		}, routingKey)
}

func TestInvalidEventAnswer(t *testing.T) {
	t.Parallel()
	recv := notifiertest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(http.StatusBadRequest)
		// A receiver that echoes what it got must not leak the key.
		_, _ = w.Write([]byte(`{"status":"invalid event","message":"Event object is invalid","errors":["bad"],"echo":` + string(body) + `}`))
	})
	err := newNotifier(t, recv.URL, pagerduty.Config{RoutingKey: routingKey}).Notify(context.Background(), notifiertest.Opened())
	require.True(t, notifiers.IsPermanent(err))
	require.Contains(t, err.Error(), "send pagerduty trigger event: HTTP 400 Bad Request: {\"status\":\"invalid event\"")
	notifiertest.AssertNoSecretLeak(t, err, routingKey)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, (&pagerduty.Config{RoutingKey: routingKey}).Validate())
	require.NoError(t, (&pagerduty.Config{RoutingKey: routingKey, Severity: "info"}).Validate())
	require.EqualError(t, (&pagerduty.Config{}).Validate(), "routing_key: must be set")
	require.EqualError(t, (&pagerduty.Config{RoutingKey: "a b"}).Validate(), "routing_key: must not contain spaces or control characters")
	require.EqualError(t, (&pagerduty.Config{RoutingKey: routingKey, Severity: "sev1"}).Validate(),
		`severity: "sev1" is not one of critical, error, warning, info`)
}
