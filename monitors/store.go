package monitors

import (
	"context"
	"time"
)

// Store is everything Vigil keeps. Two implementations, pgstore and
// sqlitestore, pass one conformance suite (storetest). Every write that
// changes a monitor's state is made under a lock on its row, together with
// the pings, runs, incidents and incident events it causes, in one
// transaction: nothing half written is ever stored.
//
// Methods that take a project ID return ErrNotFound for rows of another
// project, exactly as for rows that do not exist.
type Store interface {
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the store's connections.
	Close() error

	MaintenanceStore
	StatusPageStore

	ProjectCreate(ctx context.Context, p *ProjectCreateParams) (*Project, error)
	ProjectGet(ctx context.Context, id string) (*Project, error)
	ProjectGetByPingKey(ctx context.Context, pingKey string) (*Project, error)
	ProjectList(ctx context.Context) ([]*Project, error)

	APIKeyCreate(ctx context.Context, p *APIKeyCreateParams) (*APIKey, error)
	// APIKeyGetByHash returns the unrevoked key with that hash.
	APIKeyGetByHash(ctx context.Context, hash string) (*APIKey, error)
	APIKeyList(ctx context.Context, projectID string) ([]*APIKey, error)
	APIKeyRevoke(ctx context.Context, projectID, id string, at time.Time) error

	// MonitorInsert stores a new monitor, whose ID, PingKey, timestamps
	// and state the caller has set. A slug or ping key already in use is
	// ErrConflict.
	MonitorInsert(ctx context.Context, m *Monitor) error
	MonitorGet(ctx context.Context, projectID, id string) (*Monitor, error)
	MonitorGetBySlug(ctx context.Context, projectID, slug string) (*Monitor, error)
	MonitorGetByPingKey(ctx context.Context, pingKey string) (*Monitor, error)
	MonitorList(ctx context.Context, p *MonitorListParams) ([]*Monitor, error)
	// MonitorModify loads a monitor under a lock, lets p.Fn change its
	// configuration and state, and writes it with the transition Fn
	// returns (Fn may return nil for none). An error from Fn aborts the
	// whole change and is returned as is.
	MonitorModify(ctx context.Context, p *MonitorModifyParams) (*Monitor, error)
	// MonitorDelete deletes a monitor and its history.
	MonitorDelete(ctx context.Context, projectID, id string) error

	// PingRecordBatch stores a batch of pings in one transaction. Each ping
	// is applied with ApplyPing, in slice order, to its monitor, which is
	// locked for the rest of the transaction. A ping whose monitor cannot be
	// found fails alone (ErrNotFound in its result); the others are stored.
	// When the returned error is nil, every result without Err is durable.
	PingRecordBatch(ctx context.Context, p *PingRecordBatchParams) ([]PingRecordResult, error)
	PingList(ctx context.Context, p *HistoryListParams) ([]*Ping, error)
	// PingCountByMonitor counts the pings kept (see PingPrune) of the
	// project's monitors with those IDs, by ID; monitors without pings, or
	// of another project, are left out.
	PingCountByMonitor(ctx context.Context, projectID string, ids []string) (map[string]int64, error)
	// PingPrune deletes all but the newest pings and runs of each monitor.
	PingPrune(ctx context.Context, p *PingPruneParams) (int64, error)

	RunList(ctx context.Context, p *HistoryListParams) ([]*Run, error)

	IncidentGet(ctx context.Context, projectID, id string) (*Incident, error)
	IncidentList(ctx context.Context, p *IncidentListParams) ([]*Incident, error)
	IncidentEventList(ctx context.Context, p *IncidentEventListParams) ([]*IncidentEvent, error)

	// MonitorEvaluateDue claims up to p.Limit unpaused monitors whose next
	// deadline is at or before p.Now, applies the time with ApplyTime, and
	// writes the results in one transaction. On PostgreSQL, claims skip rows
	// locked by another evaluator or by ingest, so replicas share the work
	// and no monitor is evaluated twice for one deadline.
	MonitorEvaluateDue(ctx context.Context, p *EvaluateDueParams) (*EvaluateDueResult, error)
	// MonitorNextDeadline returns the earliest next deadline of any unpaused
	// monitor, or nil when there is none.
	MonitorNextDeadline(ctx context.Context) (*time.Time, error)

	// Methods of later parts are added below, each in its own block.

	// == evaluator ==

	// EvaluatorHeartbeat stamps the heartbeat shared by every evaluator at
	// the start of a pass, and detects outages of Vigil itself: when the
	// previous stamp of any evaluator is more than p.Threshold before p.Now,
	// it records an outage from that stamp to p.Now (or extends the outage
	// still being settled). It returns the outage whose bounds every claim
	// must pass as [TimeOptions] until it settles, that is until no unpaused
	// monitor has a next deadline at or before its end. Callers on several
	// replicas are serialized: one outage is recorded once.
	EvaluatorHeartbeat(ctx context.Context, p *EvaluatorHeartbeatParams) (*EvaluatorHeartbeat, error)
	// OutageList lists recorded outages, newest first. MonitorEvaluateDue
	// counts the monitors each one postponed, in its own transaction, when
	// called with the outage's bounds as options.
	OutageList(ctx context.Context, p *OutageListParams) ([]*Outage, error)

	// == api ==

	ChannelCreate(ctx context.Context, p *ChannelCreateParams) (*Channel, error)
	ChannelGet(ctx context.Context, projectID, id string) (*Channel, error)
	ChannelList(ctx context.Context, p *ChannelListParams) ([]*Channel, error)
	// ChannelModify loads a channel under a lock, lets p.Fn change it and
	// writes it. A name already used in the project is ErrConflict.
	ChannelModify(ctx context.Context, p *ChannelModifyParams) (*Channel, error)
	// ChannelDelete deletes a channel that no monitor names; otherwise it
	// returns a *ChannelInUseError.
	ChannelDelete(ctx context.Context, projectID, id string) error

	// MonitorPatch is MonitorModify for a change made by a person: p.Fn
	// also gets and sets the monitor's person fields, written in the same
	// transaction. It returns the monitor and its person fields.
	MonitorPatch(ctx context.Context, p *MonitorPatchParams) (*Monitor, []string, error)
	// MonitorPersonFields returns the person fields of the project's
	// monitors with those IDs, by ID; monitors with none, or unknown, are
	// left out.
	MonitorPersonFields(ctx context.Context, projectID string, ids []string) (map[string][]string, error)
	// MonitorSync applies a source's declaration in one transaction (see
	// MonitorSyncParams). Syncs of one source are serialized; a slug
	// inserted meanwhile by another writer makes the sync start over.
	MonitorSync(ctx context.Context, p *MonitorSyncParams) error
	// MonitorCountByStatus counts the monitors of every project by their
	// status at now (late is derived, as in MonitorList).
	MonitorCountByStatus(ctx context.Context, now time.Time) (map[Status]int64, error)
	// IncidentCountByKind counts the incidents of every project, by kind.
	IncidentCountByKind(ctx context.Context) ([]IncidentCount, error)
	// ProjectBadgeKey returns the secret the project's badge URLs are
	// signed with, making it on first use.
	ProjectBadgeKey(ctx context.Context, projectID string) (string, error)

	// == delivery ==

	// Every transaction that inserts incident events also creates their
	// deliveries: one per channel of the event's monitor, or per default
	// channel of its project when the monitor names none (a reminder skips
	// a channel that still has a delivery of the incident pending). The
	// store hands them to its enqueue hook, if it has one, in the same
	// transaction.

	// DeliveryGet returns a delivery of the project, with its event's time
	// and summary, and the earlier delivery it waits for (see
	// [Delivery.WaitsFor]).
	DeliveryGet(ctx context.Context, projectID string, id int64) (*Delivery, error)
	// DeliveryAttemptRecord logs one attempt of a pending delivery, numbered
	// after the attempts before it, and moves the delivery to sent (on
	// success), failed, or its next attempt, in one transaction. A delivery
	// that is not pending any more is ErrConflict: a sent delivery is never
	// sent again.
	DeliveryAttemptRecord(ctx context.Context, p *DeliveryAttemptRecordParams) (*DeliveryAttempt, error)
	// DeliveryList returns the deliveries of the project's incidents with
	// the given IDs, each with its attempts oldest first, ordered by
	// incident, event and channel.
	DeliveryList(ctx context.Context, p *DeliveryListParams) ([]*Delivery, error)
	// DeliveryGroup returns the pending incident.opened deliveries of the
	// project to that channel whose group goes out at groupAt, by ID, at
	// most limit of them, with their events' times and summaries: the
	// members of one incidents.grouped message (see [Delivery.GroupAt]).
	DeliveryGroup(ctx context.Context, projectID, channelID string, groupAt time.Time, limit int) ([]*Delivery, error)
	// IncidentRemind records an incident.reminder event for each open
	// incident opened, or last reminded, p.Interval or more before p.Now,
	// with its deliveries, in one transaction, and returns the events.
	// Replicas that call it at once remind each incident once.
	IncidentRemind(ctx context.Context, p *IncidentRemindParams) ([]*IncidentEvent, error)

	// ReportChannels lists every channel with a report, of every project,
	// by ID, each with the start of the latest period reported to it.
	ReportChannels(ctx context.Context) ([]ReportChannel, error)
	// ReportClaim stores p.Report, the claim of its channel and period,
	// and its delivery to the channel, handed to the enqueue hook, in one
	// transaction, and returns the delivery. A report of that channel and
	// period stored already is ErrConflict: replicas that claim at once
	// send it once. A channel that is gone is ErrNotFound.
	ReportClaim(ctx context.Context, p *ReportClaimParams) (*Delivery, error)
	// ReportGet returns a report of the project.
	ReportGet(ctx context.Context, projectID, id string) (*Report, error)

	// == web ==

	// UserCreate stores a new user and their project memberships in one
	// transaction. An email already in use is ErrConflict, and so is any
	// existing user when p.OnlyFirst is set; an unknown project is
	// ErrNotFound.
	UserCreate(ctx context.Context, p *UserCreateParams) (*User, error)
	// UserCount returns how many users there are.
	UserCount(ctx context.Context) (int, error)
	UserGet(ctx context.Context, id string) (*User, error)
	// UserGetByEmail finds a user by email, compared in lower case.
	UserGetByEmail(ctx context.Context, email string) (*User, error)
	// ProjectMemberAdd makes a user a member of a project; adding a member
	// again changes nothing. An unknown user or project is ErrNotFound.
	ProjectMemberAdd(ctx context.Context, p *ProjectMemberAddParams) error
	// ProjectListByUser returns the projects a user is a member of, oldest
	// first.
	ProjectListByUser(ctx context.Context, userID string) ([]*Project, error)
	// ProjectRename changes a project's name.
	ProjectRename(ctx context.Context, p *ProjectRenameParams) (*Project, error)
	SessionCreate(ctx context.Context, p *SessionCreateParams) (*Session, error)
	// SessionGet returns the unexpired session with that token hash.
	SessionGet(ctx context.Context, p *SessionGetParams) (*Session, error)
	// SessionExtend moves a session's expiry.
	SessionExtend(ctx context.Context, id string, expiresAt time.Time) error
	// SessionDelete ends the session with that token hash; ending one that
	// does not exist is not an error.
	SessionDelete(ctx context.Context, tokenHash string) error
	// SessionDeleteExpired deletes the sessions expired at now and returns
	// how many.
	SessionDeleteExpired(ctx context.Context, now time.Time) (int64, error)
	// RunListRecent returns the newest p.PerMonitor runs of each of
	// p.MonitorIDs in the project, newest first, by monitor ID. Monitors
	// without runs have no entry.
	RunListRecent(ctx context.Context, p *RunListRecentParams) (map[string][]*Run, error)
	// RunBriefList is RunListRecent with only what the monitor list draws
	// of each run (its outcome and duration), read in one small row per
	// monitor.
	RunBriefList(ctx context.Context, p *RunListRecentParams) (map[string][]RunBrief, error)
	// MonitorListPage returns a page of the project's monitor list with its
	// counts by status, tags and number of matches, filtered, ordered and
	// cut in the database: only the page's monitors are loaded.
	MonitorListPage(ctx context.Context, p *MonitorPageParams) (*MonitorPage, error)
	// MonitorListMarker returns a text that changes whenever one of the
	// project's monitors is added, deleted or written, or its runs are
	// (see [MonitorPage].Versions), read without loading the monitors.
	// Equal markers mean the same monitors with the same rows and runs,
	// whatever the time: what depends on the time (late) is the caller's
	// to judge.
	MonitorListMarker(ctx context.Context, projectID string) (string, error)

	// == lifecycle ==

	// UserList returns every user, by email.
	UserList(ctx context.Context) ([]*User, error)
	// UserSetDisabled disables or enables a user; disabling ends all their
	// sessions in the same transaction.
	UserSetDisabled(ctx context.Context, p *UserSetDisabledParams) (*User, error)
	// UserDelete deletes a user with their memberships and sessions.
	UserDelete(ctx context.Context, id string) error
	// UserSetPassword changes a user's password hash and ends their
	// sessions but p.KeepSessionID, in one transaction.
	UserSetPassword(ctx context.Context, p *UserSetPasswordParams) error
	// SessionDeleteByUser ends a user's sessions (but p.ExceptID) and
	// returns how many.
	SessionDeleteByUser(ctx context.Context, p *SessionDeleteByUserParams) (int64, error)
	// MonitorRotatePingKey gives a monitor a new ping key; the old one
	// finds nothing from the commit on.
	MonitorRotatePingKey(ctx context.Context, p *PingKeyRotateParams) (*Monitor, error)
	// ProjectRotatePingKey gives a project a new project ping key.
	ProjectRotatePingKey(ctx context.Context, p *PingKeyRotateParams) (*Project, error)
	// APIKeyTouch records that the key was used at p.At, unless a later
	// use is recorded already.
	APIKeyTouch(ctx context.Context, p *APIKeyTouchParams) error
	// IncidentPrune deletes, in batches, the incidents resolved before
	// p.ResolvedBefore, with their events, deliveries and attempts, and
	// returns how many incidents it deleted.
	IncidentPrune(ctx context.Context, p *IncidentPruneParams) (int64, error)

	// == uptime ==

	// UptimeHistory returns the project monitor's runs finished in
	// [p.From, p.To) and its incidents open at some instant of it, oldest
	// first; [ComputeUptime] makes its uptime of them.
	UptimeHistory(ctx context.Context, p *UptimeHistoryParams) (*UptimeHistory, error)
}

