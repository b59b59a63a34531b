package plan

import (
	"context"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// Driver is a store as the planning layer uses it: its connections, and
// its transactions.
type Driver interface {
	// InTx runs fn in one write transaction, committing when it returns
	// nil and rolling back otherwise.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// Reader runs reads outside a transaction; Writer single writes.
	Reader() DB
	Writer() DB
}

// PingAger is a [Driver] that ages pings out its own way instead of
// deleting them row by row: PostgreSQL drops whole time partitions.
type PingAger interface {
	// PingAge makes the partitions the coming months' pings go to and
	// drops those wholly older than before. It returns how many pings it
	// removed as far as it knows them without counting (0 when dropping
	// partitions, which it logs).
	PingAge(ctx context.Context, now, before time.Time) (int64, error)
}

// Tx is one write transaction of a store: single statements through DB,
// and the steps each database does its own way. Reads of rows to change
// lock them (FOR UPDATE on PostgreSQL; SQLite's write transaction holds
// its only write lock).
type Tx interface {
	DB
	// PingBatchLoad resolves the project ping keys of a batch, loads and
	// locks every monitor it names, and reserves q.IDs ping IDs when the
	// store assigns them before the insert (nil otherwise).
	PingBatchLoad(ctx context.Context, q *PingBatchQuery) (*PingBatchRows, error)
	// MonitorCreate inserts a monitor made by a create=1 ping. When another
	// transaction created that slug first, it returns that monitor, locked,
	// and created false. A failure fails only this monitor.
	MonitorCreate(ctx context.Context, m *monitors.Monitor) (got *monitors.Monitor, created bool, err error)
	// MonitorClaimDue locks and loads up to limit unpaused monitors whose
	// next deadline is at or before now, earliest first, skipping rows
	// another transaction holds.
	MonitorClaimDue(ctx context.Context, now time.Time, limit int) ([]*monitors.Monitor, error)
	// SourceLock serializes the declarations of one source of a project
	// until the transaction ends.
	SourceLock(ctx context.Context, projectID, source string) error
	// Write writes w and returns the incident events it inserted.
	Write(ctx context.Context, w *WriteSet) ([]*monitors.IncidentEvent, error)
	// DeliveryTargets reads what routing needs of the monitors (none when
	// monitorIDs is empty), the channels of the projects, and the pending
	// deliveries of the incidents.
	DeliveryTargets(ctx context.Context, monitorIDs, projectIDs, incidentIDs []string) (*Targets, error)
	// GroupLock serializes, until the transaction ends, the transactions
	// that put deliveries into groups of those channels (see Route), so
	// that replicas agree on one group; a no-op where a write transaction
	// holds the only write lock.
	GroupLock(ctx context.Context, channelIDs []string) error
	// DeliveryInsert inserts deliveries, in order, to the channels that
	// still exist, and hands those it inserted to the enqueue hook.
	DeliveryInsert(ctx context.Context, ds []*monitors.Delivery) ([]*monitors.Delivery, error)
	// IncidentRemindDue stamps up to limit open incidents opened, or last
	// reminded, at or before cutoff, with a reminder event each at now,
	// and returns the events.
	IncidentRemindDue(ctx context.Context, now, cutoff time.Time, limit int) ([]*monitors.IncidentEvent, error)
}

// PingBatchQuery names the monitors of a batch of pings.
type PingBatchQuery struct {
	PingKeys    []string
	ProjectKeys []string  // the project ping keys of the slug pings
	Slugs       []SlugRef // in the order of the slug pings
	IDs         int       // ping IDs to reserve, if the store reserves them
}

// SlugRef names a monitor by its project's ping key and its slug.
type SlugRef struct{ ProjectPingKey, Slug string }

// PingBatchRows is what [Tx.PingBatchLoad] found.
type PingBatchRows struct {
	Projects map[string]string // project ping key → project ID
	Monitors []*monitors.Monitor
	PingIDs  []int64 // reserved, ascending; nil when the store assigns them on insert
	// Windows and Late, when not nil, are what the batch reads of each
	// project it names, read with the load so that the batch does not
	// read them again: the maintenance windows (in ID order) and the
	// channels that take late warnings (by ID: whether the channel is a
	// default one), by project ID. A project missing from them is read
	// as before.
	Windows map[string][]*monitors.MaintenanceWindow
	Late    map[string]map[string]bool
}

// Targets is what routing reads.
type Targets struct {
	// Monitors are the monitors' channels and projects, by monitor ID.
	Monitors map[string]MonitorTarget
	// Channels are the projects' channels, by project ID.
	Channels map[string][]ChannelTarget
	// Pending are the channels with a delivery still pending, by incident.
	Pending map[string]map[string]bool
	// Groups are the latest pending group of each channel that gathers,
	// by channel ID: when it goes out. Read only when an incident opens.
	Groups map[string]time.Time
}

// MonitorTarget is a monitor as routing sees it.
type MonitorTarget struct {
	ProjectID string
	Channels  []string
}

// ChannelTarget is a channel as routing sees it.
type ChannelTarget struct {
	ID           string
	Kind         string
	IsDefault    bool
	NotifyLate   bool
	GroupSeconds int
}

// WriteSet is everything one transaction writes: the final state of each
// monitor it changed, the pings it received, the runs they touched, and the
// incident changes in the order they happened.
type WriteSet struct {
	// Monitors are written each once, with NextDeadlineAt already derived.
	Monitors []*monitors.Monitor
	// FullRow writes the monitors' whole rows (a person or a declaration
	// changed their configuration); otherwise only their state.
	FullRow bool
	// Pings have their IDs set when the store reserved them; otherwise the
	// store sets them as it inserts.
	Pings []*monitors.Ping
	// Runs are one per (monitor, seq), the latest version of each.
	Runs []monitors.Run
	// Incidents are written in order, each with its event: an open,
	// update or resolve writes its incident event; a close ends the
	// incident without one; a notice writes a monitor event (no incident).
	Incidents []IncidentWrite
	// Opens are incidents opened by time, all new, written after
	// Incidents; the store may write them in one statement (and the held
	// ones, whose events it does not return, in another).
	Opens []IncidentWrite
}

// IncidentWrite is one incident change of a monitor.
type IncidentWrite struct {
	ID        string // the new incident's ID, for an open
	ProjectID string
	MonitorID string
	Change    monitors.IncidentChange
	Ping      *monitors.Ping // the ping that caused it; nil when time or a person did
}

// PingID returns the ID of the ping that caused the change, 0 for none.
func (w *IncidentWrite) PingID() int64 {
	if w.Ping == nil {
		return 0
	}
	return w.Ping.ID
}
