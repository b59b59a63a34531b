package monitors

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// ScheduleKind says how a monitor's occurrences are computed.
type ScheduleKind string

// Schedule kinds.
const (
	ScheduleCron     ScheduleKind = "cron"
	ScheduleInterval ScheduleKind = "interval"
	// ScheduleOnCalendar is a systemd calendar expression (OnCalendar=).
	ScheduleOnCalendar ScheduleKind = "oncalendar"
)

// Dialect says which scheduler's reading of a cron expression a schedule
// follows: its syntax and its fire times across daylight saving changes.
type Dialect string

// Dialects (PROTOCOL.md §6).
const (
	// DialectCronie is cronie's reading, the default (package cron).
	DialectCronie Dialect = "cronie"
	// DialectRobfig is robfig/cron v3's: gocron, River and Kubernetes
	// CronJobs use it.
	DialectRobfig Dialect = "robfig"
	// DialectQuartz is Quartz's CronExpression (package cron/quartz).
	DialectQuartz Dialect = "quartz"
)

// ScheduleSpec is a monitor's schedule as users write it (PROTOCOL.md §2).
type ScheduleSpec struct {
	Kind         ScheduleKind `json:"kind"`
	Expr         string       `json:"expr,omitempty"`
	TZ           string       `json:"tz,omitempty"`
	EverySeconds int64        `json:"every_seconds,omitempty"`
	// Dialect is for cron schedules only; "" reads as DialectCronie.
	Dialect Dialect `json:"dialect,omitempty"`
}

// WithDefaults returns spec with its documented defaults filled in: a cron
// schedule's zone is UTC and its dialect cronie; an oncalendar schedule's
// zone is UTC.
func (spec ScheduleSpec) WithDefaults() ScheduleSpec {
	if spec.Kind == ScheduleCron {
		spec.TZ = cmpOr(spec.TZ, "UTC")
		spec.Dialect = Dialect(cmpOr(string(spec.Dialect), string(DialectCronie)))
	}
	if spec.Kind == ScheduleOnCalendar {
		spec.TZ = cmpOr(spec.TZ, "UTC")
	}
	return spec
}

// AlertOnFailure says which failures count toward a failed incident.
type AlertOnFailure string

// AlertOnFailure values.
const (
	// AlertFinal counts a failure only when the scheduler will not retry it.
	AlertFinal AlertOnFailure = "final"
	// AlertEveryAttempt counts every failed attempt, retried or not.
	AlertEveryAttempt AlertOnFailure = "every_attempt"
	// AlertNever never opens a failed incident.
	AlertNever AlertOnFailure = "never"
)

// OverlapPolicy says whether a start while another run is open alerts.
type OverlapPolicy string

// OverlapPolicy values.
const (
	OverlapAlert  OverlapPolicy = "alert"
	OverlapIgnore OverlapPolicy = "ignore"
)

// TooOftenPolicy says whether successful runs more often than the schedule
// asks for open a too_often incident (see [Monitor.TooOften]).
type TooOftenPolicy string

// TooOftenPolicy values.
const (
	// TooOftenIgnore, the default, counts no runs.
	TooOftenIgnore TooOftenPolicy = "ignore"
	TooOftenAlert  TooOftenPolicy = "alert"
)

// Status is what users see of a monitor.
type Status string

// Statuses. StatusLate is never stored: it is derived at read time by
// [Monitor.StatusAt] from StatusUp and the expected time, so that a job that
// pings a few seconds after its occurrence costs no evaluation.
const (
	StatusNew      Status = "new"
	StatusUp       Status = "up"
	StatusRunning  Status = "running"
	StatusLate     Status = "late"
	StatusRetrying Status = "retrying"
	StatusDown     Status = "down"
	StatusPaused   Status = "paused"
	// StatusUndeclared is a monitor its source no longer declares: kept,
	// with its history, but judging nothing until declared again.
	StatusUndeclared Status = "undeclared"
)