// ProjectCreateParams are the inputs of [Store.ProjectCreate].
type ProjectCreateParams struct {
	ID      string
	Name    string
	PingKey string
	Now     time.Time
}

// APIKeyCreateParams are the inputs of [Store.APIKeyCreate].
type APIKeyCreateParams struct {
	ID        string
	ProjectID string
	Name      string
	Prefix    string
	Hash      string
	ReadOnly  bool
	Now       time.Time
}

// MonitorListParams filter and page [Store.MonitorList]. Results are ordered
// by name, then ID.
type MonitorListParams struct {
	ProjectID string
	Tag       string // only monitors with this tag
	// Statuses keeps monitors whose status at Now is one of these. Late is
	// not stored: it is "up" with an expected time at or before Now.
	Statuses []Status
	Now      time.Time
	Source   string // only monitors declared by this source
	Limit    int
	Offset   int
}

// MonitorModifyParams are the inputs of [Store.MonitorModify].
type MonitorModifyParams struct {
	ProjectID string
	ID        string
	Fn        func(m *Monitor) (*Transition, error)
}

// PingRecordParams is one ping to record. The monitor is found by PingKey,
// or by ProjectPingKey and Slug.
type PingRecordParams struct {
	PingKey        string
	ProjectPingKey string
	Slug           string
	// Create, with a slug, creates the monitor from NewMonitor when the
	// project has none with that slug.
	Create     bool
	NewMonitor *Monitor
	// Update, when set, changes the settings of the monitor the ping names
	// before the ping is applied, in the same transaction (update=1). It
	// is called as [MonitorPatchParams].Fn is, with the monitor and its
	// person fields, and returns the transition and the person fields to
	// store; an error fails the ping alone, which is then not stored. It is
	// not called for a monitor this batch created.
	Update func(m *Monitor, personFields []string) (*Transition, []string, error)
	Ping   Ping
}

