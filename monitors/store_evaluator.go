package monitors

import "time"

// EvaluatorHeartbeatParams are the inputs of [Store.EvaluatorHeartbeat].
type EvaluatorHeartbeatParams struct {
	Now time.Time
	// Threshold is the longest gap between two passes that is not an
	// outage. It must be positive.
	Threshold time.Duration
}

// EvaluatorHeartbeat is what [Store.EvaluatorHeartbeat] found.
type EvaluatorHeartbeat struct {
	// Previous is the previous stamp of any evaluator; nil on the first
	// pass ever on this database.
	Previous *time.Time
	// Outage is the outage being settled, or the one this call settled;
	// nil when there is none.
	Outage *Outage
	// Detected is set when this call recorded Outage, or extended it
	// because Vigil went down again before it settled.
	Detected bool
	// Settled is set when this call found nothing left due inside Outage
	// and marked it settled.
	Settled bool
}

// TimeOptions returns the options every claim of the pass must use: the
// bounds of the outage being settled, or none.
func (h *EvaluatorHeartbeat) TimeOptions() TimeOptions {
	if h == nil || h.Outage == nil || h.Settled {
		return TimeOptions{}
	}
	return TimeOptions{OutageStart: h.Outage.StartedAt, OutageEnd: h.Outage.EndedAt}
}

// Outage is a gap in the evaluator's heartbeat: Vigil was down, or no
// evaluator could run. Pings sent during it may have been lost, so monitors
// due inside it got a fresh grace window from its end.
type Outage struct {
	ID int64
	// StartedAt is the last pass of any evaluator before the gap; EndedAt
	// the first after it.
	StartedAt time.Time
	EndedAt   time.Time
	// MonitorsPostponed counts the monitors given a fresh grace window.
	MonitorsPostponed int64
	// SettledAt is when no monitor due inside the gap was left to
	// evaluate; nil until then.
	SettledAt *time.Time
}

// Duration returns how long the outage lasted.
func (o *Outage) Duration() time.Duration { return o.EndedAt.Sub(o.StartedAt) }

// OutageListParams page [Store.OutageList], newest first. Before is an
// exclusive cursor, an outage ID; 0 starts at the newest.
type OutageListParams struct {
	Limit  int
	Before int64
}

// Postponed reports whether applying time with o gave a monitor a fresh
// grace window from this outage that it did not have before: before and
// after are its holds before and after. Stores count these per outage.
func (o TimeOptions) Postponed(before, after *Hold) bool {
	if o.OutageEnd.IsZero() || after == nil || !after.OutageEnd.Equal(o.OutageEnd) {
		return false
	}
	// A hold ending after the outage's start is from this outage, before
	// it was extended.
	return before == nil || !before.OutageEnd.After(o.OutageStart)
}
