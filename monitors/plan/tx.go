package plan

import (
	"context"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// Driver is a store as the planning layer uses it: transactions, and the
// few statements that run outside one.
type Driver interface {
	// InTx runs fn in one write transaction, committing when it returns
	// nil and rolling back otherwise.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// PruneCutoffs returns, for up to limit monitors with IDs after after
	// in ID order, the newest ping ID and run seq that are no longer kept.
	PruneCutoffs(ctx context.Context, after string, keepPings, keepRuns int64, limit int) ([]PruneCut, error)
	// PruneDelete deletes up to limit pings (runs false) or runs of a
	// monitor at or below cutoff, in its own short transaction, and
	// returns how many it deleted.
	PruneDelete(ctx context.Context, runs bool, monitorID string, cutoff int64, limit int) (int64, error)
	// ChannelGet reads a channel as the database keeps it.
	ChannelGet(ctx context.Context, projectID, id string) (*monitors.Channel, error)
}

// Tx is one write transaction of a store. Methods that read rows to change
// lock them (FOR UPDATE on PostgreSQL; SQLite's write transaction holds
// its only write lock).
type Tx interface {
	// PingBatchLoad resolves the project ping keys of a batch, loads and
	// locks every monitor it names, and reserves q.IDs ping IDs when the
	// store assigns them before the insert (nil otherwise).
	PingBatchLoad(ctx context.Context, q *PingBatchQuery) (*PingBatchRows, error)
	// MonitorCreate inserts a monitor made by a create=1 ping. When another
	// transaction created that slug first, it returns that monitor, locked,
	// and created false. A failure fails only this monitor.
	MonitorCreate(ctx context.Context, m *monitors.Monitor) (got *monitors.Monitor, created bool, err error)
	// MonitorInsert inserts a monitor; a slug or ping key in use is
	// monitors.ErrConflict.
	MonitorInsert(ctx context.Context, m *monitors.Monitor) error
	// MonitorLock loads and locks a monitor of the project.
	MonitorLock(ctx context.Context, projectID, id string) (*monitors.Monitor, error)
	// MonitorClaimDue locks and loads up to limit unpaused monitors whose
	// next deadline is at or before now, earliest first, skipping rows
	// another transaction holds.
	MonitorClaimDue(ctx context.Context, now time.Time, limit int) ([]*monitors.Monitor, error)
	// MonitorPostpone moves a monitor's next deadline.
	MonitorPostpone(ctx context.Context, id string, until time.Time) error
	// PersonFieldsGet and PersonFieldsSet read and write a monitor's
	// person fields.
	PersonFieldsGet(ctx context.Context, projectID, id string) ([]string, error)
	PersonFieldsSet(ctx context.Context, projectID, id string, fields []string) error
	// SourceLock serializes the declarations of one source of a project
	// until the transaction ends.
	SourceLock(ctx context.Context, projectID, source string) error
	// SourceMonitors loads and locks the project's monitors of the source
	// or with one of the slugs, with their person fields by monitor ID.
	SourceMonitors(ctx context.Context, projectID, source string, slugs []string) ([]*monitors.Monitor, map[string][]string, error)

	// Write writes w and returns the incident events it inserted.
	Write(ctx context.Context, w *WriteSet) ([]*monitors.IncidentEvent, error)
	// DeliveryTargets reads what routing needs of the monitors, and the
	// pending deliveries of the incidents.
	DeliveryTargets(ctx context.Context, monitorIDs, incidentIDs []string) (*Targets, error)
	// DeliveryInsert inserts deliveries, in order, to the channels that
	// still exist, and hands those it inserted to the enqueue hook.
	DeliveryInsert(ctx context.Context, ds []*monitors.Delivery) ([]*monitors.Delivery, error)
	// IncidentRemindDue stamps up to limit open incidents opened, or last
	// reminded, at or before cutoff, with a reminder event each at now,
	// and returns the events.
	IncidentRemindDue(ctx context.Context, now, cutoff time.Time, limit int) ([]*monitors.IncidentEvent, error)
	// DeliveryLock loads and locks a delivery of the project.
	DeliveryLock(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error)
	// DeliveryAttemptInsert logs an attempt and moves its delivery to
	// state, its attempt count, next attempt and finish time.
	DeliveryAttemptInsert(ctx context.Context, a *monitors.DeliveryAttempt, state monitors.DeliveryState,
		finished *time.Time) (*monitors.DeliveryAttempt, error)

	// HeartbeatLock reads, and locks, the evaluators' shared heartbeat.
	HeartbeatLock(ctx context.Context) (*time.Time, error)
	// HeartbeatStamp sets it.
	HeartbeatStamp(ctx context.Context, at time.Time) error
	// OutageUnsettled returns the oldest outage not settled, nil if none.
	OutageUnsettled(ctx context.Context) (*monitors.Outage, error)
	// OutageInsert records an outage.
	OutageInsert(ctx context.Context, start, end time.Time) (*monitors.Outage, error)
	// OutageExtend moves an outage's end.
	OutageExtend(ctx context.Context, id int64, end time.Time) (*monitors.Outage, error)
	// OutageSettle settles the outage at now if no unpaused monitor is due
	// at or before its end, and returns it; nil when it stays unsettled.
	OutageSettle(ctx context.Context, id int64, now time.Time) (*monitors.Outage, error)
	// OutagePostponed adds n to the monitors postponed by the outage that
	// started at start.
	OutagePostponed(ctx context.Context, start time.Time, n int) error

	// ChannelLock loads and locks a channel of the project.
	ChannelLock(ctx context.Context, projectID, id string) (*monitors.Channel, error)
	// ChannelUpdate writes a channel's name, config, default flag and
	// update time.
	ChannelUpdate(ctx context.Context, c *monitors.Channel) error
	// ChannelUsers returns the slugs of the project's monitors that name
	// the channel.
	ChannelUsers(ctx context.Context, projectID, id string) ([]string, error)
	// ChannelDelete deletes a channel.
	ChannelDelete(ctx context.Context, projectID, id string) error

	// UserAny locks the users against new ones for the rest of the
	// transaction and reports whether any exists.
	UserAny(ctx context.Context) (bool, error)
	// UserInsert stores a user.
	UserInsert(ctx context.Context, u *monitors.User) error
	// ProjectMemberInsert makes a user a member of a project; again is a
	// no-op.
	ProjectMemberInsert(ctx context.Context, projectID, userID string, at time.Time) error
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
}

// PruneCut is where a monitor's kept history ends.
type PruneCut struct {
	MonitorID string
	Ping, Run *int64 // the newest ping ID and run seq not kept; nil when all are kept
}

// Targets is what routing reads.
type Targets struct {
	// Monitors are the monitors' channels and projects, by monitor ID.
	Monitors map[string]MonitorTarget
	// Channels are the projects' channels, by project ID.
	Channels map[string][]ChannelTarget
	// Pending are the channels with a delivery still pending, by incident.
	Pending map[string]map[string]bool
}

// MonitorTarget is a monitor as routing sees it.
type MonitorTarget struct {
	ProjectID string
	Channels  []string
}

// ChannelTarget is a channel as routing sees it.
type ChannelTarget struct {
	ID        string
	IsDefault bool
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
	// Incidents are written in order, each with its event.
	Incidents []IncidentWrite
	// Opens are incidents opened by time, all new, written after
	// Incidents; the store may write them in one statement.
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
