package monitors

import (
	"strings"
	"time"
)

// User is a person who signs in to the dashboard. A user sees only the
// projects they are a member of.
type User struct {
	ID    string
	Email string // lower case
	// PasswordHash is a bcrypt hash; the password itself is never stored.
	PasswordHash string
	CreatedAt    time.Time
	// DisabledAt is set while the user may not sign in.
	DisabledAt *time.Time
}

// Session is a signed-in browser. The browser holds a random token; the
// store keeps only its hash, so a copy of the database signs no one in.
type Session struct {
	ID        string
	UserID    string
	TokenHash string
	// CSRFToken is carried by every form and htmx request of the session.
	CSRFToken string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// NormalizeEmail returns the form in which an email address is stored and
// compared: trimmed, in lower case.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// UserCreateParams are the inputs of [Store.UserCreate].
type UserCreateParams struct {
	ID           string
	Email        string // normalized by the store
	PasswordHash string
	// ProjectIDs are the projects the user joins.
	ProjectIDs []string
	// OnlyFirst makes the creation fail with ErrConflict when any user
	// exists already: the first account, offered at first start, can be
	// made once, whatever races.
	OnlyFirst bool
	Now       time.Time
}

// ProjectMemberAddParams are the inputs of [Store.ProjectMemberAdd].
type ProjectMemberAddParams struct {
	ProjectID string
	UserID    string
	Now       time.Time
}

// ProjectRenameParams are the inputs of [Store.ProjectRename].
type ProjectRenameParams struct {
	ID   string
	Name string
}

// SessionCreateParams are the inputs of [Store.SessionCreate].
type SessionCreateParams struct {
	ID        string
	UserID    string
	TokenHash string
	CSRFToken string
	Now       time.Time
	ExpiresAt time.Time
}

// SessionGetParams are the inputs of [Store.SessionGet].
type SessionGetParams struct {
	TokenHash string
	// Now is compared with the session's expiry: an expired session is
	// ErrNotFound.
	Now time.Time
}

// RunListRecentParams are the inputs of [Store.RunListRecent].
type RunListRecentParams struct {
	ProjectID string
	// MonitorIDs are the monitors whose runs are wanted; monitors of other
	// projects are left out.
	MonitorIDs []string
	// PerMonitor is how many of the newest runs of each monitor to return.
	PerMonitor int
}

// MonitorPageParams are the inputs of [Store.MonitorListPage].
type MonitorPageParams struct {
	ProjectID string
	// Now is the time the statuses are judged at ([Monitor.StatusAt]).
	Now time.Time
	// Status keeps only the monitors with this status at Now; empty for
	// any.
	Status Status
	// Tag keeps only the monitors with this tag; empty for any.
	Tag string
	// Query keeps only the monitors whose name, slug or one of whose tags
	// contains it, in lower case and compared in lower case (Unicode, as
	// Go's strings.ToLower); empty for any.
	Query string
	// Limit and Offset cut the page out of the monitors that pass the
	// filters, in the list's order: ListRank of the status at Now, then
	// name, then ID. A Limit of 0 or less returns them all.
	Limit, Offset int
	// Known are monitors the caller holds, by ID, each with the version
	// of the row it was read from (a MonitorPage.Versions): a monitor of
	// the page whose row still has that version is not read again, and
	// the page holds the one given. Nil reads every row of the page.
	Known map[string]KnownMonitor
}

// KnownMonitor is a monitor as read from its row at Version (see
// [MonitorPageParams.Known]).
type KnownMonitor struct {
	Version string
	Monitor *Monitor
}

// MonitorPage is one page of a project's monitor list, as
// [Store.MonitorListPage] computes it without loading the other monitors.
type MonitorPage struct {
	// Total is how many monitors the project has; Counts counts them by
	// their status at Now (all of them, not only those that pass the
	// filters), and Tags are their distinct tags, sorted.
	Total  int
	Counts map[Status]int
	Tags   []string
	// Matched is how many monitors pass the filters.
	Matched int
	// Monitors are the page, in the list's order.
	Monitors []*Monitor
	// Versions[i] is the version of Monitors[i]'s row: it changes whenever
	// the row is written (a ping, the time, a person, a restore) or the
	// monitor's runs are, pruning included. Within one store, an equal
	// version means the same monitor and the same runs.
	Versions []string
	// LateAt is the earliest instant after Now at which a monitor of the
	// project turns late by time alone (its expected time); zero when
	// none would. Until then, and while MonitorListMarker does not change,
	// Counts, Matched and the page stay as they are.
	LateAt time.Time
}