// ParseStatus validates s as a status name.
func ParseStatus(s string) (Status, error) {
	switch st := Status(s); st {
	case StatusNew, StatusUp, StatusRunning, StatusLate, StatusRetrying, StatusDown, StatusPaused, StatusUndeclared:
		return st, nil
	}
	return "", invalid("status", "unknown status %q (want new, up, running, late, retrying, down, paused or undeclared)", s)
}

// RetryPolicy is what a monitor declares about its scheduler's retries, so
// that Vigil can tell how long a whole retry chain may take.
type RetryPolicy struct {
	Name             string  `json:"name,omitempty"`
	MaxRetries       int     `json:"max_retries"`
	MaxDelaysSeconds []int64 `json:"max_delays_seconds,omitempty"`
}

// DescriptionMax bounds a monitor's description, in bytes.
const DescriptionMax = 10000

// Defaults for new monitors.
const (
	GraceSecondsDefault      = 300
	FailureThresholdDefault  = 1
	RecoveryThresholdDefault = 1
	IntervalDefault          = 24 * 60 * 60
)

// Monitor is one watched job: its configuration and its evaluated state.
type Monitor struct {
	ID        string
	ProjectID string
	Name      string
	Slug      string
	Tags      []string
	// Description is free text for the people who read the monitor (what
	// the job does, whom to call); Healthchecks.io's desc.
	Description       string
	Schedule          ScheduleSpec
	GraceSeconds      int64
	MaxRuntimeSeconds int64 // 0: same as grace
	DeadlineSeconds   int64 // 0: no deadline
	AlertOnFailure    AlertOnFailure
	FailureThreshold  int
	RecoveryThreshold int
	Overlap           OverlapPolicy
	Channels          []string // empty: the project's default channels
	Paused            bool
	Source            string // the declaring source, empty when made by a person
	Discovered        bool   // still declared by its source
	RetryPolicy       *RetryPolicy
	// HideOutput keeps the failing run's output out of notifications
	// (notify_output: false). The zero value shows it, as by default.
	HideOutput bool
	// DependsOn are the IDs of monitors of the same project this one
	// depends on: while one of them has an open incident, this monitor's
	// new incidents are suppressed (see [HeldNotice]).
	DependsOn []string
	// SnoozedUntil, when set and in the future, holds the notifications of
	// the incidents the monitor opens until then (see [Snooze]).
	SnoozedUntil *time.Time
	// MinRuntimeSeconds, when set, is the least a successful run may take:
	// a success that took less opens a too_fast incident. 0: off.
	MinRuntimeSeconds int64
	// EarlySeconds, when set (cron and oncalendar schedules only), is how
	// long before its occurrence a run may start: one that starts earlier
	// opens an early incident. 0: off.
	EarlySeconds int64
	// TooOften says whether more successful runs than the schedule has
	// occurrences open a too_often incident; "" reads as TooOftenIgnore.
	TooOften  TooOftenPolicy
	PingKey   string
	CreatedAt time.Time
	UpdatedAt time.Time

	// State is owned by the state machine (ApplyPing, ApplyTime, ...).
	State State
	// NextDeadline is the earliest instant at which time alone changes State;
	// nil when none. It is derived by [Monitor.NextDeadline] and stored,
	// indexed, so the evaluator can find due monitors.
	NextDeadlineAt *time.Time

	// Maintenance are the periods of the maintenance windows that cover
	// the monitor, begun by the time of the event applied (see
	// [MaintenanceOf]). It is not stored: the planning layer sets it from
	// the project's windows before it applies a ping or the time.
	Maintenance []Period
	// Parents are the open incidents of the monitors it depends on
	// (DependsOn), as of the event applied. It is not stored: the planning
	// layer sets it before it applies a ping, the time or a person's
	// change, and a new incident opened while it is not empty is
	// suppressed under its first.
	Parents []ParentIncident

	// NotifyLate says that a channel of the monitor takes the monitor.late
	// warning, so that the state machine watches for it (see ruleLate).
	// It is not stored: the planning layer sets it from the channels
	// before it applies the time and before it writes the monitor's next
	// deadline.
	NotifyLate bool
}

// Grace returns the grace period.
func (m *Monitor) Grace() time.Duration { return time.Duration(m.GraceSeconds) * time.Second }

