package monitors

import (
	"errors"
	"fmt"
	"time"
)

// ErrLimit is matched by a [*LimitError].
var ErrLimit = errors.New("monitors: limit reached")

// LimitError is returned by the store methods that create monitors when
// the project has as many as the operator allows
// (VIGIL_MAX_MONITORS_PER_PROJECT). Nothing of the write is stored. It
// matches ErrLimit.
type LimitError struct {
	ProjectID string
	// Limit is the most monitors a project may have.
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("the project has reached its limit of %d monitors (VIGIL_MAX_MONITORS_PER_PROJECT): delete monitors, or ask the operator to raise the limit", e.Limit)
}

// Unwrap makes the error match ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// MaxMonitorsPerProjectDefault is the default of
// VIGIL_MAX_MONITORS_PER_PROJECT.
const MaxMonitorsPerProjectDefault = 10_000

// UserSetDisabledParams are the inputs of [Store.UserSetDisabled].
type UserSetDisabledParams struct {
	ID string
	// DisabledAt disables the user from then on; nil enables them.
	DisabledAt *time.Time
}

// UserSetPasswordParams are the inputs of [Store.UserSetPassword].
type UserSetPasswordParams struct {
	ID           string
	PasswordHash string
	// KeepSessionID is the one session of the user that stays signed in
	// (the one that changed the password); "" ends them all.
	KeepSessionID string
}

// SessionDeleteByUserParams are the inputs of [Store.SessionDeleteByUser].
type SessionDeleteByUserParams struct {
	UserID string
	// ExceptID is a session kept; "" ends them all.
	ExceptID string
}

// PingKeyRotateParams are the inputs of [Store.MonitorRotatePingKey] and
// [Store.ProjectRotatePingKey].
type PingKeyRotateParams struct {
	ProjectID string
	// ID is the monitor's; unused for a project.
	ID string
	// PingKey is the new key. A key in use is ErrConflict.
	PingKey string
	Now     time.Time
}

// APIKeyTouchParams are the inputs of [Store.APIKeyTouch].
type APIKeyTouchParams struct {
	ID string
	At time.Time
}

// IncidentPruneParams are the inputs of [Store.IncidentPrune].
type IncidentPruneParams struct {
	// ResolvedBefore: incidents resolved before it go, with their events,
	// deliveries and attempts. Open incidents are never pruned, nor those
	// with a delivery still pending.
	ResolvedBefore time.Time
	// BatchSize is how many incidents one statement deletes; 0 or less is
	// IncidentPruneBatchDefault.
	BatchSize int
}

// IncidentPruneBatchDefault is the incidents deleted per statement by
// [Store.IncidentPrune].
const IncidentPruneBatchDefault = 500
