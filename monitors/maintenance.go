package monitors

import (
	"slices"
	"strings"
	"time"
)

// MaintenanceWindow is planned work during which the monitors it covers
// open no incident: their pings are still recorded and judged, and when
// the window ends each of them gets a fresh grace window before anything
// can be missed, by the rule that follows an outage of Vigil (see
// [TimeOptions] and [Hold]). An incident open when a window starts stays
// open.
//
// It covers the monitors named by ID, those with any of its tags, or, with
// All, every monitor of its project. Its period is one (StartsAt, EndsAt),
// or each occurrence of Schedule lasting DurationSeconds.
type MaintenanceWindow struct {
	ID        string    `json:"id"`
	ProjectID string    `json:"project_id"`
	Name      string    `json:"name"`
	Monitors  []string  `json:"monitors"`
	Tags      []string  `json:"tags"`
	All       bool      `json:"all"`
	StartsAt  time.Time `json:"starts_at,omitzero"`
	EndsAt    time.Time `json:"ends_at,omitzero"`
	// Schedule is a cron or OnCalendar expression; its zone is TZ.
	Schedule        *ScheduleSpec `json:"schedule,omitempty"`
	DurationSeconds int64         `json:"duration_seconds,omitempty"`
	// EndedAt is when a person ended the window early: a one-off window is
	// over then, and a recurring one's occurrence that had begun.
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// Period is a span of time, from Start (exclusive, as an outage's) to End.
type Period struct {
	Start, End time.Time
}

// Contains reports whether t is inside p: after Start, at or before End.
func (p Period) Contains(t time.Time) bool { return t.After(p.Start) && !t.After(p.End) }

// MaintenanceDurationMax bounds a window's length.
const MaintenanceDurationMax = 31 * 24 * time.Hour

// ParseMaintenanceSchedule reads a window's recurrence: a cron expression
// (cronie's reading) or, when it is none, a systemd OnCalendar expression,
// in the zone tz (UTC when empty).
func ParseMaintenanceSchedule(expr, tz string) (*ScheduleSpec, error) {
	expr = strings.TrimSpace(expr)
	if expr == "" {
		return nil, invalid("schedule", "must not be empty")
	}
	tz = cmpOr(tz, "UTC")
	if _, err := time.LoadLocation(tz); err != nil {
		return nil, invalid("tz", "%q is not a time zone of the IANA database", tz)
	}
	cron := ScheduleSpec{Kind: ScheduleCron, Expr: expr, TZ: tz, Dialect: DialectCronie}
	if _, err := ValidateSchedule(cron); err == nil {
		return &cron, nil
	}
	cal := ScheduleSpec{Kind: ScheduleOnCalendar, Expr: expr, TZ: tz}
	if _, err := ValidateSchedule(cal); err == nil {
		return &cal, nil
	}
	return nil, invalid("schedule", "%q is neither a cron expression nor an OnCalendar expression", expr)
}

// Validate checks the window; errors are *ValidationError naming the
// field.
func (w *MaintenanceWindow) Validate() error {
	w.Name = strings.TrimSpace(w.Name)
	if w.Name == "" {
		return invalid("name", "must not be empty")
	}
	if len(w.Name) > 200 {
		return invalid("name", "must be at most 200 characters")
	}
	if w.Monitors == nil {
		w.Monitors = []string{}
	}
	if w.Tags == nil {
		w.Tags = []string{}
	}
	if len(w.Monitors) > 1000 {
		return invalid("monitors", "must name at most 1000 monitors")
	}
	for _, id := range w.Monitors {
		if strings.TrimSpace(id) == "" {
			return invalid("monitors", "monitor IDs must not be empty")
		}
	}
	for _, t := range w.Tags {
		if t == "" || len(t) > 50 || strings.ContainsAny(t, " \t\r\n,") {
			return invalid("tags", "tag %q must be 1 to 50 characters without spaces or commas", t)
		}
	}
	if !w.All && len(w.Monitors) == 0 && len(w.Tags) == 0 {
		return invalid("monitors", "a window covers monitors (by ID), tags, or all: set one")
	}
	if w.All && (len(w.Monitors) > 0 || len(w.Tags) > 0) {
		return invalid("all", "covers every monitor: leave monitors and tags empty")
	}
	if w.Schedule != nil {
		if !w.StartsAt.IsZero() || !w.EndsAt.IsZero() {
			return invalid("schedule", "a recurring window has no starts_at or ends_at")
		}
		if w.Schedule.Kind != ScheduleCron && w.Schedule.Kind != ScheduleOnCalendar {
			return invalid("schedule", "must be a cron or OnCalendar expression")
		}
		if _, err := ValidateSchedule(*w.Schedule); err != nil {
			return invalid("schedule", "%v", err)
		}
		if w.DurationSeconds < 1 || time.Duration(w.DurationSeconds)*time.Second > MaintenanceDurationMax {
			return invalid("duration_seconds", "must be between 1 and %d", int64(MaintenanceDurationMax/time.Second))
		}
		return nil
	}
	if w.DurationSeconds != 0 {
		return invalid("duration_seconds", "is for recurring windows (with schedule); a single window has ends_at")
	}
	if w.StartsAt.IsZero() {
		return invalid("starts_at", "is required (or schedule, for a recurring window)")
	}
	if w.EndsAt.IsZero() {
		return invalid("ends_at", "is required")
	}
	if !w.EndsAt.After(w.StartsAt) {
		return invalid("ends_at", "must be after starts_at")
	}
	if w.EndsAt.Sub(w.StartsAt) > MaintenanceDurationMax {
		return invalid("ends_at", "a window lasts at most %s", FormatDuration(MaintenanceDurationMax))
	}
	return nil
}

// Covers reports whether the window applies to m.
func (w *MaintenanceWindow) Covers(m *Monitor) bool {
	if w.ProjectID != "" && w.ProjectID != m.ProjectID {
		return false
	}
	if w.All || slices.Contains(w.Monitors, m.ID) {
		return true
	}
	for _, t := range w.Tags {
		if slices.Contains(m.Tags, t) {
			return true
		}
	}
	return false
}

// PeriodAt returns the window's period that began last at or before now
// (for a recurring window, its latest occurrence), cut short where a
// person ended it; ok is false when none has begun.
func (w *MaintenanceWindow) PeriodAt(now time.Time) (p Period, ok bool) {
	if w.Schedule == nil {
		p = Period{Start: w.StartsAt, End: w.EndsAt}
	} else {
		sched, err := ParseSchedule(*w.Schedule)
		if err != nil {
			return Period{}, false
		}
		// The occurrence at now itself has begun.
		start := sched.Prev(now.Add(time.Second).Truncate(time.Second))
		if start.IsZero() {
			return Period{}, false
		}
		p = Period{Start: start, End: start.Add(time.Duration(w.DurationSeconds) * time.Second)}
	}
	if p.Start.After(now) {
		return Period{}, false
	}
	if e := w.EndedAt; e != nil && e.Before(p.End) {
		switch {
		case e.After(p.Start):
			p.End = *e
		case w.Schedule == nil:
			return Period{}, false
		}
		// A recurring window's later occurrences come as planned.
	}
	return p, true
}

// Active reports whether the window is in effect at now: its period has
// begun and not ended.
func (w *MaintenanceWindow) Active(now time.Time) bool {
	p, ok := w.PeriodAt(now)
	return ok && !now.Before(p.Start) && now.Before(p.End)
}

// MaintenanceOf returns the periods, begun at or before now, of the windows
// that cover m: what the state machine holds m's rules for (see
// [Monitor.Maintenance]).
func MaintenanceOf(ws []*MaintenanceWindow, m *Monitor, now time.Time) []Period {
	var out []Period
	for _, w := range ws {
		if !w.Covers(m) {
			continue
		}
		if p, ok := w.PeriodAt(now); ok {
			out = append(out, p)
		}
	}
	return out
}

// InMaintenanceUntil returns when the maintenance that covers m at now
// ends (the latest end of its active windows), or nil when none does.
func InMaintenanceUntil(ws []*MaintenanceWindow, m *Monitor, now time.Time) *time.Time {
	var until *time.Time
	for _, w := range ws {
		if !w.Covers(m) || !w.Active(now) {
			continue
		}
		p, _ := w.PeriodAt(now)
		if until == nil || p.End.After(*until) {
			e := p.End
			until = &e
		}
	}
	return until
}

// End ends the window at now: a single window is over (one not begun yet
// will not begin), and a recurring one's occurrence under way ends.
func (w *MaintenanceWindow) End(now time.Time) {
	now = now.UTC().Truncate(time.Microsecond)
	w.EndedAt, w.UpdatedAt = &now, now
}

// NextStart returns when a period of the window begins next after now, or
// nil when none will.
func (w *MaintenanceWindow) NextStart(now time.Time) *time.Time {
	if w.Schedule == nil {
		if w.StartsAt.After(now) && w.EndedAt == nil {
			s := w.StartsAt
			return &s
		}
		return nil
	}
	sched, err := ParseSchedule(*w.Schedule)
	if err != nil {
		return nil
	}
	if n := sched.Next(now); !n.IsZero() {
		return &n
	}
	return nil
}
