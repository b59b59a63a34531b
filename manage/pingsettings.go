package manage

import (
	"errors"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// PingSettings are the settings a ping by slug carries with create=1 or
// update=1 (PROTOCOL.md §1 and §6): schedule, tz, dialect, every, grace and
// max_runtime. A nil field was not given. They are the API's settings under
// other names, set and validated as the API sets and validates them
// (ScheduleSpec.WithDefaults, then Monitor.Validate), so a schedule the
// API refuses is refused from a ping too.
type PingSettings struct {
	Schedule *string // a cron expression (schedule.expr), as for kind cron
	TZ       *string // the IANA zone of Schedule (schedule.tz)
	Dialect  *string // cronie, robfig or quartz (schedule.dialect)
	// Every is an interval schedule's period in seconds
	// (schedule.every_seconds).
	Every      *int64
	Grace      *int64 // grace_seconds
	MaxRuntime *int64 // max_runtime_seconds
}

// IsZero reports whether no setting was given.
func (s *PingSettings) IsZero() bool { return s == nil || *s == PingSettings{} }

// pingParams maps the fields of the API's validation errors to the ping
// parameters that set them.
var pingParams = map[string]string{
	"schedule.expr":          "schedule",
	"schedule.kind":          "schedule",
	"schedule.tz":            "tz",
	"schedule.dialect":       "dialect",
	"schedule.every_seconds": "every",
	"grace_seconds":          "grace",
	"max_runtime_seconds":    "max_runtime",
}

// Check reports settings that do not go together: schedule with every, and
// tz or dialect without schedule. The error is a *monitors.ValidationError
// naming the ping parameter.
func (s *PingSettings) Check() error {
	switch {
	case s.Schedule != nil && s.Every != nil:
		return &monitors.ValidationError{Field: "every", Message: "give schedule (a cron expression) or every (seconds), not both"}
	case s.Schedule == nil && s.TZ != nil:
		return &monitors.ValidationError{Field: "tz", Message: "tz is the time zone of schedule: give schedule too"}
	case s.Schedule == nil && s.Dialect != nil:
		return &monitors.ValidationError{Field: "dialect", Message: "dialect says how schedule is read: give schedule too"}
	}
	return nil
}

// Apply sets the given settings on m and validates m, as the API does. It
// returns the names (of ConfigFields) of the settings set, so it can be a
// MonitorChange's Apply. Errors are *monitors.ValidationError naming the
// ping parameter at fault, such as "schedule" or "grace".
func (s *PingSettings) Apply(m *monitors.Monitor) ([]string, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	var set []string
	switch {
	case s.Schedule != nil:
		spec := monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: *s.Schedule}
		if s.TZ != nil {
			spec.TZ = *s.TZ
		}
		if s.Dialect != nil {
			spec.Dialect = monitors.Dialect(*s.Dialect)
		}
		m.Schedule = spec.WithDefaults()
		set = append(set, "schedule")
	case s.Every != nil:
		m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: *s.Every}.WithDefaults()
		set = append(set, "schedule")
	}
	if s.Grace != nil {
		m.GraceSeconds = *s.Grace
		set = append(set, "grace_seconds")
	}
	if s.MaxRuntime != nil {
		m.MaxRuntimeSeconds = *s.MaxRuntime
		set = append(set, "max_runtime_seconds")
	}
	if err := m.Validate(); err != nil {
		return nil, pingError(err)
	}
	return set, nil
}

// pingError renames the field of a validation error to the ping parameter
// that set it.
func pingError(err error) error {
	var ve *monitors.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	if p, ok := pingParams[ve.Field]; ok {
		return &monitors.ValidationError{Field: p, Message: ve.Message}
	}
	return fmt.Errorf("the monitor is not valid: %w", err)
}
