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

	IncidentGet, IncidentList, IncidentExists, IncidentEventList, IncidentCountByKind string

	HeartbeatLock, HeartbeatStamp                                                          string
	OutageUnsettled, OutageInsert, OutageExtend, OutageSettle, OutagePostponed, OutageList string

	ChannelCreate, ChannelGet, ChannelLock, ChannelList, ChannelUpdate, ChannelUsers, ChannelDelete string

	DeliveryGet, DeliveryList, DeliveryLock, DeliveryUpdate, AttemptInsert, AttemptList string

	// UserLock, when set, locks the users table for the rest of a
	// transaction (PostgreSQL; SQLite's write transaction already holds
	// its only write lock).
	UserLock, UserExists, UserInsert, UserCount, UserGet, UserGetByEmail string

	SessionInsert, SessionGet, SessionExtend, SessionDelete, SessionDeleteExpired string
}
