package delivery

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
)

// MonitorURL is the dashboard page of a monitor: baseURL/monitors/{id}.
func MonitorURL(baseURL, monitorID string) string {
	return strings.TrimRight(baseURL, "/") + "/monitors/" + url.PathEscape(monitorID)
}

// NewNotification builds what a channel is told about delivery d of an
// incident event, from the incident and its monitor as they are at now.
// The summary is the event's own (an update's new facts, a recovery's
// summary); the incident's opening summary goes in the details when it
// differs.
func NewNotification(d *monitors.Delivery, in *monitors.Incident, m *monitors.Monitor, now time.Time, baseURL string) *notifiers.Notification {
	summary := d.Summary
	if summary == "" {
		summary = in.Summary
	}
	details := ""
	if in.Summary != "" && in.Summary != summary {
		details = "Incident: " + in.Summary
	}
	return &notifiers.Notification{
		Event: notifiers.Event(d.Event),
		Incident: notifiers.Incident{
			ID:         in.ID,
			Kind:       notifiers.IncidentKind(in.Kind),
			OpenedAt:   in.OpenedAt,
			ResolvedAt: in.ResolvedAt,
			Summary:    summary,
			Details:    details,
		},
		Monitor:    notificationMonitor(m, now, baseURL),
		SentAt:     now,
		BaseURL:    strings.TrimRight(baseURL, "/"),
		DeliveryID: DeliveryID(d),
	}
}

// DeliveryID names delivery d to receivers (Vigil-Delivery-Id): its
// incident and its own number, the same for every attempt at it.
func DeliveryID(d *monitors.Delivery) string {
	return d.IncidentID + "." + strconv.FormatInt(d.ID, 10)
}

func notificationMonitor(m *monitors.Monitor, now time.Time, baseURL string) notifiers.Monitor {
	return notifiers.Monitor{
		ID:             m.ID,
		Name:           m.Name,
		Slug:           m.Slug,
		Status:         string(m.StatusAt(now)),
		Tags:           m.Tags,
		URL:            MonitorURL(baseURL, m.ID),
		Schedule:       m.Schedule.Describe(),
		LastPingAt:     timeOrNil(m.State.LastPingAt),
		NextExpectedAt: timeOrNil(m.State.Expected),
	}
}

// newTestNotification is what POST /api/v1/channels/{id}/test sends: a
// test event, named after the channel.
func newTestNotification(ch *monitors.Channel, now time.Time, baseURL string) *notifiers.Notification {
	n := &notifiers.Notification{
		Event:   notifiers.EventTest,
		Monitor: notifiers.Monitor{ID: ch.ID, Name: ch.Name, Status: string(monitors.StatusUp)},
		SentAt:  now,
		BaseURL: strings.TrimRight(baseURL, "/"),
	}
	n.DeliveryID = n.DedupKey()
	return n
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
