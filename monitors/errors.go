package monitors

import "errors"

var (
	// ErrNotFound is returned by [Store] methods when the row asked for does not
	// exist, or belongs to another project.
	ErrNotFound = errors.New("monitors: not found")
	// ErrConflict is returned by [Store] methods when a write would break a
	// uniqueness rule, such as a second monitor with the same slug in a project.
	ErrConflict = errors.New("monitors: conflict")
)

// ValidationError is returned when an input field is invalid. Field names the
// JSON field at fault, so the API can say which one.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// ConflictError is a write refused because of what is stored, such as a
// slug another monitor has. Field names the input at fault. It is an
// ErrConflict.
type ConflictError struct {
	Field   string
	Message string
}

func (e *ConflictError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

func (e *ConflictError) Unwrap() error { return ErrConflict }

// Conflictf returns a *ConflictError for field.
func Conflictf(field, format string, args ...any) error {
	return &ConflictError{Field: field, Message: sprintf(format, args...)}
}

// invalid returns a *ValidationError for field.
func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: sprintf(format, args...)}
}
