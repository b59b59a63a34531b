package sdk

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound is returned when Vigil answers 404: the ping key, project
	// ping key or slug is unknown (and create was not asked for).
	ErrNotFound = errors.New("vigil: not found")
	// ErrUnauthorized is returned when Vigil refuses the API key (401, 403).
	ErrUnauthorized = errors.New("vigil: unauthorized")
	// ErrBadRequest is returned when Vigil refuses a request as malformed
	// (400, 413, 422); the error text carries Vigil's sentence naming the bad
	// parameter.
	ErrBadRequest = errors.New("vigil: bad request")
	// ErrRateLimited is returned when Vigil still answered 429 after the
	// client's retries.
	ErrRateLimited = errors.New("vigil: rate limited")
	// ErrUnavailable is returned when Vigil could not be reached, timed out
	// or answered 5xx on every try.
	ErrUnavailable = errors.New("vigil: unavailable")
	// ErrInvalid is returned before any request is made, for arguments that
	// cannot be sent: an empty monitor, an unknown kind, an exit code outside
	// 0..255, a bad base URL.
	ErrInvalid = errors.New("vigil: invalid argument")
)

// invalidf returns an error wrapping [ErrInvalid].
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// permanentError marks a job error as not worth retrying.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as a failure that retrying cannot fix (bad input, a
// broken invariant): [Client.Run] reports it as a final failure at once, and
// [Client.RunWithRetries] does not retry it, whatever the retry policy says.
// errors.Is and errors.As still see err through the mark. Permanent(nil) is
// nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or any error it wraps, was marked with
// [Permanent].
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