// MaxRuntime returns how long a run may take before it is stuck.
func (m *Monitor) MaxRuntime() time.Duration {
	if m.MaxRuntimeSeconds > 0 {
		return time.Duration(m.MaxRuntimeSeconds) * time.Second
	}
	return m.Grace()
}

// MinRuntime returns the least a successful run may take, 0 when any.
func (m *Monitor) MinRuntime() time.Duration { return time.Duration(m.MinRuntimeSeconds) * time.Second }

// Early returns how long before its occurrence a run may start, 0 when
// runs are not judged for starting early.
func (m *Monitor) Early() time.Duration { return time.Duration(m.EarlySeconds) * time.Second }

// Deadline returns the deadline after each occurrence, 0 when none.
func (m *Monitor) Deadline() time.Duration { return time.Duration(m.DeadlineSeconds) * time.Second }

// StatusAt returns the status users see at now: the stored status, or late
// when the monitor is up but its expected time has passed.
func (m *Monitor) StatusAt(now time.Time) Status {
	st := m.State.Status
	if st == StatusUp && !m.State.Expected.IsZero() && !now.Before(m.State.Expected) {
		return StatusLate
	}
	return st
}

// LateSQL is StatusAt's rule for late as an SQL condition on the monitors
// table, whose next_expected_at column is State.Expected, with now the
// placeholder of the current time. Both stores filter and count with it.
func LateSQL(now string) string {
	return "(status = 'up' AND next_expected_at <= " + now + ")"
}

// StatusAtSQL is StatusAt as an SQL expression on the monitors table
// (status is State.Status), with now the placeholder of the current time:
// the status users see.
func StatusAtSQL(now string) string {
	return "(CASE WHEN " + LateSQL(now) + " THEN 'late' ELSE status END)"
}

// ListOrder is the order in which the monitor list counts, filters and
// sorts statuses: the ones that need a person first.
var ListOrder = []Status{StatusDown, StatusLate, StatusRetrying, StatusRunning, StatusUp, StatusNew,
	StatusPaused, StatusUndeclared}

// ListRank is the place of st in ListOrder; a status not in it comes
// after them all.
func ListRank(st Status) int {
	if i := slices.Index(ListOrder, st); i >= 0 {
		return i
	}
	return len(ListOrder)
}

// ListRankSQL is ListRank of StatusAtSQL(now), as an SQL expression: the
// list's order is ListRankSQL, then name, then ID.
func ListRankSQL(now string) string {
	var b strings.Builder
	b.WriteString("(CASE " + StatusAtSQL(now))
	for i, st := range ListOrder {
		fmt.Fprintf(&b, " WHEN '%s' THEN %d", st, i)
	}
	fmt.Fprintf(&b, " ELSE %d END)", len(ListOrder))
	return b.String()
}

