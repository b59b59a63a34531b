package api

import (
	"context"
	"slices"
	"strconv"

	"github.com/vigilhq/vigil/monitors"
)

// StoreDeliveries is the DeliveryLister that reads the delivery attempts
// of incidents from the store.
func StoreDeliveries(store interface {
	DeliveryList(ctx context.Context, p *monitors.DeliveryListParams) ([]*monitors.Delivery, error)
}) DeliveryLister {
	return storeDeliveries{store}
}

type storeDeliveries struct {
	store interface {
		DeliveryList(ctx context.Context, p *monitors.DeliveryListParams) ([]*monitors.Delivery, error)
	}
}

// IncidentDeliveries returns, by incident, every logged attempt, and one
// entry with outcome "pending" for each delivery not tried yet, oldest
// first.
func (l storeDeliveries) IncidentDeliveries(ctx context.Context, projectID string, incidentIDs []string) (map[string][]Delivery, error) {
	ds, err := l.store.DeliveryList(ctx, &monitors.DeliveryListParams{ProjectID: projectID, IncidentIDs: incidentIDs})
	if err != nil {
		return nil, err
	}
	out := make(map[string][]Delivery, len(incidentIDs))
	for _, d := range ds {
		id := func(attempt int) string { return strconv.FormatInt(d.ID, 10) + "." + strconv.Itoa(attempt) }
		if len(d.AttemptLog) == 0 {
			out[d.IncidentID] = append(out[d.IncidentID], Delivery{ID: id(0), ChannelID: d.ChannelID,
				Event: string(d.Event), At: d.CreatedAt.UTC(), Outcome: "pending", NextAttemptAt: utcPtr(d.NextAttemptAt)})
			continue
		}
		for _, a := range d.AttemptLog {
			j := Delivery{ID: id(a.Attempt), ChannelID: a.ChannelID, Event: string(a.Event), Attempt: a.Attempt,
				At: a.StartedAt.UTC(), StatusCode: a.StatusCode, Error: a.Error}
			switch a.Outcome {
			case monitors.AttemptSuccess:
				j.Outcome = "sent"
			case monitors.AttemptRetry:
				j.Outcome, j.NextAttemptAt = "retrying", utcPtr(a.NextAttemptAt)
			default:
				j.Outcome = "failed"
			}
			out[d.IncidentID] = append(out[d.IncidentID], j)
		}
	}
	for _, list := range out {
		slices.SortStableFunc(list, func(a, b Delivery) int { return a.At.Compare(b.At) })
	}
	return out, nil
}
