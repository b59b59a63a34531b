package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runCascades runs the conformance tests of what a deletion takes with
// it: the incidents, events and deliveries of a monitor, an incident, a
// channel or a project go with it, and nobody else's.
func runCascades(t *testing.T, newStore func(t *testing.T) monitors.Store, caps Caps) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, b *bundle, caps Caps)
	}{
		{"Cascade/Monitor", testCascadeMonitor},
		{"Cascade/Incident", testCascadeIncident},
		{"Cascade/Channel", testCascadeChannel},
		{"Cascade/Project", testCascadeProject},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, setup(t, newStore), caps)
		})
	}
}

// history is what cascades test: for each of two monitors of b's project,
// a monitor event (monitor.late, no incident) and an incident opened and
// resolved, each delivered to the project's two default channels (the
// late warning to the one that takes it).
type history struct {
	hook, late *monitors.Channel
	gone, kept *monitors.Monitor
	// deliveries by the monitor they are about.
	deliveries map[string][]int64
	// events by the monitor they are about.
	events map[string][]int64
}

func seedHistory(t *testing.T, b *bundle) *history {
	t.Helper()
	h := &history{hook: mustChannel(t, b, b.prj.ID, "hook", true)}
	late, err := b.s.ChannelCreate(b.ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: b.prj.ID,
		Kind: "webhook", Name: "late", Config: json.RawMessage(`{"url":"https://example.com/late"}`),
		IsDefault: true, NotifyLate: true, Now: T0})
	require.NoError(t, err)
	h.late = late
	h.gone, h.kept = b.monitor(t, "gone", nil), b.monitor(t, "kept", nil)
	MustRecord(t, b.s, Ping(h.gone, monitors.PingSuccess, T0), Ping(h.kept, monitors.PingSuccess, T0))
	// Halfway through the grace of the next occurrence: the late warning.
	b.evaluate(t, T0.Add(time.Hour+150*time.Second), 10, monitors.TimeOptions{})
	MustRecord(t, b.s, Ping(h.gone, monitors.PingFail, T0.Add(time.Hour+200*time.Second)),
		Ping(h.kept, monitors.PingFail, T0.Add(time.Hour+200*time.Second)))
	MustRecord(t, b.s, Ping(h.gone, monitors.PingSuccess, T0.Add(time.Hour+300*time.Second)),
		Ping(h.kept, monitors.PingSuccess, T0.Add(time.Hour+300*time.Second)))

	h.events = map[string][]int64{}
	kinds := map[monitors.IncidentEventKind]int{}
	for _, ev := range b.events(t, "") {
		h.events[ev.MonitorID] = append(h.events[ev.MonitorID], ev.ID)
		kinds[ev.Kind]++
	}
	require.Equal(t, map[monitors.IncidentEventKind]int{monitors.EventMonitorLate: 2, monitors.EventOpened: 2,
		monitors.EventResolved: 2}, kinds, "a late warning and an incident opened and resolved for each")
	h.deliveries = map[string][]int64{}
	for _, d := range b.allDeliveries(t) {
		h.deliveries[d.MonitorID] = append(h.deliveries[d.MonitorID], d.ID)
	}
	// opened and resolved to both channels, the warning to one.
	require.Len(t, h.deliveries[h.gone.ID], 5)
	require.Len(t, h.deliveries[h.kept.ID], 5)
	return h
}

// allDeliveries returns every delivery of b's project, whatever it is
// about (DeliveryList lists those of incidents only): a store's delivery
// IDs count from 1.
func (b *bundle) allDeliveries(t *testing.T) []*monitors.Delivery {
	t.Helper()
	var out []*monitors.Delivery
	for id := int64(1); id <= 200; id++ {
		d, err := b.s.DeliveryGet(b.ctx, b.prj.ID, id)
		if errors.Is(err, monitors.ErrNotFound) {
			continue
		}
		require.NoError(t, err)
		out = append(out, d)
	}
	return out
}

// requireGone checks that none of the deliveries and events is left.
func requireGone(t *testing.T, b *bundle, deliveries, events []int64, what string) {
	t.Helper()
	for _, id := range deliveries {
		_, err := b.s.DeliveryGet(b.ctx, b.prj.ID, id)
		require.ErrorIs(t, err, monitors.ErrNotFound, "delivery %d went with its %s", id, what)
	}
	left := map[int64]bool{}
	for _, ev := range b.events(t, "") {
		left[ev.ID] = true
	}
	for _, id := range events {
		require.False(t, left[id], "event %d went with its %s", id, what)
	}
}