// StatusSQL returns the SQL condition that keeps the monitors whose status
// at now (see StatusAt) is one of statuses. arg binds a value and returns
// its placeholder; in returns the condition that status is one of a list.
func StatusSQL(statuses []Status, now any, arg func(any) string, in func(col string, list []string) string) string {
	var (
		or     []string
		stored []string
	)
	for _, st := range statuses {
		switch st {
		case StatusLate:
			or = append(or, LateSQL(arg(now)))
		case StatusUp:
			or = append(or, "(status = 'up' AND NOT coalesce("+LateSQL(arg(now))+", false))")
		default:
			stored = append(stored, string(st))
		}
	}
	if len(stored) > 0 {
		or = append(or, in("status", stored))
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,99}$`)

// Slugify turns a name into a slug: lower case, runs of other characters as "-".
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 100 {
		s = strings.TrimRight(s[:100], "-")
	}
	return s
}

// ApplyDefaults fills unset configuration with the documented defaults.
func (m *Monitor) ApplyDefaults() {
	if m.Schedule.Kind == "" {
		m.Schedule = ScheduleSpec{Kind: ScheduleInterval, EverySeconds: IntervalDefault}
	}
	m.Schedule = m.Schedule.WithDefaults()
	if m.GraceSeconds == 0 {
		m.GraceSeconds = GraceSecondsDefault
	}
	if m.AlertOnFailure == "" {
		m.AlertOnFailure = AlertFinal
	}
	if m.FailureThreshold == 0 {
		m.FailureThreshold = FailureThresholdDefault
	}
	if m.RecoveryThreshold == 0 {
		m.RecoveryThreshold = RecoveryThresholdDefault
	}
	if m.Overlap == "" {
		m.Overlap = OverlapAlert
	}
	if m.TooOften == "" {
		m.TooOften = TooOftenIgnore
	}
	if m.Slug == "" {
		m.Slug = Slugify(m.Name)
	}
	if m.Name == "" {
		m.Name = m.Slug
	}
	if m.Tags == nil {
		m.Tags = []string{}
	}
	if m.Channels == nil {
		m.Channels = []string{}
	}
	if m.DependsOn == nil {
		m.DependsOn = []string{}
	}
	if m.State.Status == "" {
		m.State.Status = StatusNew
		if m.Paused {
			m.State.Status = StatusPaused
		}
	}
}

// Validate checks the configuration; errors are *ValidationError naming the
// field. Call ApplyDefaults first.
func (m *Monitor) Validate() error {
	if strings.TrimSpace(m.Name) == "" {
		return invalid("name", "must not be empty")
	}
	if len(m.Name) > 200 {
		return invalid("name", "must be at most 200 characters")
	}
	if len(m.Description) > DescriptionMax {
		return invalid("description", "must be at most %d bytes", DescriptionMax)
	}
	if !slugRE.MatchString(m.Slug) {
		return invalid("slug", "%q must be 1 to 100 characters of a-z, 0-9, - and _, starting with a letter or digit", m.Slug)
	}
	for _, t := range m.Tags {
		if t == "" || len(t) > 50 || strings.ContainsAny(t, " \t\r\n,") {
			return invalid("tags", "tag %q must be 1 to 50 characters without spaces or commas", t)
		}
	}
	sched, err := ValidateSchedule(m.Schedule)
	if err != nil {
		return err
	}
	if m.GraceSeconds < 1 || m.GraceSeconds > 366*24*3600 {
		return invalid("grace_seconds", "must be between 1 and %d", 366*24*3600)
	}
	if m.MaxRuntimeSeconds < 0 || m.MaxRuntimeSeconds > 366*24*3600 {
		return invalid("max_runtime_seconds", "must be between 0 (same as grace) and %d", 366*24*3600)
	}
	if m.DeadlineSeconds < 0 || m.DeadlineSeconds > 366*24*3600 {
		return invalid("deadline_seconds", "must be between 0 (none) and %d", 366*24*3600)
	}
	if m.MinRuntimeSeconds < 0 || m.MinRuntimeSeconds > 366*24*3600 {
		return invalid("min_runtime_seconds", "must be between 0 (off) and %d", 366*24*3600)
	}
	if m.MinRuntimeSeconds > 0 && m.MinRuntime() >= m.MaxRuntime() {
		return invalid("min_runtime_seconds", "%d must be less than the max runtime (%s: max_runtime_seconds, or grace_seconds when that is 0), or every run long enough would first be stuck",
			m.MinRuntimeSeconds, FormatDuration(m.MaxRuntime()))
	}
	if m.EarlySeconds < 0 || m.EarlySeconds > 366*24*3600 {
		return invalid("early_seconds", "must be between 0 (off) and %d", 366*24*3600)
	}
	if _, ok := sched.(Interval); ok && m.EarlySeconds > 0 {
		return invalid("early_seconds", "is for cron and oncalendar schedules only: an interval schedule's runs have no set time to be early for")
	}
	switch m.TooOften {
	case TooOftenAlert, TooOftenIgnore:
	default:
		return invalid("too_often", "%q is not one of alert, ignore", m.TooOften)
	}
	switch m.AlertOnFailure {
	case AlertFinal, AlertEveryAttempt, AlertNever:
	default:
		return invalid("alert_on_failure", "%q is not one of final, every_attempt, never", m.AlertOnFailure)
	}
	if m.FailureThreshold < 1 || m.FailureThreshold > 1000 {
		return invalid("failure_threshold", "must be between 1 and 1000")
	}
	if m.RecoveryThreshold < 1 || m.RecoveryThreshold > 1000 {
		return invalid("recovery_threshold", "must be between 1 and 1000")
	}
	switch m.Overlap {
	case OverlapAlert, OverlapIgnore:
	default:
		return invalid("overlap", "%q is not one of alert, ignore", m.Overlap)
	}
	if p := m.RetryPolicy; p != nil {
		if p.MaxRetries < 0 || p.MaxRetries > 10000 {
			return invalid("retry_policy.max_retries", "must be between 0 and 10000")
		}
		if len(p.MaxDelaysSeconds) > 10000 {
			return invalid("retry_policy.max_delays_seconds", "must have at most 10000 entries")
		}
		for _, d := range p.MaxDelaysSeconds {
			if d < 0 {
				return invalid("retry_policy.max_delays_seconds", "delays must not be negative")
			}
		}
	}
	return nil
}

// Project groups monitors, channels and keys; no project sees another's.
type Project struct {
	ID        string
	Name      string
	PingKey   string // the project ping key, for /ping/{key}/{slug}
	CreatedAt time.Time
}

// APIKey is a management API key. Only its hash is stored.
type APIKey struct {
	ID         string
	ProjectID  string
	Name       string
	Prefix     string // the first characters of the key, to recognise it in lists
	Hash       string // hex SHA-256 of the key
	ReadOnly   bool
	CreatedAt  time.Time
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// PingKind is the kind of a ping (PROTOCOL.md §1).
type PingKind string

// Ping kinds.
const (
	PingStart   PingKind = "start"
	PingSuccess PingKind = "success"
	PingFail    PingKind = "fail"
	PingLog     PingKind = "log"
	PingSkip    PingKind = "skip"
	PingCancel  PingKind = "cancel"
)

// Ping is one received ping.
type Ping struct {
	ID        int64
	MonitorID string
	Kind      PingKind
	At        time.Time
	RID       string
	Attempt   int // 0: not given
	RetryAt   *time.Time
	// ScheduledAt is the scheduled fire time of the occurrence the run
	// belongs to, when the job says (scheduled_at); nil otherwise.
	ScheduledAt   *time.Time
	ExitCode      *int
	DurationMS    *int64
	Body          string
	BodyTruncated bool
	RemoteAddr    string
	UserAgent     string
}

// RunOutcome is how a run ended.
type RunOutcome string

// Run outcomes. An open run has no outcome.
const (
	RunSucceeded RunOutcome = "success"
	RunFailed    RunOutcome = "fail"
	RunCancelled RunOutcome = "cancelled"
	RunSkipped   RunOutcome = "skipped"
	// RunAbandoned closes a run that never reported its end, long after it
	// was reported stuck, or when its monitor was paused.
	RunAbandoned RunOutcome = "abandoned"
)

// Run is one execution of a job, from its start ping to its finish ping.
// Seq numbers a monitor's runs; the store keys runs by (MonitorID, Seq).
type Run struct {
	MonitorID  string
	Seq        int64
	RID        string
	StartedAt  *time.Time
	FinishedAt *time.Time
	Outcome    RunOutcome // empty while open
	DurationMS *int64
	Attempt    int
	ExitCode   *int
	WillRetry  bool // failed, and the scheduler announced a retry
	Stuck      bool
}

// RunBrief is what the monitor list draws of a run (its sparkline): the
// outcome, empty while open, and the duration once known.
type RunBrief struct {
	Outcome    RunOutcome
	DurationMS *int64
}

// IncidentKind names the condition an incident reports.
type IncidentKind string

// Incident kinds.
const (
	IncidentMissed   IncidentKind = "missed"
	IncidentFailed   IncidentKind = "failed"
	IncidentStuck    IncidentKind = "stuck"
	IncidentDeadline IncidentKind = "deadline"
	IncidentOverlap  IncidentKind = "overlap"
	// IncidentTooFast: a run succeeded in less than min_runtime_seconds.
	IncidentTooFast IncidentKind = "too_fast"
	// IncidentEarly: a run started more than early_seconds before its
	// occurrence.
	IncidentEarly IncidentKind = "early"
	// IncidentTooOften: more successful runs than occurrences (cron,
	// oncalendar), or two less than half the interval apart.
	IncidentTooOften IncidentKind = "too_often"
)

// IncidentKinds lists every kind, in a stable order.
var IncidentKinds = []IncidentKind{IncidentMissed, IncidentFailed, IncidentStuck, IncidentDeadline, IncidentOverlap,
	IncidentTooFast, IncidentEarly, IncidentTooOften}

// Incident is one open or resolved condition of a monitor.
type Incident struct {
	ID             string
	ProjectID      string
	MonitorID      string
	Kind           IncidentKind
	OpenedAt       time.Time
	ResolvedAt     *time.Time
	Summary        string
	ResolveSummary string
	RunSeq         int64 // the run it concerns, 0 when none
	PingID         int64 // the ping that caused it, 0 when time did
	// Held is set while the incident's notification is held: it opened
	// while its monitor was snoozed, or suppressed under an open incident
	// of a monitor it depends on (SuppressedBy, which stays as the link
	// once the hold ends).
	Held         bool
	SuppressedBy string
}

// IncidentState is what users see of an incident.
type IncidentState string

// Incident states (PROTOCOL.md §6).
const (
	IncidentStateOpen     IncidentState = "open"
	IncidentStateResolved IncidentState = "resolved"
	// IncidentStateSuppressed is an open incident held under an open
	// incident of a monitor its monitor depends on: shown and counted, but
	// not notified until that one resolves.
	IncidentStateSuppressed IncidentState = "suppressed"
)

// State returns the incident's state.
func (in *Incident) State() IncidentState {
	switch {
	case in.ResolvedAt != nil:
		return IncidentStateResolved
	case in.Held && in.SuppressedBy != "":
		return IncidentStateSuppressed
	}
	return IncidentStateOpen
}

// IncidentEventKind is the kind of a transition of an incident, as
// notifications name it (PROTOCOL.md §3).
type IncidentEventKind string

// Incident event kinds.
const (
	EventOpened   IncidentEventKind = "incident.opened"
	EventUpdated  IncidentEventKind = "incident.updated"
	EventReminder IncidentEventKind = "incident.reminder"
	EventResolved IncidentEventKind = "incident.resolved"
	// Events about a monitor rather than an incident: its source stopped
	// declaring it, or declared it again. Their IncidentID is empty.
	EventMonitorUndeclared IncidentEventKind = "monitor.undeclared"
	EventMonitorRedeclared IncidentEventKind = "monitor.redeclared"
	// EventMonitorLate warns that a monitor is halfway through its grace
	// without a ping: its missed incident is coming unless one arrives.
	// Only channels with notify_late get it.
	EventMonitorLate IncidentEventKind = "monitor.late"
	// EventMonitorFlapping says that a monitor's incidents open and
	// resolve too often (see FlapThreshold): its incidents are recorded
	// but not notified until EventMonitorStable.
	EventMonitorFlapping IncidentEventKind = "monitor.flapping"
	// EventMonitorStable says that a flapping monitor opened no incident
	// for FlapWindow: its incidents are notified again.
	EventMonitorStable IncidentEventKind = "monitor.stable"
)

// IsMonitorEvent reports whether k is about a monitor, not an incident.
func (k IncidentEventKind) IsMonitorEvent() bool {
	switch k {
	case EventMonitorUndeclared, EventMonitorRedeclared, EventMonitorLate, EventMonitorFlapping, EventMonitorStable:
		return true
	}
	return false
}

// IncidentEvent records one transition of an incident, or a monitor event
// (IncidentID empty), that must be delivered to the monitor's channels. It is written in the transaction
// that makes the transition.
type IncidentEvent struct {
	ID         int64
	IncidentID string
	MonitorID  string
	ProjectID  string
	Kind       IncidentEventKind
	At         time.Time
	Summary    string
}
