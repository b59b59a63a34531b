package monitors

import (
	"errors"
	"fmt"
	"strings"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vigilhq/vigil/monitors/cron"
	"github.com/vigilhq/vigil/monitors/cron/quartz"
	"github.com/vigilhq/vigil/monitors/oncalendar"
)

// Schedule computes a monitor's occurrences.
type Schedule interface {
	// Next returns the first occurrence strictly after t, or the zero time
	// when there is none.
	Next(t time.Time) time.Time
	// Prev returns the last occurrence strictly before t, or the zero time
	// when there is none or it cannot be known (interval schedules).
	Prev(t time.Time) time.Time
	// Location is the zone occurrences are computed and shown in.
	Location() *time.Location
}

// Interval is a schedule that expects a ping every Every after the last one.
type Interval struct{ Every time.Duration }

// Next returns t + Every.
func (s Interval) Next(t time.Time) time.Time { return t.Add(s.Every) }

// Prev returns the zero time: interval occurrences depend on pings.
func (s Interval) Prev(time.Time) time.Time { return time.Time{} }

// Location returns UTC.
func (s Interval) Location() *time.Location { return time.UTC }

// CronSchedule is a cron expression in a time zone, with cronie's rules
// for daylight saving time (see package cron).
type CronSchedule struct {
	expr *cron.Expr
	loc  *time.Location
}

// Next returns the first fire time strictly after t.
func (s *CronSchedule) Next(t time.Time) time.Time { return s.expr.Next(t, s.loc) }

// Prev returns the last fire time strictly before t.
func (s *CronSchedule) Prev(t time.Time) time.Time { return s.expr.Prev(t, s.loc) }

// Location returns the schedule's zone.
func (s *CronSchedule) Location() *time.Location { return s.loc }

// Expr returns the parsed expression.
func (s *CronSchedule) Expr() *cron.Expr { return s.expr }

// Describe returns the schedule in plain words, with its zone.
func (s *CronSchedule) Describe() string { return s.expr.Describe() + " (" + s.loc.String() + ")" }

// Words returns the expression in plain words, without the zone.
func (s *CronSchedule) Words() string { return s.expr.Describe() }

// dialectExpr is an expression of the robfig or quartz dialect: its
// engine's fire times in a zone, and its words.
type dialectExpr interface {
	Next(t time.Time, loc *time.Location) time.Time
	Prev(t time.Time, loc *time.Location) time.Time
	Describe() string
}

// DialectSchedule is a cron expression of the robfig dialect (computed by
// robfig/cron itself) or the quartz dialect (package cron/quartz), in a
// time zone.
type DialectSchedule struct {
	expr    dialectExpr
	loc     *time.Location
	dialect Dialect
}

// Next returns the dialect's first fire time strictly after t.
func (s *DialectSchedule) Next(t time.Time) time.Time { return s.expr.Next(t, s.loc) }

// Prev returns the dialect's last fire time strictly before t.
func (s *DialectSchedule) Prev(t time.Time) time.Time { return s.expr.Prev(t, s.loc) }

// Location returns the schedule's zone: a CRON_TZ= prefix's, or tz's.
func (s *DialectSchedule) Location() *time.Location { return s.loc }

// Dialect returns the schedule's dialect.
func (s *DialectSchedule) Dialect() Dialect { return s.dialect }

// Words returns the expression in plain words, without the zone, or ""
// when there are none.
func (s *DialectSchedule) Words() string { return s.expr.Describe() }

// ScheduleWords returns a schedule's expression in plain words, without its
// zone, or "" when it has none (intervals, and expressions the words
// cannot say).
func ScheduleWords(s Schedule) string {
	if w, ok := s.(interface{ Words() string }); ok {
		return w.Words()
	}
	return ""
}

// scheduleCheckFrom is where the never-fires check in a zone starts: any
// fixed instant works, as the search spans 50 years.
var scheduleCheckFrom = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// ScheduleCacheSize is how many parsed schedules ParseSchedule keeps: the
// distinct schedules of the monitors pinged or evaluated most recently.
// Monitors mostly share a few schedules; past this many, the least recently
// used one is parsed again when next needed.
const ScheduleCacheSize = 10_000

// scheduleCache memoizes parseSchedule, a pure function called on every
// ping and every evaluation (time.LoadLocation alone reads a file each
// call), keeping the most recently used schedules. A Schedule is immutable,
// so one value serves every caller.
type scheduleCache struct {
	lru *lru.Cache[ScheduleSpec, Schedule]
}

func newScheduleCache(size int) *scheduleCache {
	c, err := lru.New[ScheduleSpec, Schedule](size)
	if err != nil {
		panic(fmt.Sprintf("schedule cache of %d: %v", size, err)) // size is a constant above 0
	}
	return &scheduleCache{lru: c}
}

