package manage

import (
	"context"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// Snooze is a person's snooze of one monitor: for Seconds from now, or
// until Until; exactly one of them.
type Snooze struct {
	Seconds *int64
	Until   *time.Time
}

// End returns when the snooze ends, as of now, after checking it: exactly
// one of seconds and until, positive or in the future, and at most
// monitors.SnoozeMax away. Errors are *monitors.ValidationError naming the
// field.
func (z *Snooze) End(now time.Time) (time.Time, error) {
	switch {
	case z.Seconds != nil && z.Until != nil:
		return time.Time{}, &monitors.ValidationError{Field: "seconds", Message: "give seconds or until, not both"}
	case z.Seconds != nil:
		max := int64(monitors.SnoozeMax / time.Second)
		if *z.Seconds < 1 || *z.Seconds > max {
			return time.Time{}, &monitors.ValidationError{Field: "seconds", Message: fmt.Sprintf("must be between 1 and %d (%s)", max, monitors.FormatDuration(monitors.SnoozeMax))}
		}
		return now.Add(time.Duration(*z.Seconds) * time.Second), nil
	case z.Until != nil:
		if err := monitors.ValidateSnoozeUntil("until", *z.Until, now); err != nil {
			return time.Time{}, err
		}
		return *z.Until, nil
	}
	return time.Time{}, &monitors.ValidationError{Field: "seconds", Message: "give seconds (how long) or until (an RFC 3339 time)"}
}

// MonitorSnooze snoozes a monitor (see monitors.Snooze): the incidents it
// opens are shown, and notified only if still open when the snooze ends.
// A snooze replaces the one in force.
func (s *Service) MonitorSnooze(ctx context.Context, projectID, id string, z *Snooze) (*monitors.Monitor, error) {
	now := s.now()
	until, err := z.End(now)
	if err != nil {
		return nil, err
	}
	m, _, err := s.store.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: projectID, ID: id,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			m.UpdatedAt = now
			tr, err := monitors.Snooze(m, until, now)
			return tr, pf, err
		}})
	return m, err
}

// MonitorUnsnooze ends a monitor's snooze now: an incident it held that
// is still open is notified now. A monitor not snoozed is left as it is.
func (s *Service) MonitorUnsnooze(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	now := s.now()
	m, _, err := s.store.MonitorPatch(ctx, &monitors.MonitorPatchParams{ProjectID: projectID, ID: id,
		Fn: func(m *monitors.Monitor, pf []string) (*monitors.Transition, []string, error) {
			if m.SnoozedUntil == nil {
				return nil, pf, nil
			}
			m.UpdatedAt = now
			tr, err := monitors.Unsnooze(m, now)
			return tr, pf, err
		}})
	return m, err
}