func testCascadeMonitor(t *testing.T, b *bundle, _ Caps) {
	h := seedHistory(t, b)
	require.NoError(t, b.s.MonitorDelete(b.ctx, b.prj.ID, h.gone.ID))
	requireGone(t, b, h.deliveries[h.gone.ID], h.events[h.gone.ID], "monitor")
	var kept []int64
	for _, d := range b.allDeliveries(t) {
		kept = append(kept, d.ID)
	}
	require.Equal(t, h.deliveries[h.kept.ID], kept, "the other monitor's stay")
	require.Len(t, b.events(t, ""), 3)
	ins := b.incidents(t, monitors.IncidentListParams{})
	require.Len(t, ins, 1)
	require.Equal(t, h.kept.ID, ins[0].MonitorID)
}

func testCascadeIncident(t *testing.T, b *bundle, _ Caps) {
	h := seedHistory(t, b)
	ins := b.incidents(t, monitors.IncidentListParams{MonitorID: h.gone.ID})
	require.Len(t, ins, 1)
	var ofIncident, others []int64
	for _, d := range b.allDeliveries(t) {
		if d.IncidentID == ins[0].ID {
			ofIncident = append(ofIncident, d.ID)
		} else {
			others = append(others, d.ID)
		}
		_, err := b.s.DeliveryAttemptRecord(b.ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
			StartedAt: T0.Add(2 * time.Hour), FinishedAt: T0.Add(2 * time.Hour), Outcome: monitors.AttemptSuccess, StatusCode: 200})
		require.NoError(t, err)
	}
	require.Len(t, ofIncident, 4)
	var events []int64
	for _, ev := range b.events(t, ins[0].ID) {
		events = append(events, ev.ID)
	}
	require.Len(t, events, 2)
	// Pruning deletes both incidents; the monitor events stay.
	n, err := b.s.IncidentPrune(b.ctx, &monitors.IncidentPruneParams{ResolvedBefore: T0.Add(3 * time.Hour)})
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	requireGone(t, b, ofIncident, events, "incident")
	var left []int64
	for _, d := range b.allDeliveries(t) {
		require.Empty(t, d.IncidentID)
		require.Equal(t, monitors.EventMonitorLate, d.Event)
		left = append(left, d.ID)
	}
	require.Len(t, left, 2, "the late warnings' deliveries stay")
	require.Subset(t, others, left)
}

func testCascadeChannel(t *testing.T, b *bundle, _ Caps) {
	h := seedHistory(t, b)
	var ofLate, others []int64
	for _, d := range b.allDeliveries(t) {
		if d.ChannelID == h.late.ID {
			ofLate = append(ofLate, d.ID)
		} else {
			others = append(others, d.ID)
		}
	}
	require.Len(t, ofLate, 6)
	require.NoError(t, b.s.ChannelDelete(b.ctx, b.prj.ID, h.late.ID))
	requireGone(t, b, ofLate, nil, "channel")
	var left []int64
	for _, d := range b.allDeliveries(t) {
		left = append(left, d.ID)
	}
	require.Equal(t, others, left)
	require.Len(t, b.events(t, ""), 6, "events are not the channel's")
}

func testCascadeProject(t *testing.T, b *bundle, caps Caps) {
	if caps.DeleteProject == nil {
		t.Fatal("Caps.DeleteProject is required")
	}
	h := seedHistory(t, b)
	other := &bundle{s: b.s, ctx: b.ctx, prj: MustProject(t, b.s)}
	oh := seedHistory(t, other)
	caps.DeleteProject(t, b.s, b.prj.ID)
	requireGone(t, b, append(h.deliveries[h.gone.ID], h.deliveries[h.kept.ID]...),
		append(h.events[h.gone.ID], h.events[h.kept.ID]...), "project")
	require.Empty(t, b.incidents(t, monitors.IncidentListParams{}))
	require.Empty(t, b.events(t, ""))
	// The other project keeps everything.
	require.Len(t, other.incidents(t, monitors.IncidentListParams{}), 2)
	require.Len(t, other.events(t, ""), 6)
	for _, id := range append(oh.deliveries[oh.gone.ID], oh.deliveries[oh.kept.ID]...) {
		_, err := other.s.DeliveryGet(other.ctx, other.prj.ID, id)
		require.NoError(t, err)
	}
}
