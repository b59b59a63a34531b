package api

import (
	"encoding/json"
	"time"
)

// The JSON bodies of the API. The OpenAPI document is generated from these
// types, and requests are decoded into them, so the two cannot disagree.
// Struct tags beyond json: doc is a field's description, enum its allowed
// values, required marks a field a request must have.

// Schedule is when a monitor expects its job (PROTOCOL.md §2).
type Schedule struct {
	Kind         string `json:"kind" enum:"cron,interval,oncalendar" required:"true"`
	Expr         string `json:"expr,omitempty" doc:"cron: 5 fields, 6 with seconds first, or a descriptor such as @hourly; oncalendar: a systemd calendar expression such as Mon..Fri 02:30"`
	TZ           string `json:"tz,omitempty" doc:"cron and oncalendar: an IANA time zone (default UTC); a zone named at the end of an oncalendar expr wins"`
	EverySeconds int64  `json:"every_seconds,omitempty" doc:"interval: seconds expected between pings"`
	Dialect      string `json:"dialect,omitempty" enum:"cronie,robfig,quartz" doc:"cron: whose reading of expr, syntax and daylight saving behaviour, to follow (default cronie)"`
}

// RetryPolicy is what a job's scheduler does after a failed attempt.
type RetryPolicy struct {
	Name             string  `json:"name,omitempty" doc:"the policy's name, such as hangfire-default"`
	MaxRetries       int     `json:"max_retries" doc:"retries after the first execution"`
	MaxDelaysSeconds []int64 `json:"max_delays_seconds" doc:"the longest wait before retry 1, 2, …; the last one repeats for further retries"`
}

// PingURLs are every form of a monitor's ping URL (PROTOCOL.md §1).
type PingURLs struct {
	ByKey  string `json:"by_key" doc:"/ping/{ping_key}: a success; add /start, /fail, /log, /skip, /cancel or /{exit-status}"`
	BySlug string `json:"by_slug" doc:"/ping/{project-ping-key}/{slug}, with the same suffixes"`
	Start  string `json:"start"`
	Fail   string `json:"fail"`
	Log    string `json:"log"`
	Skip   string `json:"skip"`
	Cancel string `json:"cancel"`
}

// OpenIncident is an incident a monitor has open.
type OpenIncident struct {
	Kind     string    `json:"kind" enum:"missed,failed,stuck,deadline,overlap,too_fast,early,too_often"`
	OpenedAt time.Time `json:"opened_at"`
	State    string    `json:"state" enum:"open,suppressed" doc:"suppressed: opened while a monitor it depends on had an open incident; not notified until that one resolves"`
	Held     bool      `json:"held" doc:"its notification is held: suppressed, or opened while the monitor was snoozed; sent when the hold ends if it is still open"`
}

// BadgeURLs are a badge's URLs: an SVG image and shields.io endpoint JSON.
type BadgeURLs struct {
	SVG  string `json:"svg"`
	JSON string `json:"json"`
}

