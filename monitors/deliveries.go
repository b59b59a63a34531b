package monitors

import (
	"context"
	"slices"
	"strconv"
	"time"
)

// DeliveryEntry is one line of an incident's delivery history, as the API
// and the dashboard show it: a logged attempt, or a delivery not tried
// yet.
type DeliveryEntry struct {
	// ID is the delivery's ID and the attempt's number, "12.2"; attempt 0
	// is a delivery not tried yet.
	ID        string
	ChannelID string
	// Event is the incident event delivered, such as incident.opened.
	Event   string
	Attempt int
	At      time.Time
	// Outcome is pending, sent, retrying (failed, will try again) or
	// failed (for good).
	Outcome       string
	StatusCode    int
	Error         string
	NextAttemptAt *time.Time
}

// DeliveryLister lists the delivery history of incidents.
type DeliveryLister interface {
	// IncidentDeliveries returns the entries of the project's incidents
	// with those IDs, by incident ID, oldest first.
	IncidentDeliveries(ctx context.Context, projectID string, incidentIDs []string) (map[string][]DeliveryEntry, error)
}

// StoreDeliveries is the DeliveryLister that reads the delivery attempts
// of incidents from the store.
func StoreDeliveries(store interface {
	DeliveryList(ctx context.Context, p *DeliveryListParams) ([]*Delivery, error)
}) DeliveryLister {
	return storeDeliveries{store}
}

type storeDeliveries struct {
	store interface {
		DeliveryList(ctx context.Context, p *DeliveryListParams) ([]*Delivery, error)
	}
}

// IncidentDeliveries returns, by incident, every logged attempt, and one
// entry with outcome "pending" for each delivery not tried yet, oldest
// first, with times in UTC.
func (l storeDeliveries) IncidentDeliveries(ctx context.Context, projectID string, incidentIDs []string) (map[string][]DeliveryEntry, error) {
	ds, err := l.store.DeliveryList(ctx, &DeliveryListParams{ProjectID: projectID, IncidentIDs: incidentIDs})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]DeliveryEntry, len(incidentIDs))
	for _, d := range ds {
		id := func(attempt int) string { return strconv.FormatInt(d.ID, 10) + "." + strconv.Itoa(attempt) }
		if len(d.AttemptLog) == 0 {
			out[d.IncidentID] = append(out[d.IncidentID], DeliveryEntry{ID: id(0), ChannelID: d.ChannelID,
				Event: string(d.Event), At: d.CreatedAt.UTC(), Outcome: "pending", NextAttemptAt: utcPtr(d.NextAttemptAt)})
			continue
		}
		for _, a := range d.AttemptLog {
			e := DeliveryEntry{ID: id(a.Attempt), ChannelID: a.ChannelID, Event: string(a.Event), Attempt: a.Attempt,
				At: a.StartedAt.UTC(), StatusCode: a.StatusCode, Error: a.Error}
			switch a.Outcome {
			case AttemptSuccess:
				e.Outcome = "sent"
			case AttemptRetry:
				e.Outcome, e.NextAttemptAt = "retrying", utcPtr(a.NextAttemptAt)
			default:
				e.Outcome = "failed"
			}
			out[d.IncidentID] = append(out[d.IncidentID], e)
		}
	}
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b DeliveryEntry) int { return a.At.Compare(b.At) })
	}
	return out, nil
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