// parse returns spec's Schedule, parsed once while it stays in the cache.
// Errors are not kept: a bad spec is reported each time.
func (c *scheduleCache) parse(spec ScheduleSpec) (Schedule, error) {
	if s, ok := c.lru.Get(spec); ok {
		return s, nil
	}
	s, err := parseSchedule(spec)
	if err != nil {
		return nil, err
	}
	c.lru.Add(spec, s)
	return s, nil
}

var schedules = newScheduleCache(ScheduleCacheSize)

// ParseSchedule validates spec and returns its Schedule. Errors are
// *ValidationError naming the schedule field at fault.
func ParseSchedule(spec ScheduleSpec) (Schedule, error) {
	if spec.Kind == ScheduleInterval {
		return parseSchedule(spec) // cheaper than a look-up; keeps the room for expressions
	}
	return schedules.parse(spec)
}

// ValidateSchedule is ParseSchedule for a schedule being saved: it also
// refuses expressions that parse but are known mistakes, such as a Quartz
// expression ("0 30 2 ? * 1#2", where 1 is Sunday) in the cronie dialect,
// which cronie would read with 1 as Monday. Schedules already stored are
// read with ParseSchedule, so that none of them stops being watched.
func ValidateSchedule(spec ScheduleSpec) (Schedule, error) {
	s, err := ParseSchedule(spec)
	if err != nil {
		return nil, err
	}
	d := Dialect(cmpOr(string(spec.Dialect), string(DialectCronie)))
	if spec.Kind == ScheduleCron && d == DialectCronie && strings.Contains(spec.Expr, "?") {
		return nil, invalid("schedule.expr", "%q: ? is not cronie syntax but Quartz's, where the day of week "+
			"counts 1 = Sunday; for a Quartz trigger set schedule.dialect to \"quartz\", otherwise write * for ?", spec.Expr)
	}
	return s, nil
}

func parseSchedule(spec ScheduleSpec) (Schedule, error) {
	switch spec.Kind {
	case ScheduleInterval:
		if spec.Expr != "" {
			return nil, invalid("schedule.expr", "is only for cron and oncalendar schedules")
		}
		if spec.EverySeconds < 1 || spec.EverySeconds > 366*24*3600 {
			return nil, invalid("schedule.every_seconds", "must be between 1 and %d", 366*24*3600)
		}
		return Interval{Every: time.Duration(spec.EverySeconds) * time.Second}, nil
	case ScheduleCron:
		if spec.EverySeconds != 0 {
			return nil, invalid("schedule.every_seconds", "is only for interval schedules")
		}
		loc, err := LoadLocation(spec.TZ)
		if err != nil {
			return nil, err
		}
		return parseCron(spec, loc)
	case ScheduleOnCalendar:
		return parseOnCalendar(spec)
	default:
		return nil, invalid("schedule.kind", "%q is not one of cron, interval, oncalendar", spec.Kind)
	}
}

// parseCron reads a cron schedule in its dialect.
func parseCron(spec ScheduleSpec, loc *time.Location) (Schedule, error) {
	dialect := Dialect(cmpOr(string(spec.Dialect), string(DialectCronie)))
	var sched Schedule
	switch dialect {
	case DialectCronie:
		e, err := cron.Parse(spec.Expr)
		if err != nil {
			return nil, invalid("schedule.expr", "%s%s", err, dialectHint(spec.Expr, dialect))
		}
		sched = &CronSchedule{expr: e, loc: loc}
	case DialectRobfig:
		e, err := cron.ParseRobfig(spec.Expr)
		if err != nil {
			return nil, invalid("schedule.expr", "%s%s", err, dialectHint(spec.Expr, dialect))
		}
		if every, ok := e.Every(); ok {
			if every < time.Second || every > 366*24*time.Hour {
				return nil, invalid("schedule.expr", "@every must be between 1s and 366 days")
			}
			return Interval{Every: every}, nil
		}
		if z := e.Zone(); z != nil {
			loc = z
		}
		sched = &DialectSchedule{expr: e, loc: loc, dialect: dialect}
	case DialectQuartz:
		e, err := quartz.Parse(spec.Expr)
		if err != nil {
			return nil, invalid("schedule.expr", "%s%s", err, dialectHint(spec.Expr, dialect))
		}
		sched = &DialectSchedule{expr: e, loc: loc, dialect: dialect}
	default:
		return nil, invalid("schedule.dialect", "%q is not one of cronie, robfig, quartz", spec.Dialect)
	}
	// Parse refuses what never fires anywhere; an expression whose every
	// fire time falls in this zone's daylight saving gaps is refused here.
	if sched.Next(scheduleCheckFrom).IsZero() {
		return nil, invalid("schedule.expr", "%q never fires in %s", spec.Expr, loc)
	}
	return sched, nil
}

// dialectHint names the dialects other than d in which expr is valid, as
// the end of an error message.
func dialectHint(expr string, d Dialect) string {
	var ok []string
	for _, o := range []Dialect{DialectCronie, DialectRobfig, DialectQuartz} {
		if o != d && validIn(expr, o) {
			ok = append(ok, string(o))
		}
	}
	switch len(ok) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" (in the %s dialect; it is valid in the %s dialect: set schedule.dialect to %q)", d, ok[0], ok[0])
	}
	return fmt.Sprintf(" (in the %s dialect; it is valid in the %s dialects: set schedule.dialect to one of them)", d, strings.Join(ok, " and "))
}

