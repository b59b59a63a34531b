package monitors

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Channel is an alert channel of a project: where incidents of its monitors
// are sent. Config is the kind's JSON config, secrets included; the API
// strips the secrets before it returns a channel.
type Channel struct {
	ID        string
	ProjectID string
	Kind      string
	Name      string
	Config    json.RawMessage
	IsDefault bool // used by monitors with no channels of their own
	// NotifyLate sends the channel a monitor.late warning when a monitor
	// is late (halfway through its grace) before its missed incident.
	NotifyLate bool
	// GroupSeconds gathers incidents of the project that open within
	// that many seconds into one incidents.grouped message; 0 sends each
	// alone. See [ChannelGroupDefault].
	GroupSeconds int
	// Report is how often the channel gets a report of its project
	// (weekly, monthly), "" for never.
	Report    ReportPeriod
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ChannelNameMax bounds the length of a channel's name, in bytes.
const ChannelNameMax = 200

// Validate checks what a person sets on a channel that is not its kind's
// config (which its kind validates).
func (c *Channel) Validate() error {
	switch {
	case strings.TrimSpace(c.Name) == "":
		return invalid("name", "must not be empty")
	case len(c.Name) > ChannelNameMax:
		return invalid("name", "must be at most %d characters", ChannelNameMax)
	case c.GroupSeconds < 0 || c.GroupSeconds > ChannelGroupMax:
		return invalid("group_seconds", "must be between 0 and %d", ChannelGroupMax)
	case ChannelPages(c.Kind) && c.NotifyLate:
		return invalid("notify_late", "a %s channel pages someone for every event it gets, so it gets incidents only: send monitor.late to a chat, e-mail or webhook channel", c.Kind)
	case ChannelPages(c.Kind) && c.GroupSeconds > 0:
		return invalid("group_seconds", "must be 0 for a %s channel: each incident is its own alert there, so that its resolve closes it", c.Kind)
	}
	if err := ValidateReportPeriod(c.Report); err != nil {
		return err
	}
	if c.Report != ReportNone && !ChannelReports(c.Kind) {
		return invalid("report", "%s channels take no reports: only email, slack and webhook channels do", c.Kind)
	}
	return nil
}

// ChannelReports reports whether channels of kind can be sent reports
// (the report field): email, Slack and webhook. PagerDuty and Opsgenie
// page someone for every event, so they take incidents only, as they
// take no monitor events; Discord, Teams, Telegram and ntfy carry short
// alerts, not a week's summary, and refuse the report field too.
func ChannelReports(kind string) bool { return kind == "email" || kind == "slack" || kind == "webhook" }

// ChannelGroupMax bounds group_seconds: the longest a first incident of a
// group waits before it is sent.
const ChannelGroupMax = 600

// ChannelGroupDefault is the group_seconds of a new channel of kind that
// does not say: 30 for the chat and e-mail kinds, whose readers are
// people who want one message for one broken database, and 0 for
// webhooks (programs, which want each incident as it opens), PagerDuty
// and Opsgenie (each incident its own alert).
func ChannelGroupDefault(kind string) int {
	switch kind {
	case "webhook", "pagerduty", "opsgenie":
		return 0
	}
	return 30
}

// ChannelPages reports whether a channel kind wakes someone up:
// PagerDuty and Opsgenie, whose every event is an alert to act on. Their
// APIs have no event that only informs, so they get incidents only, each
// alone: no monitor events, no late warnings, no groups.
func ChannelPages(kind string) bool { return kind == "pagerduty" || kind == "opsgenie" }

// ChannelCreateParams are the inputs of [Store.ChannelCreate].
type ChannelCreateParams struct {
	ID        string
	ProjectID string
	Kind      string
	Name      string
	Config    json.RawMessage
	IsDefault bool
	// NotifyLate and GroupSeconds are as in [Channel]. The store takes a
	// nil GroupSeconds as 0; manage gives a person's new channel its
	// kind's default, [ChannelGroupDefault].
	NotifyLate   bool
	GroupSeconds *int
	Report       ReportPeriod
	Now          time.Time
}

// ChannelListParams page [Store.ChannelList]. Results are ordered by name,
// then ID.
type ChannelListParams struct {
	ProjectID string
	Limit     int // 0 or less: all
	Offset    int
}

// ChannelModifyParams are the inputs of [Store.ChannelModify]. Fn changes
// the channel's Name, Config, IsDefault, NotifyLate, GroupSeconds, Report and UpdatedAt; an error from Fn
// aborts the change and is returned as is.
type ChannelModifyParams struct {
	ProjectID string
	ID        string
	Fn        func(c *Channel) error
}

// ChannelInUseError is returned by [Store.ChannelDelete] when monitors
// still send to the channel. It matches ErrConflict.
type ChannelInUseError struct {
	ChannelID string
	// Monitors are the slugs of the monitors that name the channel.
	Monitors []string
}

func (e *ChannelInUseError) Error() string {
	return fmt.Sprintf("channel %s is used by monitors %s", e.ChannelID, strings.Join(e.Monitors, ", "))
}

// Unwrap makes the error match ErrConflict.
func (e *ChannelInUseError) Unwrap() error { return ErrConflict }

// MonitorPatchParams are the inputs of [Store.MonitorPatch]. Fn gets the
// monitor, locked, and the configuration fields a person has set on it
// (JSON field names, such as "grace_seconds"); it changes the monitor and
// returns the transition to write (nil for none) and the new list of
// person fields. An error from Fn aborts the change and is returned as is.
type MonitorPatchParams struct {
	ProjectID string
	ID        string
	Fn        func(m *Monitor, personFields []string) (*Transition, []string, error)
}

// MonitorSyncParams are the inputs of [Store.MonitorSync], which applies
// a source's declaration of its monitors.
type MonitorSyncParams struct {
	ProjectID string
	Source    string
	// Slugs are the declared slugs.
	Slugs []string
	// Fn gets, locked, every monitor of the project that belongs to Source
	// or has one of Slugs (whatever its source), in ID order, with the
	// person fields of each by monitor ID, and returns what to write. Fn
	// may be called more than once: when another writer inserted one of
	// Slugs meanwhile, the store starts over. An error from Fn aborts the
	// sync and is returned as is.
	Fn func(current []*Monitor, personFields map[string][]string) (*MonitorSyncPlan, error)
	// Declared are the declared monitors: before Fn, the store replaces
	// each slug in their DependsOn that names a monitor of the project by
	// its ID, so that Fn compares them with the stored IDs.
	Declared []*Monitor
}

// MonitorSyncPlan is what a sync writes, in one transaction.
type MonitorSyncPlan struct {
	// Insert are new monitors, as for [Store.MonitorInsert]; their person
	// fields are empty.
	Insert []*Monitor
	// Update are whole rows of current monitors, with the transition each
	// change caused. Their person fields are kept.
	Update []MonitorSyncUpdate
}

// MonitorSyncUpdate is one monitor a sync changes.
type MonitorSyncUpdate struct {
	Monitor    *Monitor
	Transition *Transition // nil for none
}

// IncidentCount counts the incidents of one kind in the whole database.
type IncidentCount struct {
	Kind IncidentKind
	// Opened counts every incident kept, open or resolved; Open those not
	// resolved yet.
	Opened int64
	Open   int64
}