// Monitor is a monitor as the API returns it.
type Monitor struct {
	ID                 string         `json:"id"`
	Name               string         `json:"name"`
	Slug               string         `json:"slug"`
	Description        string         `json:"description"`
	Tags               []string       `json:"tags"`
	Schedule           Schedule       `json:"schedule"`
	GraceSeconds       int64          `json:"grace_seconds"`
	MaxRuntimeSeconds  int64          `json:"max_runtime_seconds" doc:"0: same as grace_seconds"`
	DeadlineSeconds    int64          `json:"deadline_seconds" doc:"0: no deadline"`
	AlertOnFailure     string         `json:"alert_on_failure" enum:"final,every_attempt,never"`
	FailureThreshold   int            `json:"failure_threshold"`
	RecoveryThreshold  int            `json:"recovery_threshold"`
	Overlap            string         `json:"overlap" enum:"alert,ignore"`
	MinRuntimeSeconds  int64          `json:"min_runtime_seconds" doc:"0: off; a run that succeeds in less opens a too_fast incident (judged when its duration is known: a start ping, or duration_ms)"`
	EarlySeconds       int64          `json:"early_seconds" doc:"0: off; cron and oncalendar only: a run that starts more than this before its occurrence opens an early incident"`
	TooOften           string         `json:"too_often" enum:"ignore,alert" doc:"alert: a second success for one occurrence (cron, oncalendar), or a run started less than half the interval after the one before (interval), opens a too_often incident; retries never count"`
	Channels           []string       `json:"channels" doc:"channel IDs; empty: the project's default channels"`
	RetryPolicy        *RetryPolicy   `json:"retry_policy"`
	NotifyOutput       bool           `json:"notify_output" doc:"notifications of a failure carry the tail of the run's output (the failing ping's body)"`
	Status             string         `json:"status" enum:"new,up,running,late,retrying,down,paused,undeclared"`
	Paused             bool           `json:"paused"`
	Source             string         `json:"source" doc:"the source that declares it; empty when a person made it"`
	Discovered         bool           `json:"discovered" doc:"still declared by its source"`
	PingKey            string         `json:"ping_key" doc:"empty for a read-only API key"`
	PingURL            string         `json:"ping_url" doc:"empty for a read-only API key"`
	PingURLs           PingURLs       `json:"ping_urls" doc:"empty for a read-only API key"`
	UniqueKey          string         `json:"unique_key" doc:"a stable identifier that is no secret (40 hex characters), for every key; read-only keys get it in place of the ping key, as Healthchecks.io's unique_key"`
	LastPingAt         *time.Time     `json:"last_ping_at"`
	NextExpectedAt     *time.Time     `json:"next_expected_at" doc:"the next occurrence not yet covered by a ping; null while new or paused"`
	OpenIncidents      []OpenIncident `json:"open_incidents"`
	PersonFields       []string       `json:"person_fields" doc:"fields a person set through the API; a declaration of the source leaves them alone"`
	OverriddenFields   []string       `json:"overridden_fields,omitempty" doc:"in a declaration's answer: declared fields whose value a person's setting overrides"`
	RetryChainSeconds  *int64         `json:"retry_chain_seconds" doc:"the longest time the retries of one run may take (the sum of the retry policy's delays); null without a retry policy"`
	Warnings           []string       `json:"warnings" doc:"advice about settings that will page falsely or stay silent, each \"field: what goes wrong\": retries that outlast the gap between runs (retry_policy) or the deadline (deadline_seconds), a grace at least the gap between runs (grace_seconds), an early_seconds of half that gap or more (early_seconds)"`
	Badge              BadgeURLs      `json:"badge"`
	InMaintenance      bool           `json:"in_maintenance" doc:"a maintenance window covers the monitor now: no incident opens for it"`
	InMaintenanceUntil *time.Time     `json:"in_maintenance_until" doc:"when the maintenance that covers it now ends; null when none does"`
	DependsOn          []string       `json:"depends_on" doc:"IDs of the monitors of the project it depends on: while one of them has an open incident, this monitor's new incidents open suppressed"`
	SnoozedUntil       *time.Time     `json:"snoozed_until" doc:"while in the future, the incidents it opens are shown but not notified; one still open when the snooze ends is notified then (POST/DELETE .../snooze); null when not snoozed"`
	FlappingSince      *time.Time     `json:"flapping_since" doc:"when the monitor began flapping (more than 3 incidents opened and resolved within an hour): its incidents are recorded but not notified until none opens for an hour; null when it is not flapping"`
	CreatedAt          time.Time      `json:"created_at"`
	UpdatedAt          time.Time      `json:"updated_at"`
}

