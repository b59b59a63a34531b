package cron

import (
	"fmt"
	"strings"
	"time"

	rcron "github.com/robfig/cron/v3"
)

// robfigParser reads expressions as robfig/cron v3 does: five fields
// (cron.ParseStandard, what cron.New, River and Kubernetes use), or six
// with seconds first (cron.WithSeconds, gocron's withSeconds), descriptors
// including @every, and a CRON_TZ= or TZ= prefix.
var robfigParser = rcron.NewParser(rcron.SecondOptional | rcron.Minute | rcron.Hour | rcron.Dom |
	rcron.Month | rcron.Dow | rcron.Descriptor)

// Robfig is an expression read by robfig/cron v3, whose own
// Schedule.Next computes the fire times: robfig skips a wall time that the
// spring change skips and fires twice in a repeated hour. It is immutable.
type Robfig struct {
	src   string
	spec  *rcron.SpecSchedule // nil for @every
	every time.Duration
	zone  *time.Location // from CRON_TZ=, or nil
}

// ParseRobfig parses expr as robfig/cron v3 does. Errors are robfig's,
// prefixed with what was being read.
func ParseRobfig(expr string) (*Robfig, error) {
	s, err := robfigParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("robfig/cron: %w", err)
	}
	r := &Robfig{src: expr}
	switch s := s.(type) {
	case *rcron.SpecSchedule:
		r.spec = s
		if s.Location != time.Local {
			r.zone = s.Location
		}
		if s.Second == 0 || s.Minute == 0 || s.Hour == 0 || s.Dom == 0 || s.Month == 0 || s.Dow == 0 {
			return nil, fmt.Errorf("robfig/cron: %q has an empty field", expr)
		}
	case rcron.ConstantDelaySchedule:
		r.every = s.Delay
	default:
		return nil, fmt.Errorf("robfig/cron: %q: unexpected schedule %T", expr, s)
	}
	return r, nil
}

// String returns the expression as given.
func (r *Robfig) String() string { return r.src }

// Every returns the interval of an @every expression, which robfig counts
// from the previous run.
func (r *Robfig) Every() (time.Duration, bool) { return r.every, r.spec == nil }

// Zone returns the zone a CRON_TZ= or TZ= prefix names, or nil.
func (r *Robfig) Zone() *time.Location { return r.zone }

// Next returns the first fire time strictly after t of a robfig/cron
// scheduler that has been running for a while, in loc (the zone of a
// CRON_TZ= prefix wins), or the zero Time when there is none. See [Orbit]:
// robfig's SpecSchedule.Next alone can name a time the running scheduler
// steps over.
func (r *Robfig) Next(t time.Time, loc *time.Location) time.Time {
	if r.spec == nil {
		return r.constantDelay().Next(t)
	}
	return Orbit{NextFunc: r.nextFunc(loc)}.Next(t)
}

// Prev returns the last fire time strictly before t of a scheduler that
// has been running for a while, or the zero Time when there is none within
// [OrbitSpan].
func (r *Robfig) Prev(t time.Time, loc *time.Location) time.Time {
	if r.spec == nil {
		return time.Time{}
	}
	return Orbit{NextFunc: r.nextFunc(loc)}.Prev(t)
}

// LibraryNext is robfig's own SpecSchedule.Next, as a cron.Cron created
// with cron.WithLocation(loc) calls it after each run.
func (r *Robfig) LibraryNext(t time.Time, loc *time.Location) time.Time {
	if r.spec == nil {
		return r.constantDelay().Next(t)
	}
	return r.nextFunc(loc)(t)
}

func (r *Robfig) nextFunc(loc *time.Location) func(time.Time) time.Time {
	s := *r.spec
	if r.zone == nil {
		s.Location = loc
	}
	return s.Next
}

func (r *Robfig) constantDelay() rcron.ConstantDelaySchedule {
	return rcron.ConstantDelaySchedule{Delay: r.every}
}