func validIn(expr string, d Dialect) bool {
	var err error
	switch d {
	case DialectCronie:
		_, err = cron.Parse(expr)
	case DialectRobfig:
		_, err = cron.ParseRobfig(expr)
	case DialectQuartz:
		_, err = quartz.Parse(expr)
	default:
		return false
	}
	return err == nil
}

// OnCalendarSchedule is a systemd calendar expression with systemd's
// rules for daylight saving time (see package oncalendar). A zone named in
// the expression wins over the schedule's tz.
type OnCalendarSchedule struct{ *oncalendar.Expr }

// Words returns the schedule in plain words, without its zone.
func (s OnCalendarSchedule) Words() string {
	d := s.Expr.Describe()
	if i := strings.LastIndex(d, " ("); i >= 0 && strings.HasSuffix(d, ")") { // the zone the expression names
		return d[:i]
	}
	return d
}

// Describe returns the schedule in plain words, with its zone.
func (s OnCalendarSchedule) Describe() string {
	d := s.Expr.Describe()
	if strings.HasSuffix(d, ")") { // the expression names its zone
		return d
	}
	return d + " (" + s.Location().String() + ")"
}

func parseOnCalendar(spec ScheduleSpec) (Schedule, error) {
	if spec.EverySeconds != 0 {
		return nil, invalid("schedule.every_seconds", "is only for interval schedules")
	}
	if spec.Dialect != "" {
		return nil, invalid("schedule.dialect", "is only for cron schedules (an oncalendar schedule is read as systemd reads it)")
	}
	loc, err := LoadLocation(spec.TZ)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(spec.Expr) == "" {
		return nil, invalid("schedule.expr", "is required for oncalendar schedules (a systemd calendar expression such as \"Mon..Fri 02:30\")")
	}
	e, err := oncalendar.Parse(spec.Expr, loc)
	if err != nil {
		var pe *oncalendar.Error
		if errors.As(err, &pe) {
			return nil, invalid("schedule.expr", "%q is not a systemd calendar expression: %s", spec.Expr, pe.Reason)
		}
		return nil, invalid("schedule.expr", "%s", err)
	}
	if e.SystemdNext(scheduleCheckFrom).IsZero() {
		return nil, invalid("schedule.expr", "%q never elapses after %s", spec.Expr, scheduleCheckFrom.Format("2006-01-02"))
	}
	return OnCalendarSchedule{e}, nil
}

// LoadLocation loads an IANA zone; "" is UTC.
func LoadLocation(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "Local" {
		return nil, invalid("schedule.tz", "unknown time zone %q (use an IANA name such as Europe/Berlin)", tz)
	}
	return loc, nil
}

// Describe returns the schedule in short words for messages, such as
// "0 2 * * * (Europe/Berlin)", "0 0 2 * * * (UTC, robfig)", "every 1h" or
// "OnCalendar=Mon..Fri 02:30 (at 02:30 on Monday to Friday, Europe/Berlin)".
func (spec ScheduleSpec) Describe() string {
	if spec.Kind == ScheduleInterval {
		return "every " + FormatDuration(time.Duration(spec.EverySeconds)*time.Second)
	}
	if spec.Kind == ScheduleOnCalendar {
		if s, err := ParseSchedule(spec); err == nil {
			oc := s.(OnCalendarSchedule)
			return fmt.Sprintf("OnCalendar=%s (%s, %s)", spec.Expr, oc.Expr.Describe(), oc.Location())
		}
		return fmt.Sprintf("OnCalendar=%s (%s)", spec.Expr, cmpOr(spec.TZ, "UTC"))
	}
	if spec.Dialect != "" && spec.Dialect != DialectCronie {
		return fmt.Sprintf("%s (%s, %s)", spec.Expr, cmpOr(spec.TZ, "UTC"), spec.Dialect)
	}
	return fmt.Sprintf("%s (%s)", spec.Expr, cmpOr(spec.TZ, "UTC"))
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// FormatDuration formats d briefly: "45s", "5m", "1h30m", "2d3h".
func FormatDuration(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	d = d.Round(time.Second)
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	h := d / time.Hour
	d -= h * time.Hour
	m := d / time.Minute
	d -= m * time.Minute
	s := d / time.Second
	out := ""
	if days > 0 {
		out += fmt.Sprintf("%dd", days)
	}
	if h > 0 {
		out += fmt.Sprintf("%dh", h)
	}
	if m > 0 && days == 0 {
		out += fmt.Sprintf("%dm", m)
	}
	if s > 0 && days == 0 && h == 0 {
		out += fmt.Sprintf("%ds", s)
	}
	if out == "" {
		out = "0s"
	}
	return out
}