// MaintenanceWindow is a maintenance window: planned work during which the
// monitors it covers open no incident (their pings are still recorded and
// judged), each getting a fresh grace window when it ends.
type MaintenanceWindow struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Monitors        []string   `json:"monitors" doc:"IDs of the monitors it covers"`
	Tags            []string   `json:"tags" doc:"it covers the monitors with any of these tags"`
	All             bool       `json:"all" doc:"it covers every monitor of the project"`
	StartsAt        *time.Time `json:"starts_at" doc:"a single window's start; null for a recurring one"`
	EndsAt          *time.Time `json:"ends_at" doc:"a single window's end; null for a recurring one"`
	Schedule        *string    `json:"schedule" doc:"a recurring window's starts: a cron expression (cronie's reading) or a systemd OnCalendar expression; null for a single window"`
	TZ              *string    `json:"tz" doc:"the zone of schedule (default UTC)"`
	DurationSeconds int64      `json:"duration_seconds" doc:"how long each occurrence of a recurring window lasts"`
	EndedAt         *time.Time `json:"ended_at" doc:"when it was ended early (POST /end): a single window is over; a recurring one's occurrence then under way ends, later ones come as planned"`
	Active          bool       `json:"active" doc:"in effect now"`
	ActiveUntil     *time.Time `json:"active_until" doc:"when the period in effect now ends; null when none is"`
	NextStartsAt    *time.Time `json:"next_starts_at" doc:"when a period begins next; null when none will"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

// MaintenanceWindowFields are what a person sets of a window. In a PATCH,
// a field left out keeps its value.
type MaintenanceWindowFields struct {
	Name            *string    `json:"name,omitempty"`
	Monitors        *[]string  `json:"monitors,omitempty" doc:"IDs of monitors of the project"`
	Tags            *[]string  `json:"tags,omitempty"`
	All             *bool      `json:"all,omitempty"`
	StartsAt        *time.Time `json:"starts_at,omitempty" doc:"RFC 3339; with ends_at, for a single window"`
	EndsAt          *time.Time `json:"ends_at,omitempty"`
	Schedule        *string    `json:"schedule,omitempty" doc:"cron or OnCalendar, with duration_seconds, for a recurring window"`
	TZ              *string    `json:"tz,omitempty" doc:"default UTC"`
	DurationSeconds *int64     `json:"duration_seconds,omitempty"`
}

// MaintenanceWindowList is a list of windows.
type MaintenanceWindowList struct {
	MaintenanceWindows []MaintenanceWindow `json:"maintenance_windows"`
}

// MonitorFields are the configuration fields a person or a source sets.
// In a PATCH, a field left out keeps its value.
type MonitorFields struct {
	Name              *string      `json:"name,omitempty" doc:"default: the slug"`
	Slug              *string      `json:"slug,omitempty" doc:"a-z, 0-9, - and _; default: made from the name"`
	Description       *string      `json:"description,omitempty" doc:"free text for people: what the job does, whom to call (Healthchecks.io's desc)"`
	Tags              *[]string    `json:"tags,omitempty"`
	Schedule          *Schedule    `json:"schedule,omitempty" doc:"default: an interval of one day"`
	GraceSeconds      *int64       `json:"grace_seconds,omitempty" doc:"default 300"`
	MaxRuntimeSeconds *int64       `json:"max_runtime_seconds,omitempty"`
	DeadlineSeconds   *int64       `json:"deadline_seconds,omitempty"`
	AlertOnFailure    *string      `json:"alert_on_failure,omitempty" enum:"final,every_attempt,never"`
	FailureThreshold  *int         `json:"failure_threshold,omitempty"`
	RecoveryThreshold *int         `json:"recovery_threshold,omitempty"`
	Overlap           *string      `json:"overlap,omitempty" enum:"alert,ignore"`
	MinRuntimeSeconds *int64       `json:"min_runtime_seconds,omitempty" doc:"default 0 (off); less than the max runtime"`
	EarlySeconds      *int64       `json:"early_seconds,omitempty" doc:"default 0 (off); refused on interval schedules"`
	TooOften          *string      `json:"too_often,omitempty" enum:"ignore,alert" doc:"default ignore"`
	Channels          *[]string    `json:"channels,omitempty" doc:"IDs of channels of the project"`
	RetryPolicy       *RetryPolicy `json:"retry_policy,omitempty" doc:"null in a PATCH removes it"`
	NotifyOutput      *bool        `json:"notify_output,omitempty" doc:"default true: notifications of a failure carry the tail of the run's output; false keeps it out"`
	DependsOn         *[]string    `json:"depends_on,omitempty" doc:"monitors of the project this one depends on, by ID (or slug, stored as its ID): while one of them has an open incident, this monitor's new incidents open suppressed under it and are notified only if still open when it resolves; no cycles"`
}

// MonitorSnooze is the body of POST /api/v1/monitors/{id}/snooze: seconds
// or until, not both.
type MonitorSnooze struct {
	Seconds *int64  `json:"seconds,omitempty" doc:"snooze for this long, from now: 1 to 604800 (7 days)"`
	Until   *string `json:"until,omitempty" doc:"snooze until this RFC 3339 time, at most 7 days ahead"`
}

// MonitorCreate is the body of POST /api/v1/monitors. Name or slug is
// required.
type MonitorCreate struct {
	MonitorFields
	Paused *bool `json:"paused,omitempty"`
}

// MonitorUpdate is the body of PATCH /api/v1/monitors/{id}.
type MonitorUpdate struct {
	MonitorFields
	Paused *bool `json:"paused,omitempty" doc:"the same as POST .../pause or .../resume"`
	// Source hands the monitor to a source (or, empty, takes it back).
	Source *string `json:"source,omitempty" doc:"hand the monitor to a source, or \"\" to take it from its source"`
	// PersonFields replaces the list of fields a person set, before the
	// fields of this PATCH are added to it: [] hands every field back to
	// the source.
	PersonFields *[]string `json:"person_fields,omitempty" doc:"replaces the list before this PATCH's own fields are added; [] hands every field back to the source"`
}

// DeclaredMonitor is one monitor of a declaration; slug is required. A
// field left out takes its default.
type DeclaredMonitor struct {
	MonitorFields
}

// Declaration is the body of PUT /api/v1/sources/{source}/monitors.
type Declaration struct {
	Monitors []DeclaredMonitor `json:"monitors" required:"true" doc:"the complete set of the source's monitors, each keyed by slug"`
}

// DeclarationResult is the answer to a declaration.
type DeclarationResult struct {
	Monitors []Monitor `json:"monitors" doc:"the declared monitors, in the order declared"`
	// Undeclared are the source's monitors it no longer declares.
	Undeclared []Monitor `json:"undeclared" doc:"the source's monitors it no longer declares: status undeclared, not watched, history kept"`
}

// MonitorList is a page of monitors.
type MonitorList struct {
	Monitors []Monitor `json:"monitors"`
	Next     *string   `json:"next" doc:"the path and query of the next page; null on the last"`
}

// Ping is one received ping.
type Ping struct {
	ID            int64      `json:"id"`
	Kind          string     `json:"kind" enum:"start,success,fail,log,skip,cancel"`
	At            time.Time  `json:"at"`
	RID           string     `json:"rid"`
	Attempt       int        `json:"attempt" doc:"0: not given"`
	RetryAt       *time.Time `json:"retry_at"`
	ScheduledAt   *time.Time `json:"scheduled_at" doc:"the scheduled fire time of the occurrence the run belongs to (the ping's scheduled_at); null when not given"`
	ExitCode      *int       `json:"exit_code"`
	DurationMS    *int64     `json:"duration_ms"`
	Body          string     `json:"body"`
	BodyTruncated bool       `json:"body_truncated"`
	RemoteAddr    string     `json:"remote_addr"`
	UserAgent     string     `json:"user_agent"`
}

// PingList is a page of pings, newest first.
type PingList struct {
	Pings      []Ping  `json:"pings"`
	Next       *string `json:"next"`
	NextCursor *string `json:"next_cursor" doc:"pass as ?before= for the next page"`
}

// Run is one execution of a job.
type Run struct {
	Seq        int64      `json:"seq"`
	RID        string     `json:"rid"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Outcome    *string    `json:"outcome" enum:"success,fail,cancelled,skipped,abandoned" doc:"null while running"`
	DurationMS *int64     `json:"duration_ms"`
	Attempt    int        `json:"attempt"`
	ExitCode   *int       `json:"exit_code"`
	WillRetry  bool       `json:"will_retry"`
	Stuck      bool       `json:"stuck"`
}

