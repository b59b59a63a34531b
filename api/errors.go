package api

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/vigilhq/vigil/monitors"
)

// ErrTestUnavailable is returned by a [ChannelTester] that cannot send
// notifications on this server; the API answers 501.
var ErrTestUnavailable = errors.New("api: test notifications are not available on this server")

// apiError is an error with the status and field it is answered with.
type apiError struct {
	status int
	field  string
	msg    string
}

func (e *apiError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

// invalidf is a 400 naming field.
func invalidf(field, format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, field: field, msg: fmt.Sprintf(format, args...)}
}

// notFound is a 404 naming what was not found.
func notFound(what, id string) error {
	return &apiError{status: http.StatusNotFound, msg: fmt.Sprintf("%s %q not found", what, id)}
}

// conflictf is a 409 naming field.
func conflictf(field, format string, args ...any) error {
	return &apiError{status: http.StatusConflict, field: field, msg: fmt.Sprintf(format, args...)}
}

// writeError answers err as JSON {"error": ..., "field": ...}. Errors that
// are not the client's are logged and answered as "internal error".
func (h *Handler) writeError(c echo.Context, err error) error {
	status, body := http.StatusInternalServerError, Error{Error: "internal error"}
	var (
		ae   *apiError
		ve   *monitors.ValidationError
		he   *echo.HTTPError
		used *monitors.ChannelInUseError
		mass *monitors.MassUndeclareError
		lim  *monitors.LimitError
		ce   *monitors.ConflictError
	)
	switch {
	case errors.As(err, &ae):
		status, body = ae.status, Error{Error: ae.Error(), Field: ae.field}
	case errors.As(err, &ve):
		status, body = http.StatusBadRequest, Error{Error: ve.Error(), Field: ve.Field}
	case errors.As(err, &used):
		status, body = http.StatusConflict, Error{Error: fmt.Sprintf(
			"channel is used by monitors %s: remove it from their channels first", strings.Join(used.Monitors, ", "))}
	case errors.As(err, &mass):
		status, body = http.StatusConflict, Error{Error: mass.Error(), Field: "monitors"}
	case errors.As(err, &ce):
		status, body = http.StatusConflict, Error{Error: ce.Error(), Field: ce.Field}
	case errors.As(err, &lim):
		status, body = http.StatusConflict, Error{Error: lim.Error()}
	case errors.Is(err, monitors.ErrNotFound):
		status, body = http.StatusNotFound, Error{Error: "not found"}
	case errors.Is(err, monitors.ErrConflict):
		status, body = http.StatusConflict, Error{Error: "conflicts with an existing row"}
	case errors.As(err, &he):
		status = he.Code
		if m, ok := he.Message.(string); ok {
			body.Error = m
		} else {
			body.Error = strings.ToLower(http.StatusText(status))
		}
	}
	if status >= 500 {
		h.log.ErrorContext(c.Request().Context(), "api request failed", "method", c.Request().Method,
			"path", c.Request().URL.Path, "err", err)
	}
	if c.Request().Method == http.MethodHead {
		return c.NoContent(status)
	}
	return c.JSON(status, body)
}

var timeType = reflect.TypeFor[time.Time]()

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