// PingRecordBatchParams are the inputs of [Store.PingRecordBatch].
type PingRecordBatchParams struct {
	Pings []*PingRecordParams
}

// PingRecordResult is the outcome of one ping of a batch.
type PingRecordResult struct {
	MonitorID string
	PingID    int64
	Created   bool // the monitor was created by this ping
	// Monitor is the ping's monitor as the batch left it, for what the
	// answer to the ping says of its settings (its advice).
	Monitor    *Monitor
	Transition *Transition
	Err        error
}

// HistoryListParams page pings and runs, newest first. Before is an
// exclusive cursor: a ping ID, or a run's Seq; 0 starts at the newest.
type HistoryListParams struct {
	ProjectID string
	MonitorID string
	Limit     int
	Before    int64
}

// PingPruneParams are the inputs of [Store.PingPrune].
type PingPruneParams struct {
	KeepPings int
	KeepRuns  int
	// Before, when set, is the age limit of pings: those received before
	// it go too, whatever their count. PostgreSQL drops them a month's
	// partition at a time, once the whole month is older than Before;
	// SQLite deletes them in chunks, oldest first.
	Before time.Time
	// Now is the present, from which PostgreSQL makes the partitions of
	// the coming months. Zero is time.Now.
	Now time.Time
}

// IncidentListParams filter and page [Store.IncidentList], newest first.
type IncidentListParams struct {
	ProjectID string
	MonitorID string     // optional
	OpenOnly  bool       // only unresolved incidents
	Since     *time.Time // only incidents open at or after Since
	Limit     int
	Offset    int
}