// RunList is a page of runs, newest first.
type RunList struct {
	Runs       []Run   `json:"runs"`
	Next       *string `json:"next"`
	NextCursor *string `json:"next_cursor" doc:"pass as ?before= for the next page"`
}

// IncidentEvent is one transition of an incident.
type IncidentEvent struct {
	ID      int64     `json:"id"`
	Kind    string    `json:"kind" enum:"incident.opened,incident.updated,incident.reminder,incident.resolved"`
	At      time.Time `json:"at"`
	Summary string    `json:"summary"`
}

// Delivery is one attempt to deliver an incident event to a channel.
type Delivery struct {
	ID            string     `json:"id"`
	ChannelID     string     `json:"channel_id"`
	Event         string     `json:"event" doc:"the incident event kind delivered, such as incident.opened"`
	Attempt       int        `json:"attempt"`
	At            time.Time  `json:"at"`
	Outcome       string     `json:"outcome" doc:"pending, sent, retrying (failed, will try again) or failed (for good)"`
	StatusCode    int        `json:"status_code,omitempty" doc:"the receiver's HTTP status, when there was one"`
	Error         string     `json:"error,omitempty"`
	NextAttemptAt *time.Time `json:"next_attempt_at,omitempty"`
}

// IncidentMonitor names the monitor of an incident.
type IncidentMonitor struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Slug string `json:"slug"`
}