// Describe returns the schedule in plain words when cronie's reading of
// the same fields means the same days, and "" otherwise.
func (r *Robfig) Describe() string {
	if r.spec == nil {
		return "every " + r.every.String()
	}
	fields := strings.Fields(r.src)
	if len(fields) > 0 && (strings.HasPrefix(fields[0], "CRON_TZ=") || strings.HasPrefix(fields[0], "TZ=")) {
		fields = fields[1:]
	}
	e, err := Parse(strings.Join(fields, " "))
	if err != nil {
		return ""
	}
	// The words are cronie's, so they are right only when cronie reads the
	// same values in every field, and the day fields with the same rule:
	// robfig joins them with "and" when one of them is * or ? (a step
	// other than 1 drops the star), cronie when one starts with *.
	const star = 1 << 63
	sp := r.spec
	same := e.second == sp.Second&^star && e.minute == sp.Minute&^star && e.hour == sp.Hour&^star &&
		uint64(e.dom) == sp.Dom&^star && uint64(e.month) == sp.Month&^star && uint64(e.dow) == sp.Dow&^star
	if !same || e.dayAnd != (sp.Dom&star != 0 || sp.Dow&star != 0) {
		return ""
	}
	return e.Describe()
}

// OrbitSpan bounds how far back [Orbit] looks: a schedule's last fire
// time further back than this is not found.
const OrbitSpan = 1 << 29 * time.Second // about 17 years

// Orbit is a schedule known only by its engine's next function, the way a
// scheduler such as robfig/cron or Quartz runs it: after each run it asks
// NextFunc for the first fire time strictly after the one just run. Around
// daylight saving changes such engines can give, from an arbitrary
// instant, a time that the running scheduler never reaches: robfig's Next
// from 2026-04-05 00:00 in Australia/Lord_Howe is 2026-04-07 00:00 for
// "0 0 * * *", while from 03:00 that day it is 2026-04-06 00:00. A monitor
// must expect the former. Orbit therefore follows the chain of fire times
// from at least two fires back, where the chain of a long-running
// scheduler has been joined, to the instant asked about.
//
// Both methods look back over windows that double in length, so each costs
// a few dozen calls of NextFunc plus the fire times in the window found.
type Orbit struct {
	// NextFunc returns the first fire time strictly after its argument, or
	// the zero Time when there is none.
	NextFunc func(time.Time) time.Time
	// Start, when set, returns an instant at or before its argument from
	// which NextFunc gives a fire time of the chain. Without it, any
	// instant is taken to be one two fires back; an engine whose detours
	// last longer (systemd, started inside an hour repeated in autumn,
	// fires through that hour) says where its chains start.
	Start func(time.Time) time.Time
}

// Prev returns the last fire time of the chain strictly before t, or the
// zero Time when there is none within OrbitSpan.
func (o Orbit) Prev(t time.Time) time.Time {
	prev, _ := o.walk(t)
	return prev
}

// Next returns the first fire time of the chain strictly after t, or the
// zero Time when there is none.
func (o Orbit) Next(t time.Time) time.Time {
	prev, next := o.walk(t.Add(time.Nanosecond)) // from the last fire at or before t
	if prev.IsZero() {
		return o.NextFunc(t)
	}
	return next
}

// walk returns the chain's last fire time strictly before t, and the one
// after it (at or after t, or zero when the engine has none).
func (o Orbit) walk(t time.Time) (prev, next time.Time) {
	// Start with windows as long as the gap between the next two fires,
	// so that a daily schedule takes a few windows, not seventeen.
	w := time.Second
	if g := o.NextFunc(t); !g.IsZero() {
		if h := o.NextFunc(g); h.Sub(g) > w {
			w = h.Sub(g)
		}
	}
	for ; w <= OrbitSpan; w *= 2 {
		from := t.Add(-w)
		if o.Start != nil {
			from = o.Start(from)
		}
		f := o.NextFunc(from)
		if f.IsZero() || !f.Before(t) {
			continue
		}
		// Walk the chain from f; stop on an engine that does not advance.
		n := 0
		var g time.Time
		for {
			n++
			g = o.NextFunc(f)
			if g.IsZero() || !g.Before(t) || !g.After(f) {
				break
			}
			f = g
		}
		prev, next = f, g
		if !next.After(prev) {
			next = time.Time{}
		}
		if n >= 2 {
			return prev, next
		}
	}
	return prev, next
}