// IncidentEventListParams select [Store.IncidentEventList] results, oldest
// first.
type IncidentEventListParams struct {
	ProjectID  string
	IncidentID string
	Limit      int
}

// EvaluateDueParams are the inputs of [Store.MonitorEvaluateDue].
type EvaluateDueParams struct {
	Now     time.Time
	Limit   int
	Options TimeOptions
	// Claimed, when set, is called with the number of monitors the claim
	// locked, as soon as it has locked them and before it evaluates and
	// writes them (so before the transaction commits, which may still
	// fail). It may be called again if the transaction is retried.
	Claimed func(n int)
}

// EvaluateDueResult tells what one claim did.
type EvaluateDueResult struct {
	Evaluated []EvaluatedMonitor
}

// EvaluatedMonitor is one monitor evaluated by a claim.
type EvaluatedMonitor struct {
	MonitorID  string
	DueAt      time.Time // the deadline that made it due
	Transition *Transition
}

// UptimeHistoryParams are the inputs of [Store.UptimeHistory].
type UptimeHistoryParams struct {
	ProjectID string
	MonitorID string
	From, To  time.Time
}

// UptimeHistory is what a monitor's uptime is computed from (see
// [ComputeUptime]).
type UptimeHistory struct {
	// Runs finished in [From, To), oldest first.
	Runs []*Run
	// Incidents open at some instant of [From, To), oldest first.
	Incidents []*Incident
}