// Incident is an open or resolved condition of a monitor, with its events
// and delivery attempts, oldest first.
type Incident struct {
	ID             string          `json:"id"`
	Kind           string          `json:"kind" enum:"missed,failed,stuck,deadline,overlap,too_fast,early,too_often"`
	OpenedAt       time.Time       `json:"opened_at"`
	ResolvedAt     *time.Time      `json:"resolved_at"`
	Summary        string          `json:"summary"`
	ResolveSummary string          `json:"resolve_summary"`
	State          string          `json:"state" enum:"open,suppressed,resolved" doc:"suppressed: open, under the open incident of a monitor its monitor depends on (suppressed_by), and not notified until that one resolves"`
	Held           bool            `json:"held" doc:"its notification is held (suppressed, or opened while the monitor was snoozed); sent when the hold ends if still open"`
	SuppressedBy   *string         `json:"suppressed_by" doc:"the incident it opened suppressed under; kept once the suppression ends; null when never suppressed"`
	Monitor        IncidentMonitor `json:"monitor"`
	Events         []IncidentEvent `json:"events"`
	Deliveries     []Delivery      `json:"deliveries"`
	Notes          []IncidentNote  `json:"notes" doc:"notes people attached, oldest first; status pages show them"`
}

// IncidentNote is a short note a person attached to an incident, shown on
// the status pages that show its monitor and in their feeds.
type IncidentNote struct {
	ID         string    `json:"id"`
	IncidentID string    `json:"incident_id"`
	Body       string    `json:"body" doc:"plain text, at most 2000 characters; newlines kept"`
	CreatedAt  time.Time `json:"created_at"`
}

// IncidentNoteCreate is the body of POST /api/v1/incidents/{id}/notes.
type IncidentNoteCreate struct {
	Body *string `json:"body" doc:"plain text, 1 to 2000 characters, public: status pages show it to anyone"`
}

// IncidentNoteList lists an incident's notes, oldest first.
type IncidentNoteList struct {
	Notes []IncidentNote `json:"notes"`
}

