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

// invalid returns a *ValidationError for field.
func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: sprintf(format, args...)}
}
