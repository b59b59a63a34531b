package plan

// Queries are a store's SQL for the statements the planning layer runs
// itself, one per field, each with the arguments and columns its use here
// gives. Both stores fill every field; a store's own methods (its [Tx]
// specials, MonitorList) have their SQL beside them.
type Queries struct {
	ProjectCreate, ProjectGet, ProjectGetByPingKey, ProjectList, ProjectListByUser, ProjectRename string
	ProjectMemberAdd, ProjectBadgeKey, ProjectBadgeKeySet                                         string

	APIKeyCreate, APIKeyGetByHash, APIKeyList, APIKeyRevoke string

	MonitorInsert, MonitorUpdate, MonitorGet, MonitorLock, MonitorGetBySlug, MonitorGetByPingKey string
	MonitorDelete, MonitorExists, MonitorPostpone, MonitorNextDeadline, MonitorCountByStatus     string
	MonitorPersonFields, PersonFieldsGet, PersonFieldsSet, SourceMonitors                        string

	PingList, RunList, RunListRecent, PingPruneCutoffs, PingPrune, RunPrune string
	// RunPruned counts a pruning of the runs of monitor $1
	// (monitor_runs_pruned), so that its version in the monitor list, and
	// the list's marker, change with what its sparkline draws.
	RunPruned string
	// RunBriefList reads, for the monitors of project $1 with the IDs $2,
	// the newest $3 runs of each as one text per monitor: rows
	// (monitor_id, "outcome:duration_ms,..." newest first, the duration
	// empty while unknown); monitors without runs have no row.
	RunBriefList string
	// PingCountByMonitor counts the pings kept of the monitors of project $1
	// with the IDs $2, by monitor: rows (monitor_id, count).
	PingCountByMonitor string

	IncidentGet, IncidentList, IncidentExists, IncidentEventList, IncidentCountByKind string

	HeartbeatLock, HeartbeatStamp                                                          string
	OutageUnsettled, OutageInsert, OutageExtend, OutageSettle, OutagePostponed, OutageList string

	ChannelCreate, ChannelGet, ChannelLock, ChannelList, ChannelUpdate, ChannelUsers, ChannelDelete string
	// LateChannels lists the channels with notify_late of the projects
	// with the IDs $1: rows (project_id, id, is_default).
	LateChannels string

	DeliveryGet, DeliveryList, DeliveryLock, DeliveryUpdate, AttemptInsert, AttemptList string
	// DeliveryGroup lists the pending incident.opened deliveries of project
	// $1 to channel $2 with group_at $3, by ID, at most $4, with the
	// columns of DeliveryGet. DeliveryGroupsOpen gives, for the channels
	// with the IDs $1, the latest group_at of their pending deliveries:
	// rows (channel_id, group_at).
	DeliveryGroup, DeliveryGroupsOpen string

	// UserLock, when set, locks the users table for the rest of a
	// transaction (PostgreSQL; SQLite's write transaction already holds
	// its only write lock).
	UserLock, UserExists, UserInsert, UserCount, UserGet, UserGetByEmail string

	SessionInsert, SessionGet, SessionExtend, SessionDelete, SessionDeleteExpired string

	LifecycleQueries
	SecretQueries
	UptimeQueries
	MaintenanceQueries
	ReportQueries
	StatusPageQueries
	DependencyQueries
}

// DependencyQueries are the statements of held notifications across
// monitors (see held.go): the parents' open incidents, the graph of
// depends_on, and the wake-up of dependents.
type DependencyQueries struct {
	// ParentIncidents lists the open incidents (monitor_id, id, kind) of
	// the monitors $1 (a list of IDs), oldest first.
	ParentIncidents string
	// DependencyGraph lists (id, slug, depends_on) of project $1's
	// monitors.
	DependencyGraph string
	// DependentsWake moves the next deadline of project $1's unpaused
	// monitors that depend on monitor $2 and have a held incident to $3,
	// when later, skipping rows another transaction holds.
	DependentsWake string
}

// UptimeQueries are the reads of a monitor's history that its uptime is
// computed from (see uptime.go).
type UptimeQueries struct {
	// RunsFinishedBetween lists the runs of monitor $1 finished at or
	// after $2 and before $3, oldest first.
	RunsFinishedBetween string
	// IncidentsOverlapping lists the incidents of monitor $1 open at some
	// instant at or after $2 and before $3 (opened before $3, not resolved
	// before $2), oldest first.
	IncidentsOverlapping string
}

// MaintenanceQueries are the statements of maintenance windows (see
// maintenance.go), each a whole window as a JSON document (doc).
type MaintenanceQueries struct {
	// MaintenanceInsert inserts ($1 id, $2 project_id, $3 doc).
	MaintenanceInsert string
	// MaintenanceGet and MaintenanceLock read the doc of window $2 of
	// project $1 (MaintenanceLock locking it).
	MaintenanceGet, MaintenanceLock string
	// MaintenanceList reads the docs of project $1's windows, by ID.
	MaintenanceList string
	// MaintenanceUpdate sets the doc ($3) of window $2 of project $1.
	MaintenanceUpdate string
	// MaintenanceDelete deletes window $2 of project $1.
	MaintenanceDelete string
}

// StatusPageQueries are the statements of status pages and incident
// notes (see statuspage.go), each a whole page or note as a JSON document
// (doc).
type StatusPageQueries struct {
	// StatusPageInsert inserts ($1 id, $2 project_id, $3 slug, $4 doc).
	StatusPageInsert string
	// StatusPageGet and StatusPageLock read the doc of page $2 of project
	// $1 (StatusPageLock locking it); StatusPageGetBySlug that of the page
	// with slug $1.
	StatusPageGet, StatusPageLock, StatusPageGetBySlug string
	// StatusPageList reads the docs of project $1's pages, by slug.
	StatusPageList string
	// StatusPageUpdate sets the slug ($3) and doc ($4) of page $2 of
	// project $1.
	StatusPageUpdate string
	// StatusPageDelete deletes page $2 of project $1.
	StatusPageDelete string
	// NoteInsert inserts ($1 id, $2 project_id, $3 incident_id, $4 doc).
	NoteInsert string
	// NoteCount counts the notes of incident $1.
	NoteCount string
	// NoteList reads the docs of the notes of project $1's incidents
	// with the IDs $2 (a list).
	NoteList string
	// NoteDelete deletes note $2 of project $1.
	NoteDelete string
}

// SecretQueries are the statements of sealing channel configs (see
// sealed.go).
type SecretQueries struct {
	// ChannelPage lists up to $2 channels of every project with an ID
	// after $1, by ID.
	ChannelPage string
	// ChannelConfigSet sets the stored config ($3) of a channel.
	ChannelConfigSet string
}

// LifecycleQueries are the statements of the lifecycle of accounts and
// keys, the monitor limit and incident pruning (see lifecycle.go).
type LifecycleQueries struct {
	UserList, UserSetDisabled, UserDelete, UserSetPassword, SessionDeleteByUser string
	MonitorRotatePingKey, ProjectRotatePingKey, APIKeyTouch                     string
	// MonitorRoomLock, when set, serializes the transactions that count a
	// project's monitors to create more (PostgreSQL's advisory lock on the
	// project ID, $1); SQLite's write transaction holds its only lock.
	MonitorRoomLock, MonitorCount string
	// IncidentPruneBatch deletes up to $2 incidents resolved before $1,
	// with no delivery pending.
	IncidentPruneBatch string
	// PingPruneBefore deletes up to $2 of the oldest pings (by ID) that
	// were received before $1. Empty on a store whose Driver is a
	// [PingAger].
	PingPruneBefore string
}
