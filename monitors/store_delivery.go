package monitors

import "time"

// DeliveryState is where a delivery stands.
type DeliveryState string

// Delivery states.
const (
	// DeliveryPending: not sent yet; an attempt is queued.
	DeliveryPending DeliveryState = "pending"
	// DeliverySent: one attempt succeeded. It is never sent again.
	DeliverySent DeliveryState = "sent"
	// DeliveryFailed: retrying can no longer help (a permanent error, or
	// the retry window is over).
	DeliveryFailed DeliveryState = "failed"
)

// AttemptOutcome is how one delivery attempt ended.
type AttemptOutcome string

// Attempt outcomes.
const (
	AttemptSuccess AttemptOutcome = "success"
	// AttemptRetry: the attempt failed and another is queued.
	AttemptRetry AttemptOutcome = "retry"
	// AttemptFailed: the attempt failed and it was the last.
	AttemptFailed AttemptOutcome = "failed"
)

// Delivery is one incident event on its way to one channel. The store
// creates the deliveries of an event in the transaction that records the
// event: one per channel of the monitor, or per default channel of its
// project when the monitor names none.
type Delivery struct {
	ID         int64
	ProjectID  string
	IncidentID string
	MonitorID  string
	ChannelID  string
	EventID    int64
	Event      IncidentEventKind
	// ReportID is the report delivered, for a report (Event report.weekly
	// or report.monthly), which has no incident, monitor or event (their
	// IDs are empty and 0).
	ReportID string
	// EventAt and Summary are those of the incident event.
	EventAt time.Time
	Summary string
	State   DeliveryState
	// Attempts counts the attempts logged.
	Attempts      int
	CreatedAt     time.Time
	NextAttemptAt *time.Time
	FinishedAt    *time.Time
	// GroupAt is set on an incident.opened delivery to a channel that
	// gathers incidents (group_seconds): when its group goes out. Every
	// pending delivery of the channel with the same GroupAt is one group,
	// sent in one message by the delivery of the lowest ID; the others
	// wait for it (WaitsFor) and share its outcome.
	GroupAt *time.Time

	// WaitsFor is set by [Store.DeliveryGet] while an earlier event of the
	// same incident is still pending to the same channel: that delivery's
	// ID (0: none). Deliveries of one incident to one channel go out in
	// the order of their events, so a recovery never arrives before the
	// alert it ends.
	WaitsFor int64
	// WaitsForNextAttemptAt is when the delivery waited for is next tried.
	WaitsForNextAttemptAt *time.Time

	// AttemptLog holds the attempts, oldest first, when the delivery comes
	// from [Store.DeliveryList].
	AttemptLog []*DeliveryAttempt
}

// DeliveryAttempt is one logged attempt of a delivery.
type DeliveryAttempt struct {
	ID         int64
	DeliveryID int64
	ProjectID  string
	IncidentID string
	ChannelID  string
	Event      IncidentEventKind
	// Attempt numbers the attempts of a delivery from 1.
	Attempt    int
	StartedAt  time.Time
	FinishedAt time.Time
	Outcome    AttemptOutcome
	// StatusCode is the receiver's HTTP status, 0 when there was none.
	StatusCode int
	// Error says what went wrong, without secrets; empty on success.
	Error string
	// NextAttemptAt is when the next attempt is due, after AttemptRetry.
	NextAttemptAt *time.Time
}

// DeliveryAttemptRecordParams are the inputs of
// [Store.DeliveryAttemptRecord].
type DeliveryAttemptRecordParams struct {
	ProjectID  string
	DeliveryID int64
	StartedAt  time.Time
	FinishedAt time.Time
	Outcome    AttemptOutcome
	StatusCode int
	Error      string
	// NextAttemptAt is required with AttemptRetry, and ignored otherwise.
	NextAttemptAt *time.Time
	// Also are the other deliveries the attempt carried (the members of
	// an incidents.grouped message): each of those still pending gets the
	// same attempt, in the same transaction.
	Also []int64
}

// DeliveryListParams select [Store.DeliveryList] results.
type DeliveryListParams struct {
	ProjectID   string
	IncidentIDs []string
}

// IncidentRemindParams are the inputs of [Store.IncidentRemind].
type IncidentRemindParams struct {
	// Now stamps the reminders.
	Now time.Time
	// Interval is the time between an incident's opening, or its last
	// reminder, and its next reminder. It must be positive.
	Interval time.Duration
	// Limit bounds the incidents reminded in one call; 0 or less is 100.
	Limit int
}

// DeliveryErrorMax is how many characters of an attempt's error the store
// keeps.
const DeliveryErrorMax = 2000