// StatusPage is a public status page of the project. Its page, JSON and
// Atom feed (url, url.json, url/feed.atom) answer 404 until it is
// published.
type StatusPage struct {
	ID        string           `json:"id"`
	Slug      string           `json:"slug"`
	Title     string           `json:"title"`
	Published bool             `json:"published"`
	Items     []StatusPageItem `json:"items"`
	URL       string           `json:"url" doc:"the public page: /status/{slug}"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
}

// StatusPageItem is one monitor or one tag a page shows.
type StatusPageItem struct {
	Monitor string `json:"monitor,omitempty" doc:"a monitor's ID; or tag"`
	Tag     string `json:"tag,omitempty" doc:"every monitor with the tag, by name"`
	Name    string `json:"name,omitempty" doc:"the name the public sees: a monitor's in place of its own (used wherever it is shown), a tag's heading (default: the tag)"`
}

// StatusPageFields are what a person sets of a status page. In a PATCH, a
// field left out keeps its value.
type StatusPageFields struct {
	Slug      *string           `json:"slug,omitempty" doc:"1 to 64 of a-z, 0-9 and -, unique across projects; required on create"`
	Title     *string           `json:"title,omitempty" doc:"at most 200 characters; required on create"`
	Published *bool             `json:"published,omitempty" doc:"default false: the public page answers 404 until published"`
	Items     *[]StatusPageItem `json:"items,omitempty" doc:"what the page shows, in order (at most 200); a monitor shown once is not shown again"`
}

// StatusPageList lists the project's status pages, by slug.
type StatusPageList struct {
	StatusPages []StatusPage `json:"status_pages"`
}

// IncidentList is a page of incidents, newest first.
type IncidentList struct {
	Incidents []Incident `json:"incidents"`
	Next      *string    `json:"next"`
}

// Channel is an alert channel as the API returns it: its config without
// the kind's write-only secrets.
type Channel struct {
	ID           string          `json:"id"`
	Kind         string          `json:"kind" enum:"slack,email,webhook,pagerduty,discord,teams,opsgenie,telegram,ntfy"`
	Name         string          `json:"name"`
	Config       json.RawMessage `json:"config" doc:"the kind's config without its secrets (PROTOCOL.md §2)"`
	IsDefault    bool            `json:"is_default" doc:"used by monitors with no channels of their own"`
	NotifyLate   bool            `json:"notify_late" doc:"send a monitor.late warning when a monitor is halfway through its grace without a ping, before its missed incident; not for pagerduty and opsgenie"`
	GroupSeconds int             `json:"group_seconds" doc:"incidents of the project that open within this many seconds (0 to 600) of the first go out as one incidents.grouped message; 0 sends each alone; default 30 for slack, email, discord, teams, telegram and ntfy, 0 for webhook, pagerduty and opsgenie (which must keep 0)"`
	Report       string          `json:"report,omitempty" enum:"weekly,monthly" doc:"the channel gets a report of its project every week (the week that ended on Monday 00:00 UTC) or every month (ended on the 1st 00:00 UTC); absent: none. Email, slack and webhook channels only"`
	CreatedAt    time.Time       `json:"created_at"`
	UpdatedAt    time.Time       `json:"updated_at"`
	// SecretsForgotten is set by PATCH when its config changed where the
	// channel sends and left stored write-only keys out: they were
	// forgotten, not carried to the new destination.
	SecretsForgotten []string `json:"secrets_forgotten,omitempty" doc:"PATCH only: the write-only config keys forgotten because the config changed where the channel sends (its URL, channel, chat, region) without giving them again"`
}

// ChannelCreate is the body of POST /api/v1/channels.
type ChannelCreate struct {
	Kind         *string         `json:"kind,omitempty" enum:"slack,email,webhook,pagerduty,discord,teams,opsgenie,telegram,ntfy" required:"true"`
	Name         *string         `json:"name,omitempty" required:"true"`
	Config       json.RawMessage `json:"config,omitempty" required:"true" doc:"the kind's config, secrets included"`
	IsDefault    *bool           `json:"is_default,omitempty"`
	NotifyLate   *bool           `json:"notify_late,omitempty" doc:"default false"`
	GroupSeconds *int            `json:"group_seconds,omitempty" doc:"default: 30 for the chat and e-mail kinds, 0 for webhook, pagerduty and opsgenie"`
	Report       *string         `json:"report,omitempty" enum:"weekly,monthly" doc:"weekly or monthly reports of the project to this channel (email, slack and webhook only); leave out for none"`
}

// ChannelUpdate is the body of PATCH /api/v1/channels/{id}. A config
// replaces the stored one, except that a secret it leaves out keeps its
// stored value (set it to null to remove it), unless the config changes
// where the channel sends: then the secrets it leaves out are forgotten.
type ChannelUpdate struct {
	Name         *string         `json:"name,omitempty"`
	Config       json.RawMessage `json:"config,omitempty" doc:"replaces the stored config; write-only keys left out keep their stored value unless this config changes where the channel sends (url, webhook_url, channel, chat_id, region, to), when they are forgotten"`
	IsDefault    *bool           `json:"is_default,omitempty"`
	NotifyLate   *bool           `json:"notify_late,omitempty"`
	GroupSeconds *int            `json:"group_seconds,omitempty"`
	Report       *string         `json:"report,omitempty" enum:"weekly,monthly" nullable:"true" doc:"weekly or monthly reports of the project to this channel; null stops them"`
}

// ChannelList is a page of channels, by name.
type ChannelList struct {
	Channels []Channel `json:"channels"`
	Next     *string   `json:"next"`
}

// ChannelTestResult is the answer to a successful test notification.
type ChannelTestResult struct {
	OK bool `json:"ok"`
}

// Project is the project of the API key.
type Project struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	PingKey string `json:"ping_key" doc:"the project ping key, for /ping/{ping_key}/{slug}; empty for a read-only API key"`
	// Badges are the badge URLs of all the project's monitors ("*") and of
	// each tag in use.
	Badges    map[string]BadgeURLs `json:"badges" doc:"badge URLs by tag; \"*\" is every monitor of the project"`
	CreatedAt time.Time            `json:"created_at"`
}

// Error is the body of every error answer.
type Error struct {
	Error string `json:"error" doc:"what is wrong, starting with the field at fault"`
	Field string `json:"field,omitempty" doc:"the field at fault, as a path such as schedule.expr or monitors[2].slug"`
}
