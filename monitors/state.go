package monitors

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// State is what the state machine remembers of a monitor between events. It
// is stored as one JSON document beside the monitor's configuration.
type State struct {
	Status        Status    `json:"status"`
	LastPingAt    time.Time `json:"last_ping_at,omitzero"`
	LastPingKind  PingKind  `json:"last_ping_kind,omitempty"`
	LastSuccessAt time.Time `json:"last_success_at,omitzero"`
	// Expected is the next occurrence not yet covered by a ping; zero while
	// the monitor is new.
	Expected time.Time `json:"expected,omitzero"`
	// DeadlineOcc is the oldest occurrence still waiting for a success, when
	// the monitor has a deadline.
	DeadlineOcc time.Time `json:"deadline_occ,omitzero"`
	// DeadlineDone are later occurrences than DeadlineOcc that already
	// succeeded (a ping with scheduled_at can succeed out of order), oldest
	// first.
	DeadlineDone []time.Time `json:"deadline_done,omitempty"`
	// Retries are the announced retries that have not arrived yet: one per
	// retry chain, that is per occurrence still being retried, in the order
	// the chains began.
	Retries []RetryWait `json:"retries,omitempty"`
	// Missed says which occurrence the open missed incident is about; nil
	// when none is open (or it was opened before this was kept).
	Missed *MissedOcc `json:"missed,omitempty"`
	// Runs are the open runs, oldest first.
	Runs   []OpenRun `json:"runs,omitempty"`
	RunSeq int64     `json:"run_seq,omitempty"`
	// Failures counts consecutive failures that count under
	// alert_on_failure; Successes counts consecutive successes.
	Failures  int `json:"failures,omitempty"`
	Successes int `json:"successes,omitempty"`
	// Open holds the open incidents by kind, with when each opened.
	Open map[IncidentKind]time.Time `json:"open,omitempty"`
	// Hold postpones time-driven rules whose due time fell inside an outage
	// of Vigil itself; see [TimeOptions].
	Hold *Hold `json:"hold,omitempty"`
	// Held are the open incidents whose notification is held, by kind,
	// with why (see [HeldNotice]).
	Held map[IncidentKind]HeldNotice `json:"held,omitempty"`
	// Ran is what the too_often rule remembers of the latest successful
	// runs, kept only while it is on: for a cron or oncalendar schedule,
	// the latest occurrences that had one, oldest first, each with the
	// runs counted for it (at most MaxRanOccs); for an interval schedule,
	// one entry, the start of the latest.
	Ran []RanOcc `json:"ran,omitempty"`
	// Undeclared is set while the monitor's source no longer declares it
	// (see [Undeclare]); Notified when its monitor.undeclared notice went
	// out, so that declaring it again says so.
	Undeclared bool `json:"undeclared,omitempty"`
	Notified   bool `json:"notified,omitempty"`
	// LateOcc is the expected occurrence whose late rule has run (its
	// monitor.late warning sent, or let go), so that it runs once.
	LateOcc time.Time `json:"late_occ,omitzero"`
	// Resolves are when incidents resolved within the last FlapWindow,
	// oldest first, for the flapping rule.
	Resolves []time.Time `json:"resolves,omitempty"`
	// Flapping is when the monitor began flapping (its monitor.flapping
	// notice), zero when it is not; FlapLast is when an incident last
	// opened since.
	Flapping time.Time `json:"flapping,omitzero"`
	FlapLast time.Time `json:"flap_last,omitzero"`
}

// IsFlapping reports whether the monitor is flapping: its incidents are
// recorded and shown but not notified.
func (s *State) IsFlapping() bool { return !s.Flapping.IsZero() }

// Flapping: a monitor whose incidents open and resolve more than
// FlapThreshold times within FlapWindow is flapping (those resolved, that
// is notified: one closed while held counts for nothing). The opening that
// follows FlapThreshold resolves within FlapWindow sends one
// monitor.flapping notice; its incidents are then recorded, not
// notified, until none has opened for a whole FlapWindow, when one
// monitor.stable notice says so.
const (
	FlapThreshold = 3
	FlapWindow    = time.Hour
)

// RetryWait is an announced retry that has not arrived yet: the head of
// the retry chain of one occurrence.
type RetryWait struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt,omitempty"` // the attempt number expected next, 0 when unknown
	FailAt  time.Time `json:"fail_at"`
	// Occ is the occurrence the chain retries: the failed ping's
	// scheduled_at, or (Keyed false) the occurrence its time falls in.
	Occ   time.Time `json:"occ,omitzero"`
	Keyed bool      `json:"keyed,omitempty"`
}

// MissedOcc is what an open missed incident is about.
type MissedOcc struct {
	// Occ is the occurrence that had no ping, or whose retry did not come.
	Occ time.Time `json:"occ"`
	// Retry is set when a retry chain went silent: then only a ping of
	// that occurrence ends the incident. Otherwise a ping of it or of any
	// later occurrence does.
	Retry bool `json:"retry,omitempty"`
}

// MaxRetryChains bounds the retry chains kept per monitor; a chain
// beginning beyond it drops the oldest.
const MaxRetryChains = 100

// RanOcc is an occurrence that had a successful run (see [State.Ran]).
type RanOcc struct {
	At   time.Time `json:"at"`
	Runs int       `json:"runs"`
}

// MaxRanOccs bounds the occurrences the too_often rule remembers. Runs
// come in order but for those that name their occurrence (scheduled_at),
// so a few are enough to tell a second run of one from the late retry of
// another.
const MaxRanOccs = 8

// UnmarshalJSON reads a state, including one stored before retry chains
// were kept per occurrence (a single "retry").
func (s *State) UnmarshalJSON(b []byte) error { return DecodeState(b, s) }

// NextRetry returns the awaited retry due first, or nil when no retry
// chain is waiting.
func (s *State) NextRetry() *RetryWait {
	var next *RetryWait
	for i := range s.Retries {
		if next == nil || s.Retries[i].At.Before(next.At) {
			next = &s.Retries[i]
		}
	}
	return next
}

// Clone returns a copy of s that shares no memory with it: changing one
// does not change the other.
func (s State) Clone() State {
	s.DeadlineDone = slices.Clone(s.DeadlineDone)
	s.Retries = slices.Clone(s.Retries)
	s.Runs = slices.Clone(s.Runs)
	s.Ran = slices.Clone(s.Ran)
	s.Resolves = slices.Clone(s.Resolves)
	s.Open = maps.Clone(s.Open)
	s.Held = maps.Clone(s.Held)
	if s.Missed != nil {
		m := *s.Missed
		s.Missed = &m
	}
	if s.Hold != nil {
		h := *s.Hold
		s.Hold = &h
	}
	return s
}

// UTC returns a copy of s with every instant in UTC, as stores write it.
func (s State) UTC() State {
	s.LastPingAt = s.LastPingAt.UTC()
	s.LastSuccessAt = s.LastSuccessAt.UTC()
	s.Expected = s.Expected.UTC()
	s.DeadlineOcc = s.DeadlineOcc.UTC()
	if len(s.DeadlineDone) > 0 {
		done := make([]time.Time, len(s.DeadlineDone))
		for i, t := range s.DeadlineDone {
			done[i] = t.UTC()
		}
		s.DeadlineDone = done
	}
	if len(s.Retries) > 0 {
		rs := make([]RetryWait, len(s.Retries))
		for i, r := range s.Retries {
			r.At, r.FailAt, r.Occ = r.At.UTC(), r.FailAt.UTC(), r.Occ.UTC()
			rs[i] = r
		}
		s.Retries = rs
	}
	if s.Missed != nil {
		m := *s.Missed
		m.Occ = m.Occ.UTC()
		s.Missed = &m
	}
	if len(s.Runs) > 0 {
		runs := make([]OpenRun, len(s.Runs))
		for i, r := range s.Runs {
			r.StartedAt = r.StartedAt.UTC()
			runs[i] = r
		}
		s.Runs = runs
	}
	if len(s.Open) > 0 {
		open := make(map[IncidentKind]time.Time, len(s.Open))
		for k, v := range s.Open {
			open[k] = v.UTC()
		}
		s.Open = open
	}
	if s.Hold != nil {
		h := *s.Hold
		h.OutageEnd, h.Until = h.OutageEnd.UTC(), h.Until.UTC()
		s.Hold = &h
	}
	if len(s.Held) > 0 {
		held := make(map[IncidentKind]HeldNotice, len(s.Held))
		for k, h := range s.Held {
			h.CheckAt = h.CheckAt.UTC()
			held[k] = h
		}
		s.Held = held
	}
	s.LateOcc, s.Flapping, s.FlapLast = s.LateOcc.UTC(), s.Flapping.UTC(), s.FlapLast.UTC()
	if len(s.Resolves) > 0 {
		rs := make([]time.Time, len(s.Resolves))
		for i, t := range s.Resolves {
			rs[i] = t.UTC()
		}
		s.Resolves = rs
	}
	if len(s.Ran) > 0 {
		ran := make([]RanOcc, len(s.Ran))
		for i, r := range s.Ran {
			r.At = r.At.UTC()
			ran[i] = r
		}
		s.Ran = ran
	}
	return s
}

// OpenRun is a run that started and has not finished.
type OpenRun struct {
	Seq       int64     `json:"seq"`
	RID       string    `json:"rid,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Attempt   int       `json:"attempt,omitempty"`
	Stuck     bool      `json:"stuck,omitempty"`
	// Occ is the occurrence the run belongs to, as for [RetryWait].
	Occ   time.Time `json:"occ,omitzero"`
	Keyed bool      `json:"keyed,omitempty"`
	// Retry is set when the run is a retry (its start answered a retry
	// chain, or had an attempt after the first); Early when its start was
	// early (early_seconds). Neither counts toward too_often.
	Retry bool `json:"retry,omitempty"`
	Early bool `json:"early,omitempty"`
}

// Hold is a fresh grace window given after an outage of Vigil.
type Hold struct {
	// OutageEnd is when Vigil noticed it was back; rules due at or before it
	// wait until Until.
	OutageEnd time.Time `json:"outage_end"`
	Until     time.Time `json:"until"`
}

// IncidentOp is what a change does to an incident.
type IncidentOp string

// Incident operations.
const (
	IncidentOpen    IncidentOp = "open"
	IncidentUpdate  IncidentOp = "update"
	IncidentResolve IncidentOp = "resolve"
	// IncidentClose ends the open incident of its kind without a
	// resolved event: nothing recovered, and no one is told it did.
	IncidentClose IncidentOp = "close"
	// MonitorNotice is no incident: an event about the monitor itself
	// (Event, such as monitor.undeclared), with its Summary.
	MonitorNotice IncidentOp = "notice"
	// IncidentRelease ends the hold of the open incident of its kind (see
	// [HeldNotice]): its opened event is delivered now, once.
	IncidentRelease IncidentOp = "release"
)

// IncidentChange is an incident transition decided by the state machine.
// The store turns Open into a new incident row, Update and Resolve into a
// change of the open incident of that kind, and each into an
// [IncidentEvent].
type IncidentChange struct {
	Op      IncidentOp
	Kind    IncidentKind
	At      time.Time
	Summary string
	RunSeq  int64
	// Event is a MonitorNotice's event.
	Event IncidentEventKind
	// Held is set on an open or update whose notification is held: its
	// event is recorded, and delivered to no channel (see [HeldNotice]).
	// SuppressedBy is a held open's parent incident, if suppressed.
	Held         bool
	SuppressedBy string
}

// RunChange is a run to insert or update, keyed by (monitor, Seq).
type RunChange struct {
	Run Run
}

// Transition is the outcome of one event: the monitor's new state is in the
// monitor itself; these are the rows to write beside it.
type Transition struct {
	Runs      []RunChange
	Incidents []IncidentChange
}

// Empty reports whether t changes no run and no incident.
func (t *Transition) Empty() bool { return len(t.Runs) == 0 && len(t.Incidents) == 0 }

// Limits of the state machine.
const (
	// MaxOpenRuns bounds the open runs kept per monitor; starting one more
	// abandons the oldest.
	MaxOpenRuns = 50
	// AbandonAfter is how long past its max runtime a run that never
	// reported its end stays open (and its stuck incident with it).
	AbandonAfter = 24 * time.Hour
	// EarlyToleranceMax bounds how early a ping may arrive and still count
	// for the coming occurrence.
	EarlyToleranceMax = time.Minute
)

// machine applies one event to a copy of a monitor's state.
type machine struct {
	m     *Monitor
	sched Schedule
	s     *State
	tr    Transition
}

func newMachine(m *Monitor) (*machine, error) {
	sched, err := ParseSchedule(m.Schedule)
	if err != nil {
		return nil, fmt.Errorf("monitor %s: %w", m.ID, err)
	}
	// Copy what is shared so the caller's monitor is untouched on error;
	// the machine writes to both maps, so neither may be nil.
	s := m.State.Clone()
	if s.Open == nil {
		s.Open = map[IncidentKind]time.Time{}
	}
	if s.Held == nil {
		s.Held = map[IncidentKind]HeldNotice{}
	}
	return &machine{m: m, sched: sched, s: &s}, nil
}

// finish stores the new state and next deadline in the monitor.
func (x *machine) finish() *Transition {
	x.s.Status = x.status()
	for k := range x.s.Held {
		if !x.isOpen(k) {
			delete(x.s.Held, k)
		}
	}
	if len(x.s.Held) == 0 {
		x.s.Held = nil
	}
	if len(x.s.Open) == 0 {
		x.s.Open = nil
	}
	if !x.isOpen(IncidentMissed) {
		x.s.Missed = nil
	}
	if len(x.s.Retries) == 0 {
		x.s.Retries = nil
	}
	if len(x.s.DeadlineDone) == 0 {
		x.s.DeadlineDone = nil
	}
	if len(x.s.Resolves) == 0 {
		x.s.Resolves = nil
	}
	if len(x.s.Ran) == 0 || x.m.TooOften != TooOftenAlert {
		x.s.Ran = nil
	}
	x.m.State = *x.s
	x.m.NextDeadlineAt = x.m.NextDeadline()
	return &x.tr
}

func (x *machine) status() Status {
	switch {
	case x.m.Paused:
		return StatusPaused
	case x.s.Undeclared:
		return StatusUndeclared
	case len(x.s.Open) > 0:
		return StatusDown
	case len(x.s.Retries) > 0:
		return StatusRetrying
	case len(x.s.Runs) > 0:
		return StatusRunning
	case x.s.Expected.IsZero():
		// Nothing is expected before the first ping (or after a resume).
		return StatusNew
	}
	return StatusUp
}

func (x *machine) open(kind IncidentKind, at time.Time, runSeq int64, summary string) {
	if _, ok := x.s.Open[kind]; ok {
		// While snoozed or flapping, or while the incident is held, its
		// news waits too (its recovery does not: see resolve).
		held := x.isHeld(kind) || x.m.Snoozed(at) || x.s.IsFlapping()
		x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentUpdate, Kind: kind, At: at, Summary: summary, RunSeq: runSeq, Held: held})
		return
	}
	if x.inMaintenance(at) {
		// Planned work: judged (the run is recorded as it ended), but no
		// incident opens. One already open stays open, above.
		return
	}
	x.s.Open[kind] = at
	i := len(x.tr.Incidents)
	x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentOpen, Kind: kind, At: at, Summary: summary, RunSeq: runSeq})
	// After the flapping rule: the opening that starts flapping is held
	// too, and notified when the monitor is stable if still open.
	x.flap(at)
	if h, ok := x.holdAt(at); ok {
		x.s.Held[kind] = h
		x.tr.Incidents[i].Held, x.tr.Incidents[i].SuppressedBy = true, h.Parent
	}
}

// flap applies the flapping rule to an incident opening at at: the
// opening after FlapThreshold resolves within FlapWindow begins flapping,
// with one notice; while flapping, it only notes the opening.
func (x *machine) flap(at time.Time) {
	s := x.s
	if s.IsFlapping() {
		s.FlapLast = at
		return
	}
	x.trimResolves(at)
	if len(s.Resolves) < FlapThreshold || x.m.Snoozed(at) {
		// A snoozed monitor sends nothing, a flapping notice included.
		return
	}
	s.Flapping, s.FlapLast, s.Resolves = at, at, nil
	x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: MonitorNotice, Event: EventMonitorFlapping, At: at,
		Summary: fmt.Sprintf("%s is flapping: more than %d incidents opened and resolved within %s; its incidents are recorded but not notified until none opens for %s (now: %s)",
			x.m.Name, FlapThreshold, FormatDuration(FlapWindow), FormatDuration(FlapWindow), x.openWords())})
}

// trimResolves forgets the resolves older than FlapWindow before at.
func (x *machine) trimResolves(at time.Time) {
	s := x.s
	i := 0
	for i < len(s.Resolves) && !s.Resolves[i].After(at.Add(-FlapWindow)) {
		i++
	}
	s.Resolves = s.Resolves[i:]
}

// openWords names the open incidents: "down, missed open since ...", or "up".
func (x *machine) openWords() string {
	var open []string
	for _, k := range IncidentKinds {
		if at, ok := x.s.Open[k]; ok {
			open = append(open, fmt.Sprintf("%s since %s", k, x.fmtTime(at)))
		}
	}
	if len(open) == 0 {
		return "no incident open"
	}
	return "open: " + strings.Join(open, ", ")
}

func (x *machine) resolve(kind IncidentKind, at time.Time, summary string) {
	if _, ok := x.s.Open[kind]; !ok {
		return
	}
	delete(x.s.Open, kind)
	op := IncidentResolve
	if x.isHeld(kind) {
		// No one was told it opened: it ends without a word.
		delete(x.s.Held, kind)
		op = IncidentClose
	}
	x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: op, Kind: kind, At: at, Summary: summary})
	// Flapping is about noise: an incident that closed held sent nothing
	// and does not count.
	if op == IncidentResolve && !x.s.IsFlapping() {
		x.trimResolves(at)
		x.s.Resolves = append(x.s.Resolves, at)
		if len(x.s.Resolves) > FlapThreshold {
			x.s.Resolves = x.s.Resolves[len(x.s.Resolves)-FlapThreshold:]
		}
	}
}

func (x *machine) isOpen(kind IncidentKind) bool {
	_, ok := x.s.Open[kind]
	return ok
}

// earlyTolerance is how early a ping may come and still count for occ: a
// minute, or a tenth of the gap before occ, whichever is smaller.
func (x *machine) earlyTolerance(occ time.Time) time.Duration {
	if _, ok := x.sched.(Interval); ok {
		return 0
	}
	prev := x.sched.Prev(occ)
	if prev.IsZero() {
		if next := x.sched.Next(occ); !next.IsZero() {
			prev = occ.Add(-next.Sub(occ))
		} else {
			return 0
		}
	}
	return min(occ.Sub(prev)/10, EarlyToleranceMax)
}

// expectedAfter returns the first occurrence that a ping at t does not
// cover: the next one after t, or the one after it when t is early for it.
func (x *machine) expectedAfter(t time.Time) time.Time {
	occ := x.sched.Next(t)
	if occ.IsZero() {
		return occ
	}
	if occ.Sub(t) <= x.earlyTolerance(occ) {
		occ = x.sched.Next(occ)
	}
	return occ
}

// ApplyPing applies a ping to m: it updates m.State and m.NextDeadlineAt and
// returns the runs and incidents to write. It is pure: the time is the
// ping's. p.At must not be earlier than the previous ping's.
func ApplyPing(m *Monitor, p *Ping) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	x.ping(p)
	return x.finish(), nil
}

// occRef names the occurrence a ping, run or retry chain belongs to.
type occRef struct {
	at time.Time
	// keyed is set when the job named it with scheduled_at; otherwise at
	// is the occurrence the ping's time falls in.
	keyed bool
}

// Bounds of a ping's scheduled_at. A run starts at or after its fire time,
// so only clock skew, or a job started a little early, puts scheduled_at
// after the ping; and no retry chain lasts a year. A scheduled_at outside
// them cannot be the run's occurrence (the job's host clock is far off),
// so the ping is judged as if it had none: a ping is never refused for it.
const (
	ScheduledAtAhead  = time.Hour
	ScheduledAtMaxAge = 366 * 24 * time.Hour
)

// occurrence returns the occurrence p belongs to. With scheduled_at, that
// is the one it names (to the second). Without, it is the occurrence its
// time falls in, as [machine.occurrenceAt] says.
func (x *machine) occurrence(p *Ping) occRef {
	if sa := p.ScheduledAt; sa != nil && !sa.After(p.At.Add(ScheduledAtAhead)) && !sa.Before(p.At.Add(-ScheduledAtMaxAge)) {
		return occRef{at: sa.Truncate(time.Second), keyed: true}
	}
	return occRef{at: x.occurrenceAt(p.At)}
}

// occurrenceAt returns the occurrence that a ping at t counts for: the last
// one at or before t, or the coming one when t is early for it. For an
// interval schedule, whose occurrences follow the pings, it is t itself.
func (x *machine) occurrenceAt(t time.Time) time.Time {
	if _, ok := x.sched.(Interval); ok {
		return t
	}
	next := x.expectedAfter(t)
	if next.IsZero() {
		return t
	}
	if prev := x.sched.Prev(next); !prev.IsZero() {
		return prev
	}
	return t
}

func (x *machine) ping(p *Ping) {
	s := x.s
	if p.Kind == PingLog {
		return // a message only: no change of state
	}
	if x.m.Paused || x.m.Undeclared() {
		// Recorded, but a paused monitor stays paused and judges nothing:
		// a person paused it, and only a person resumes it. An undeclared
		// one waits for its source to declare it again.
		return
	}
	x.release(p.At)
	o := x.occurrence(p)
	rs := x.runStart(p, o)
	o = rs.occ
	s.LastPingAt, s.LastPingKind = p.At, p.Kind
	switch {
	case rs.ahead:
		// A run that belongs to the coming occurrence covers it (see
		// runStart), early or not: an early job is reported once, as
		// early, and not also as missed.
		if next := x.expectedAfter(o.at); next.After(s.Expected) {
			s.Expected = next
		}
	case o.keyed && !s.Expected.IsZero():
		// A ping that names its occurrence covers that occurrence only: a
		// late attempt of an old occurrence is not the run of a newer one.
		if next := x.expectedAfter(o.at); next.After(s.Expected) {
			s.Expected = next
		}
	default:
		// With early_seconds, the end of a run that covered the coming
		// occurrence must not take that back.
		if next := x.expectedAfter(p.At); x.m.EarlySeconds == 0 || !next.Before(s.Expected) {
			s.Expected = next
		}
	}
	if x.m.DeadlineSeconds > 0 && s.DeadlineOcc.IsZero() {
		s.DeadlineOcc = s.Expected
	}
	if x.isOpen(IncidentMissed) && x.endsMissed(o) {
		x.resolve(IncidentMissed, p.At, fmt.Sprintf("received a %s ping at %s", p.Kind, x.fmtTime(p.At)))
	}
	// The awaited retry of the ping's chain has arrived; the other chains
	// keep waiting for theirs.
	if i := x.chainOf(p, o); i >= 0 {
		if !o.keyed {
			o = occRef{at: s.Retries[i].Occ, keyed: s.Retries[i].Keyed}
		}
		s.Retries = slices.Delete(s.Retries, i, i+1)
	}
	if s.Hold != nil && p.At.After(s.Hold.Until) {
		s.Hold = nil
	}

	if rs.judged {
		x.judgeEarly(p, rs)
	}

	switch p.Kind {
	case PingStart:
		x.start(p, o, rs)
	case PingSkip:
		s.RunSeq++
		at := p.At
		x.tr.Runs = append(x.tr.Runs, RunChange{Run: Run{Seq: s.RunSeq, RID: p.RID, StartedAt: &at, FinishedAt: &at, Outcome: RunSkipped, Attempt: p.Attempt}})
	case PingSuccess, PingFail, PingCancel:
		x.finishRun(p, o, rs)
	}
}

// runStart is what a ping that begins a run says about it: when it
// started, which occurrence it is for, and whether it is judged for
// starting early.
type runStart struct {
	occ occRef
	// at is when the run started: the start ping's time, or for a run
	// reported only by its end, that end minus duration_ms (or the end,
	// when there is none).
	at time.Time
	// begins is set when the ping begins a run: a start, or a success or
	// failure that closes no open run. retry is set when that run is a
	// retry of an earlier attempt (it answers a retry chain, or has an
	// attempt after the first).
	begins, retry bool
	// ahead is set when the run is taken for the coming occurrence
	// rather than the one before it (see [machine.runStart]).
	ahead bool
	// judged is set when early_seconds judges the run's start.
	judged bool
}

// runStart says when the run that p begins started and which occurrence
// it is for (o, as the ping names it or as its time falls).
//
// With early_seconds, a run that does not name its occurrence is for the
// coming occurrence when it starts nearer to it than to the one before,
// and that one already had its ping: a daily 02:00 job started at 20:00
// runs early, and at 13:00 runs again for the 02:00 before. Such a run
// covers the coming occurrence, as an early ping within the tolerance
// does. A retry is never taken for a coming occurrence, nor judged early:
// it retries one that has passed.
func (x *machine) runStart(p *Ping, o occRef) runStart {
	rs := runStart{occ: o, at: p.At}
	switch p.Kind {
	case PingStart:
		rs.begins = true
	case PingSuccess, PingFail:
		rs.begins = x.openRunOf(p) < 0
	}
	if !rs.begins {
		return rs
	}
	if p.DurationMS != nil && p.Kind != PingStart {
		rs.at = p.At.Add(-time.Duration(*p.DurationMS) * time.Millisecond)
		// The occurrence by the start matters to the run rules only;
		// without them a ping costs no more schedule arithmetic.
		if !o.keyed && (x.m.EarlySeconds > 0 || x.m.TooOften == TooOftenAlert) {
			rs.occ.at = x.occurrenceAt(rs.at)
		}
	}
	rs.retry = p.Attempt > 1 || x.chainOf(p, o) >= 0
	if x.m.EarlySeconds == 0 || rs.retry {
		return rs
	}
	if _, ok := x.sched.(Interval); ok {
		return rs
	}
	rs.judged = true
	if o.keyed {
		return rs
	}
	next := x.sched.Next(rs.at)
	if next.IsZero() || !rs.occ.at.Before(next) {
		return rs // already the coming one, by the tolerance
	}
	prev := x.sched.Prev(next)
	if !prev.IsZero() && next.Sub(rs.at) < rs.at.Sub(prev) && (x.s.Expected.IsZero() || !x.s.Expected.Before(next)) {
		rs.occ.at, rs.ahead = next, true
	}
	return rs
}

// openRunOf returns the index of the open run a finishing ping closes: the
// one of its rid, or without rid the oldest; -1 when none.
func (x *machine) openRunOf(p *Ping) int {
	if p.RID != "" {
		return slices.IndexFunc(x.s.Runs, func(r OpenRun) bool { return r.RID == p.RID })
	}
	if len(x.s.Runs) > 0 {
		return 0
	}
	return -1
}

// judgeEarly applies early_seconds to the start of a run: more than that
// before its occurrence opens (or updates) the early incident; a start
// that is not resolves it.
func (x *machine) judgeEarly(p *Ping, rs runStart) {
	by := rs.occ.at.Sub(rs.at)
	if by > x.m.Early() {
		x.open(IncidentEarly, p.At, x.s.RunSeq+1, fmt.Sprintf("%s: a run started at %s, %s before its occurrence of %s (early_seconds: %s)",
			x.m.Name, x.fmtTime(rs.at), FormatDuration(by), x.fmtTime(rs.occ.at), FormatDuration(x.m.Early())))
		return
	}
	if !x.isOpen(IncidentEarly) {
		return // nothing to resolve: no summary to write
	}
	x.resolve(IncidentEarly, p.At, fmt.Sprintf("a run started at %s, on time for its occurrence of %s", x.fmtTime(rs.at), x.fmtTime(rs.occ.at)))
}

// isEarly reports whether judgeEarly found rs early.
func (x *machine) isEarly(rs runStart) bool {
	return rs.judged && rs.occ.at.Sub(rs.at) > x.m.Early()
}

// endsMissed reports whether a ping of occurrence o ends the open missed
// incident. A ping that does not name its occurrence does, as any sign of
// life. One that does must be of the occurrence whose retry went silent,
// or, for an occurrence that had no ping at all, of it or a later one.
func (x *machine) endsMissed(o occRef) bool {
	mo := x.s.Missed
	if !o.keyed || mo == nil {
		return true
	}
	if mo.Retry {
		return o.at.Equal(mo.Occ)
	}
	return !x.occurrenceAt(o.at).Before(mo.Occ)
}

// chainOf returns the index of the retry chain that p's arrival answers,
// or -1. A ping with scheduled_at answers its occurrence's chain only.
// Without it, a ping answers the newest chain that awaits its attempt
// number, or, failing that, the newest chain it can be the retry of (any,
// when either attempt number is unknown); so a single chain behaves as a
// single awaited retry always did.
func (x *machine) chainOf(p *Ping, o occRef) int {
	rs := x.s.Retries
	if o.keyed {
		for i, r := range rs {
			if r.Occ.Equal(o.at) {
				return i
			}
		}
		return -1
	}
	if p.Attempt > 0 {
		for i := len(rs) - 1; i >= 0; i-- {
			if rs[i].Attempt == p.Attempt {
				return i
			}
		}
	}
	for i := len(rs) - 1; i >= 0; i-- {
		if r := rs[i]; p.Attempt == 0 || r.Attempt == 0 || p.Attempt >= r.Attempt {
			return i
		}
	}
	return -1
}

func (x *machine) start(p *Ping, o occRef, rs runStart) {
	s := x.s
	if len(s.Runs) > 0 && x.m.Overlap == OverlapAlert {
		oldest := s.Runs[0]
		x.open(IncidentOverlap, p.At, s.RunSeq+1, fmt.Sprintf(
			"%s started a run at %s while %d earlier run(s) were still running (the oldest, %s, started at %s)",
			x.m.Name, x.fmtTime(p.At), len(s.Runs), runName(oldest.RID, oldest.Seq), x.fmtTime(oldest.StartedAt)))
	}
	s.RunSeq++
	run := OpenRun{Seq: s.RunSeq, RID: p.RID, StartedAt: p.At, Attempt: p.Attempt, Occ: o.at, Keyed: o.keyed,
		Retry: rs.retry, Early: x.isEarly(rs)}
	s.Runs = append(s.Runs, run)
	at := p.At
	x.tr.Runs = append(x.tr.Runs, RunChange{Run: Run{Seq: run.Seq, RID: run.RID, StartedAt: &at, Attempt: run.Attempt}})
	for len(s.Runs) > MaxOpenRuns {
		x.abandon(0, p.At, "too many open runs")
	}
}

// abandon closes open run i without an outcome reported by the job.
func (x *machine) abandon(i int, at time.Time, why string) {
	r := x.s.Runs[i]
	x.s.Runs = append(x.s.Runs[:i], x.s.Runs[i+1:]...)
	started, fin := r.StartedAt, at
	d := fin.Sub(started).Milliseconds()
	x.tr.Runs = append(x.tr.Runs, RunChange{Run: Run{Seq: r.Seq, RID: r.RID, StartedAt: &started, FinishedAt: &fin, Outcome: RunAbandoned, DurationMS: &d, Attempt: r.Attempt, Stuck: r.Stuck}})
	x.afterRunClosed(r, at, fmt.Sprintf("run %s was abandoned (%s)", runName(r.RID, r.Seq), why))
}

// afterRunClosed resolves the stuck and overlap incidents that closing r ends.
func (x *machine) afterRunClosed(r OpenRun, at time.Time, why string) {
	if r.Stuck && x.isOpen(IncidentStuck) {
		stuckLeft := false
		for _, o := range x.s.Runs {
			stuckLeft = stuckLeft || o.Stuck
		}
		if !stuckLeft {
			x.resolve(IncidentStuck, at, why)
		}
	}
	if len(x.s.Runs) <= 1 && x.isOpen(IncidentOverlap) {
		x.resolve(IncidentOverlap, at, fmt.Sprintf("runs no longer overlap: %s", why))
	}
}

func (x *machine) finishRun(p *Ping, o occRef, rs runStart) {
	s := x.s
	idx := x.openRunOf(p) // without rid, a finish closes the oldest open run
	// Whether the run is a retry or started early, for too_often: as its
	// start said, or this ping when it is the run's only one.
	retry, early := rs.retry || p.Attempt > 1, x.isEarly(rs)

	fin := p.At
	run := Run{RID: p.RID, FinishedAt: &fin, Attempt: p.Attempt, ExitCode: p.ExitCode}
	var closed *OpenRun
	if idx >= 0 {
		r := s.Runs[idx]
		closed = &r
		retry, early = retry || r.Retry || r.Attempt > 1, r.Early
		s.Runs = append(s.Runs[:idx], s.Runs[idx+1:]...)
		if !o.keyed && !r.Occ.IsZero() {
			o = occRef{at: r.Occ, keyed: r.Keyed} // the run's start named its occurrence
		}
		started := r.StartedAt
		run.Seq, run.RID, run.StartedAt, run.Stuck = r.Seq, r.RID, &started, r.Stuck
		if run.Attempt == 0 {
			run.Attempt = r.Attempt
		}
		d := fin.Sub(started).Milliseconds()
		run.DurationMS = &d
	} else {
		s.RunSeq++
		run.Seq = s.RunSeq
	}
	if p.DurationMS != nil {
		d := *p.DurationMS
		run.DurationMS = &d
		if run.StartedAt == nil {
			started := fin.Add(-time.Duration(d) * time.Millisecond)
			run.StartedAt = &started
		}
	}

	switch p.Kind {
	case PingSuccess:
		run.Outcome = RunSucceeded
		x.judgeRuntime(p, run)
		if x.m.TooOften == TooOftenAlert && !early {
			// An early run is reported as early, not also as too often.
			started := rs.at
			if run.StartedAt != nil {
				started = *run.StartedAt
			}
			// A success after a failure is a rerun of what failed.
			x.countRun(p, run.Seq, o.at, started, retry || s.Successes == 0)
		}
		x.success(p, o)
	case PingFail:
		run.Outcome = RunFailed
		run.WillRetry = p.RetryAt != nil
		x.failure(p, run, o)
	case PingCancel:
		run.Outcome = RunCancelled
	}
	x.tr.Runs = append(x.tr.Runs, RunChange{Run: run})
	if closed != nil {
		x.afterRunClosed(*closed, p.At, fmt.Sprintf("run %s ended (%s) at %s", runName(closed.RID, closed.Seq), p.Kind, x.fmtTime(p.At)))
	}
}

func (x *machine) success(p *Ping, o occRef) {
	s := x.s
	s.LastSuccessAt = p.At
	s.Failures = 0
	s.Successes++
	if x.isOpen(IncidentFailed) && s.Successes >= x.m.RecoveryThreshold {
		x.resolve(IncidentFailed, p.At, fmt.Sprintf("succeeded at %s (%d consecutive success(es))", x.fmtTime(p.At), s.Successes))
	}
	if x.m.DeadlineSeconds == 0 {
		return
	}
	if !o.keyed {
		// Without scheduled_at, a success settles every occurrence so far.
		x.resolve(IncidentDeadline, p.At, fmt.Sprintf("succeeded at %s", x.fmtTime(p.At)))
		s.DeadlineOcc, s.DeadlineDone = s.Expected, nil
		return
	}
	occ := x.occurrenceAt(o.at)
	switch {
	case s.DeadlineOcc.IsZero() || occ.Before(s.DeadlineOcc):
		// An occurrence already settled, or judged.
	case x.isOpen(IncidentDeadline):
		// The incident is about DeadlineOcc: its success, or a later
		// occurrence's, ends it; watching resumes after that occurrence.
		x.resolve(IncidentDeadline, p.At, fmt.Sprintf("the occurrence of %s succeeded at %s", x.fmtTime(occ), x.fmtTime(p.At)))
		x.advanceDeadline(occ)
	case occ.Equal(s.DeadlineOcc):
		x.advanceDeadline(occ)
	default:
		// A later occurrence succeeded first: remember it, and keep
		// waiting for the older one.
		if i, found := slices.BinarySearchFunc(s.DeadlineDone, occ, time.Time.Compare); !found && len(s.DeadlineDone) < MaxRetryChains {
			s.DeadlineDone = slices.Insert(s.DeadlineDone, i, occ)
		}
	}
}

// judgeRuntime applies min_runtime_seconds to a successful run: one that
// took less opens (or updates) the too_fast incident, one that took at
// least that resolves it. A success whose duration is unknown (no start
// ping, no duration_ms) is not judged.
func (x *machine) judgeRuntime(p *Ping, run Run) {
	minRT := x.m.MinRuntime()
	if minRT == 0 || run.DurationMS == nil {
		return
	}
	d := time.Duration(*run.DurationMS) * time.Millisecond
	if d < minRT {
		x.open(IncidentTooFast, p.At, run.Seq, fmt.Sprintf("%s: run %s succeeded at %s after only %s, less than its min runtime of %s",
			x.m.Name, runName(run.RID, run.Seq), x.fmtTime(p.At), runtimeWords(d), FormatDuration(minRT)))
		return
	}
	if !x.isOpen(IncidentTooFast) {
		return
	}
	x.resolve(IncidentTooFast, p.At, fmt.Sprintf("run %s succeeded at %s after %s (min runtime %s)",
		runName(run.RID, run.Seq), x.fmtTime(p.At), runtimeWords(d), FormatDuration(minRT)))
}

// runtimeWords says how long a run took: to a tenth of a second under a
// minute ("1.5s", "0s"), where whole seconds would round a 1.5 s run up
// to 2, and as FormatDuration above.
func runtimeWords(d time.Duration) string {
	if d < time.Minute {
		return d.Round(100 * time.Millisecond).String()
	}
	return FormatDuration(d)
}

// countRun applies too_often to a successful run that started at started,
// for occurrence occ: a second one for one occurrence of a cron or
// oncalendar schedule opens the too_often incident, and so does, on an
// interval schedule, one that started less than half the interval after
// the one before. A retry (or rerun after a failure) is remembered but
// never counts as too often: it finishes an occurrence that had no
// success. While the incident is open, further runs do not update it
// (a job that runs every minute instead of every hour would send sixty
// updates an hour); it resolves when a cron occurrence ran once (at the
// first run of the occurrence after it), or an interval run started at
// least half the interval after the one before.
func (x *machine) countRun(p *Ping, seq int64, occ, started time.Time, retry bool) {
	s := x.s
	if iv, ok := x.sched.(Interval); ok {
		half := iv.Every / 2
		if len(s.Ran) > 0 && !retry {
			prev := s.Ran[len(s.Ran)-1].At
			switch gap := started.Sub(prev); {
			case gap < half && !x.isOpen(IncidentTooOften):
				x.open(IncidentTooOften, p.At, seq, fmt.Sprintf("%s: a run started at %s, %s after the one before (%s); too_often allows no less than half the interval of %s",
					x.m.Name, x.fmtTime(started), FormatDuration(max(gap, 0)), x.fmtTime(prev), FormatDuration(iv.Every)))
			case gap >= half && x.isOpen(IncidentTooOften):
				x.resolve(IncidentTooOften, p.At, fmt.Sprintf("a run started at %s, %s after the one before", x.fmtTime(started), FormatDuration(gap)))
			}
		}
		s.Ran = []RanOcc{{At: started, Runs: 1}}
		return
	}
	occ = occ.Truncate(time.Second)
	i, found := slices.BinarySearchFunc(s.Ran, occ, func(r RanOcc, t time.Time) int { return r.At.Compare(t) })
	if found {
		if retry {
			return
		}
		s.Ran[i].Runs++
		if !x.isOpen(IncidentTooOften) {
			x.open(IncidentTooOften, p.At, seq, fmt.Sprintf("%s: a run started at %s succeeded, run %d for its occurrence of %s; too_often allows one success an occurrence, besides retries",
				x.m.Name, x.fmtTime(started), s.Ran[i].Runs, x.fmtTime(occ)))
		}
		return
	}
	if i == len(s.Ran) && i > 0 && s.Ran[i-1].Runs <= 1 && x.isOpen(IncidentTooOften) {
		// The occurrence before ran once: the runs are back to the schedule.
		x.resolve(IncidentTooOften, p.At, fmt.Sprintf("the occurrence of %s ran once", x.fmtTime(s.Ran[i-1].At)))
	}
	if i == 0 && len(s.Ran) >= MaxRanOccs {
		return // older than every occurrence remembered: not judged
	}
	s.Ran = slices.Insert(s.Ran, i, RanOcc{At: occ, Runs: 1})
	if len(s.Ran) > MaxRanOccs {
		s.Ran = slices.Delete(s.Ran, 0, 1)
	}
}

// advanceDeadline moves the deadline watch to the first occurrence after
// occ that has not succeeded yet.
func (x *machine) advanceDeadline(occ time.Time) {
	s := x.s
	next := x.sched.Next(occ)
	for len(s.DeadlineDone) > 0 && !next.IsZero() && !s.DeadlineDone[0].After(next) {
		if s.DeadlineDone[0].Equal(next) {
			next = x.sched.Next(next)
		}
		s.DeadlineDone = s.DeadlineDone[1:]
	}
	s.DeadlineOcc = next
}

func (x *machine) failure(p *Ping, run Run, o occRef) {
	s := x.s
	s.Successes = 0
	willRetry := p.RetryAt != nil
	if willRetry {
		next := 0
		if p.Attempt > 0 {
			next = p.Attempt + 1
		}
		s.Retries = append(s.Retries, RetryWait{At: *p.RetryAt, Attempt: next, FailAt: p.At, Occ: o.at, Keyed: o.keyed})
		if len(s.Retries) > MaxRetryChains {
			s.Retries = slices.Delete(s.Retries, 0, 1)
		}
	}
	counts := x.m.AlertOnFailure == AlertEveryAttempt || (x.m.AlertOnFailure == AlertFinal && !willRetry)
	if !counts {
		return
	}
	s.Failures++
	if s.Failures < x.m.FailureThreshold {
		return
	}
	what := "failed"
	if p.ExitCode != nil {
		what = fmt.Sprintf("failed with exit status %d", *p.ExitCode)
	}
	detail := ""
	switch {
	case willRetry && p.Attempt > 0:
		detail = fmt.Sprintf(" (attempt %d; retry announced for %s)", p.Attempt, x.fmtTime(*p.RetryAt))
	case willRetry:
		detail = fmt.Sprintf(" (retry announced for %s)", x.fmtTime(*p.RetryAt))
	case p.Attempt > 1:
		detail = fmt.Sprintf(" (attempt %d, final: no retry announced)", p.Attempt)
	}
	if x.m.FailureThreshold > 1 {
		detail += fmt.Sprintf("; %d consecutive failures", s.Failures)
	}
	x.open(IncidentFailed, p.At, run.Seq, fmt.Sprintf("%s %s at %s%s", x.m.Name, what, x.fmtTime(p.At), detail))
}

// TimeOptions adjusts how time is applied.
type TimeOptions struct {
	// OutageStart and OutageEnd, when set, bound a period in which Vigil
	// itself was down or lagging, so pings may have been lost: rules due
	// inside it do not fire at once but after a fresh grace window that
	// starts at OutageEnd.
	OutageStart, OutageEnd time.Time
}

// ApplyTime applies the passing of time up to now: missed occurrences and
// retries, stuck runs, deadlines. It updates m.State and m.NextDeadlineAt
// and returns the runs and incidents to write.
func ApplyTime(m *Monitor, now time.Time, opts TimeOptions) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	if !m.Paused && !m.Undeclared() {
		x.time(now, opts)
	}
	return x.finish(), nil
}

// ruleKind names a rule that the passing of time alone fires.
type ruleKind uint8

// The time rules, in the order a pass of ApplyTime applies them.
const (
	// ruleRetry: an announced retry did not come by its time plus grace
	// (missed). The first retry chain whose retry is overdue opens the
	// incident; the others wait for theirs.
	ruleRetry ruleKind = iota
	// ruleExpected: no ping by the expected occurrence plus grace (missed).
	ruleExpected
	// ruleAbandon: a run reported no end AbandonAfter past its max runtime.
	ruleAbandon
	// ruleStuck: a run outlived its max runtime.
	ruleStuck
	// ruleDeadline: an occurrence had no success by its deadline.
	ruleDeadline
	// ruleRelease: the hold of an incident's notification ends (a snooze
	// ran out), or a suppressed one's parents are looked at again; see
	// [HeldNotice]. It is listed first: a hold that ended is over before
	// the pass opens anything.
	ruleRelease
	// ruleLate: halfway through the grace of the expected occurrence,
	// with no ping yet, a monitor.late warning (no incident), once per
	// occurrence; only for a monitor with a channel that takes it
	// (Monitor.NotifyLate). Halfway, not at the expected time itself: a
	// job that pings when it ends is late by its run time every time, and
	// a warning then would be noise; halfway still leaves half the grace
	// to act before the page.
	ruleLate
	// ruleStable: a flapping monitor opened no incident for FlapWindow.
	ruleStable
	numRuleKinds
)

// timeRule is one rule that time alone can fire in a monitor's state: its
// kind, when it comes due, and what it is about.
type timeRule struct {
	kind ruleKind
	at   time.Time
	i    int   // ruleRetry: the index in State.Retries
	seq  int64 // ruleAbandon, ruleStuck: the run
}

// timeRules is the one list of the rules time alone can fire in m's state,
// in the order ApplyTime applies them: ApplyTime fires those that are due,
// and NextDeadline is the earliest of them. A paused or undeclared monitor
// has none.
func (m *Monitor) timeRules() []timeRule { return m.appendTimeRules(nil) }

// appendTimeRules appends timeRules to rules: NextDeadline, which runs at
// every ping, lists them in an array on its stack.
func (m *Monitor) appendTimeRules(rules []timeRule) []timeRule {
	s := &m.State
	if m.Paused || m.Undeclared() {
		return rules
	}
	if at := m.releaseAt(); !at.IsZero() {
		rules = append(rules, timeRule{kind: ruleRelease, at: at})
	}
	grace := m.Grace()
	if _, open := s.Open[IncidentMissed]; !open {
		for i, r := range s.Retries {
			rules = append(rules, timeRule{kind: ruleRetry, at: r.At.Add(grace), i: i})
		}
		if !s.Expected.IsZero() {
			if m.NotifyLate && grace > 0 && !s.LateOcc.Equal(s.Expected) {
				rules = append(rules, timeRule{kind: ruleLate, at: s.Expected.Add(grace / 2)})
			}
			rules = append(rules, timeRule{kind: ruleExpected, at: s.Expected.Add(grace)})
		}
	}
	maxRT := m.MaxRuntime()
	for _, r := range s.Runs {
		rules = append(rules, timeRule{kind: ruleAbandon, at: r.StartedAt.Add(maxRT + AbandonAfter), seq: r.Seq})
		if !r.Stuck {
			rules = append(rules, timeRule{kind: ruleStuck, at: r.StartedAt.Add(maxRT), seq: r.Seq})
		}
	}
	if _, open := s.Open[IncidentDeadline]; !open && m.Deadline() > 0 && !s.DeadlineOcc.IsZero() {
		rules = append(rules, timeRule{kind: ruleDeadline, at: s.DeadlineOcc.Add(m.Deadline())})
	}
	if s.IsFlapping() {
		rules = append(rules, timeRule{kind: ruleStable, at: s.FlapLast.Add(FlapWindow)})
	}
	return rules
}

// due reports whether a rule due at t fires at now, under hold, and
// returns the hold in force after it: a rule that came due inside an
// outage of Vigil (opts) starts a fresh grace window, or extends the one
// in force, and waits for it; so does a rule due before the end of the
// outage the hold is for.
//
// A maintenance window (maint) holds the rules due inside it as an outage
// does, even before it ends, and so those that come due while it is on:
// they wait for a fresh grace window from its end.
func due(t, now time.Time, grace time.Duration, opts TimeOptions, maint []Period, hold *Hold) (bool, *Hold) {
	if t.After(now) {
		return false, hold
	}
	if o := (Period{Start: opts.OutageStart, End: opts.OutageEnd}); !opts.OutageEnd.IsZero() && o.Contains(t) {
		hold = holdUntil(o, grace, hold)
	}
	for _, p := range maint {
		if p.Contains(t) || p.Contains(now) {
			hold = holdUntil(p, grace, hold)
		}
	}
	if hold != nil && !t.After(hold.OutageEnd) && now.Before(hold.Until) {
		return false, hold
	}
	return true, hold
}

// holdUntil returns the hold that postpones the rules due by the end of p
// (an outage of Vigil, or a maintenance window) until a grace period after
// it, or hold when that lasts longer.
func holdUntil(p Period, grace time.Duration, hold *Hold) *Hold {
	until := p.End.Add(grace)
	if hold == nil || hold.Until.Before(until) {
		return &Hold{OutageEnd: p.End, Until: until}
	}
	return hold
}

// inMaintenance reports whether t falls in a maintenance window of the
// monitor, where no incident opens.
func (x *machine) inMaintenance(t time.Time) bool {
	for _, p := range x.m.Maintenance {
		if !t.Before(p.Start) && t.Before(p.End) {
			return true
		}
	}
	return false
}

// runIndex returns the index of the open run seq, or -1.
func (x *machine) runIndex(seq int64) int {
	return slices.IndexFunc(x.s.Runs, func(r OpenRun) bool { return r.Seq == seq })
}

// time applies the rules of timeRules that are due at now, in order. A
// rule that an earlier one of the same pass settled is not looked at (a
// run abandoned is not also stuck; the expected occurrence opens no missed
// incident when a retry opened it).
func (x *machine) time(now time.Time, opts TimeOptions) {
	s := x.s
	grace := x.m.Grace()
	hold := s.Hold
	silent := -1 // the overdue retry chain whose retry is due first
	settled := false
	settleRetries := func() {
		if settled {
			return
		}
		settled = true
		if silent < 0 {
			return
		}
		r := s.Retries[silent]
		what := "the announced retry"
		if r.Attempt > 0 {
			what = fmt.Sprintf("retry attempt %d", r.Attempt)
		}
		if r.Keyed {
			what += " of the occurrence of " + x.fmtTime(r.Occ)
		}
		x.open(IncidentMissed, now, 0, fmt.Sprintf("%s: %s, announced for %s, did not arrive (grace %s); last ping: %s",
			x.m.Name, what, x.fmtTime(r.At), FormatDuration(grace), x.lastSeen(now)))
		s.Missed = &MissedOcc{Occ: r.Occ, Retry: true}
		s.Retries = slices.Delete(s.Retries, silent, silent+1)
	}
	maxRT := x.m.MaxRuntime()
	for _, rule := range x.m.timeRules() {
		if rule.kind != ruleRetry && rule.kind != ruleRelease {
			settleRetries()
		}
		var fire bool
		switch rule.kind {
		case ruleRelease:
			// Not held by an outage of Vigil: a hold only ever ends.
			if !rule.at.After(now) {
				x.release(now)
			}
		case ruleRetry:
			fire, hold = due(rule.at, now, grace, opts, x.m.Maintenance, hold)
			if fire && (silent < 0 || s.Retries[rule.i].At.Before(s.Retries[silent].At)) {
				silent = rule.i
			}
		case ruleLate:
			if x.isOpen(IncidentMissed) || s.LateOcc.Equal(s.Expected) {
				continue
			}
			if fire, hold = due(rule.at, now, grace, opts, x.m.Maintenance, hold); fire {
				s.LateOcc = s.Expected
				// Not in maintenance, nor when the missed incident it
				// warns of would be held (snoozed, suppressed under a
				// parent, flapping: its page would not be sent), and not
				// when that incident is due as well (the evaluator came
				// late): then the warning would come with the page, or
				// instead of nothing.
				if _, held := x.holdAt(now); !held && !x.inMaintenance(now) && now.Before(s.Expected.Add(grace)) {
					x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: MonitorNotice, Event: EventMonitorLate, At: now,
						Summary: fmt.Sprintf("%s is late: it did not %s; it is missed at %s (grace %s) unless a ping comes first; last ping: %s",
							x.m.Name, x.expectedPhrase(), x.fmtTime(s.Expected.Add(grace)), FormatDuration(grace), x.lastSeen(now))})
				}
			}
		case ruleStable:
			if !s.IsFlapping() || now.Before(rule.at) {
				continue
			}
			since := s.Flapping
			s.Flapping, s.FlapLast, s.Resolves = time.Time{}, time.Time{}, nil
			x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: MonitorNotice, Event: EventMonitorStable, At: now,
				Summary: fmt.Sprintf("%s is stable again: no incident opened for %s (flapping since %s); its incidents are notified again (now: %s)",
					x.m.Name, FormatDuration(FlapWindow), x.fmtTime(since), x.openWords())})
			// The incidents held while it flapped and still open are
			// notified now.
			x.release(now)
		case ruleExpected:
			if x.isOpen(IncidentMissed) {
				continue
			}
			if fire, hold = due(rule.at, now, grace, opts, x.m.Maintenance, hold); fire {
				x.open(IncidentMissed, now, 0, fmt.Sprintf("%s did not %s (grace %s); last ping: %s",
					x.m.Name, x.expectedPhrase(), FormatDuration(grace), x.lastSeen(now)))
				s.Missed = &MissedOcc{Occ: s.Expected}
			}
		case ruleAbandon:
			i := x.runIndex(rule.seq)
			if i < 0 {
				continue
			}
			if fire, hold = due(rule.at, now, grace, opts, x.m.Maintenance, hold); fire {
				x.abandon(i, now, fmt.Sprintf("no end reported %s after its max runtime", FormatDuration(AbandonAfter)))
			}
		case ruleStuck:
			i := x.runIndex(rule.seq)
			if i < 0 || s.Runs[i].Stuck {
				continue
			}
			if fire, hold = due(rule.at, now, grace, opts, x.m.Maintenance, hold); fire {
				r := &s.Runs[i]
				r.Stuck = true
				started := r.StartedAt
				x.tr.Runs = append(x.tr.Runs, RunChange{Run: Run{Seq: r.Seq, RID: r.RID, StartedAt: &started, Attempt: r.Attempt, Stuck: true}})
				x.open(IncidentStuck, now, r.Seq, fmt.Sprintf("%s: run %s started at %s and has not finished after %s (max runtime %s)",
					x.m.Name, runName(r.RID, r.Seq), x.fmtTime(r.StartedAt), FormatDuration(now.Sub(r.StartedAt)), FormatDuration(maxRT)))
			}
		case ruleDeadline:
			if x.isOpen(IncidentDeadline) {
				continue
			}
			if fire, hold = due(rule.at, now, grace, opts, x.m.Maintenance, hold); fire {
				d := x.m.Deadline()
				x.open(IncidentDeadline, now, 0, fmt.Sprintf("%s: the occurrence of %s had no success by %s (deadline %s); last ping: %s",
					x.m.Name, x.fmtTime(s.DeadlineOcc), x.fmtTime(s.DeadlineOcc.Add(d)), FormatDuration(d), x.lastSeen(now)))
			}
		}
	}
	settleRetries()
	if hold != nil && !now.Before(hold.Until) {
		hold = nil
	}
	s.Hold = hold
}

// NextDeadline returns the earliest instant at which time alone would change
// the monitor's state, or nil when only a ping or a person can: the
// earliest rule of timeRules, or the end of the hold that postpones it.
func (m *Monitor) NextDeadline() *time.Time {
	var (
		best time.Time
		buf  [8]timeRule
	)
	for _, r := range m.appendTimeRules(buf[:0]) {
		t := r.at
		if h := m.State.Hold; h != nil && r.kind != ruleRelease && !t.After(h.OutageEnd) && t.Before(h.Until) {
			t = h.Until
		}
		if best.IsZero() || t.Before(best) {
			best = t
		}
	}
	if best.IsZero() {
		return nil
	}
	best = best.UTC()
	return &best
}

// Pause pauses m at now: its open incidents resolve, its open runs are
// abandoned, and it judges nothing until resumed.
func Pause(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	if m.Paused {
		return x.finish(), nil
	}
	for len(x.s.Runs) > 0 {
		x.abandon(0, now, "the monitor was paused")
	}
	for _, k := range IncidentKinds {
		x.resolve(k, now, "the monitor was paused")
	}
	m.Paused = true
	x.clean()
	return x.finish(), nil
}

// Undeclared reports whether m's source stopped declaring it.
func (m *Monitor) Undeclared() bool { return m.State.Undeclared }

// Undeclare marks m as no longer declared by its source, at now: its open
// runs are abandoned and its open incidents closed, "no longer declared",
// without a recovery notice (the job did not recover: it is gone), and it
// judges nothing until declared again. The monitor.undeclared notice names
// the source and when it was last declared (m.UpdatedAt before the call).
// It keeps m.Paused as a person set it.
func Undeclare(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	if m.Undeclared() {
		return x.finish(), nil
	}
	const why = "no longer declared"
	for len(x.s.Runs) > 0 {
		x.abandon(0, now, why)
	}
	for _, k := range IncidentKinds {
		if _, ok := x.s.Open[k]; ok {
			delete(x.s.Open, k)
			x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentClose, Kind: k, At: now,
				Summary: fmt.Sprintf("closed: %s by source %q", why, m.Source)})
		}
	}
	// abandon may have resolved stuck and overlap incidents; they are
	// closed instead.
	for i, ic := range x.tr.Incidents {
		if ic.Op == IncidentResolve {
			x.tr.Incidents[i].Op = IncidentClose
		}
	}
	last := "never"
	if !m.UpdatedAt.IsZero() {
		last = x.fmtTime(m.UpdatedAt)
	}
	x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: MonitorNotice, Event: EventMonitorUndeclared, At: now,
		Summary: fmt.Sprintf("%s is no longer declared by source %q (last declared %s); it is kept, with its history, and watched again if declared again",
			m.Name, m.Source, last)})
	m.Discovered = false
	x.clean()
	x.s.Undeclared, x.s.Notified = true, true
	return x.finish(), nil
}

// Redeclare marks an undeclared m as declared again by its source, at now.
// It is watched again with a fresh grace window: the next occurrence after
// now is expected, as for a monitor that just pinged. A monitor.redeclared
// notice goes out only if its monitor.undeclared did.
func Redeclare(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	if !m.Undeclared() {
		return x.finish(), nil
	}
	m.Discovered = true
	notified := x.s.Notified
	x.clean()
	x.s.Undeclared, x.s.Notified = false, false
	if !x.s.LastPingAt.IsZero() {
		x.s.Expected = x.expectedAfter(now)
		if m.DeadlineSeconds > 0 {
			x.s.DeadlineOcc = x.s.Expected
		}
	}
	if notified {
		x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: MonitorNotice, Event: EventMonitorRedeclared, At: now,
			Summary: fmt.Sprintf("%s is declared again by source %q and watched again from %s", m.Name, m.Source, x.fmtTime(now))})
	}
	return x.finish(), nil
}

// Resume resumes a paused m at now. It starts clean, as new: nothing is
// expected of it until its next ping.
func Resume(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	m.Paused = false
	x.clean()
	return x.finish(), nil
}

// clean forgets everything but what is shown of the past (the last pings
// and the run numbering); with no expected occurrence, the monitor is new.
func (x *machine) clean() {
	s := x.s
	*s = State{RunSeq: s.RunSeq, LastPingAt: s.LastPingAt, LastPingKind: s.LastPingKind,
		LastSuccessAt: s.LastSuccessAt, Open: s.Open, Held: s.Held, Undeclared: s.Undeclared, Notified: s.Notified}
}

// Reconfigure recomputes m's state at now after a person or a source changed
// its configuration (schedule, grace, deadline, thresholds): occurrences
// follow the new schedule from the last ping, or from now when that would
// already be missed under the new settings.
func Reconfigure(m *Monitor, now time.Time) (*Transition, error) {
	x, err := newMachine(m)
	if err != nil {
		return nil, err
	}
	s := x.s
	if !m.Paused {
		// depends_on may have changed: a hold whose parents are no longer
		// depended on ends now.
		x.release(now)
	}
	if m.Paused || s.Expected.IsZero() {
		return x.finish(), nil
	}
	s.Expected = x.expectedAfter(s.LastPingAt)
	if !s.Expected.IsZero() && !s.Expected.Add(m.Grace()).After(now) {
		s.Expected = x.expectedAfter(now)
		x.resolve(IncidentMissed, now, "the schedule was changed")
	}
	switch {
	case m.DeadlineSeconds == 0:
		s.DeadlineOcc, s.DeadlineDone = time.Time{}, nil
		x.resolve(IncidentDeadline, now, "the deadline was removed")
	case s.DeadlineOcc.IsZero() || !s.DeadlineOcc.Add(m.Deadline()).After(now):
		if !x.isOpen(IncidentDeadline) {
			s.DeadlineOcc, s.DeadlineDone = s.Expected, nil
		}
	}
	// A changed failure threshold applies from the next failure.
	if x.isOpen(IncidentFailed) && s.Successes >= m.RecoveryThreshold {
		x.resolve(IncidentFailed, now, "the recovery threshold was lowered")
	}
	if m.Overlap == OverlapIgnore {
		x.resolve(IncidentOverlap, now, "overlap alerts were turned off")
	}
	if m.MinRuntimeSeconds == 0 {
		x.resolve(IncidentTooFast, now, "the min runtime was removed")
	}
	if m.EarlySeconds == 0 {
		x.resolve(IncidentEarly, now, "early alerts were turned off")
	}
	if m.TooOften != TooOftenAlert {
		x.resolve(IncidentTooOften, now, "too_often alerts were turned off")
	}
	return x.finish(), nil
}

// fmtTime formats t in the monitor's zone, briefly.
func (x *machine) fmtTime(t time.Time) string {
	loc := x.sched.Location()
	lt := t.In(loc)
	name := loc.String()
	if name == "UTC" || name == "" {
		name = "UTC"
	}
	if lt.Second() != 0 {
		return lt.Format("2006-01-02 15:04:05 ") + name
	}
	return lt.Format("2006-01-02 15:04 ") + name
}

func (x *machine) expectedPhrase() string {
	if iv, ok := x.sched.(Interval); ok {
		return fmt.Sprintf("ping within %s of its last ping, by %s", FormatDuration(iv.Every), x.fmtTime(x.s.Expected))
	}
	return fmt.Sprintf("run at %s", x.fmtTime(x.s.Expected))
}

func (x *machine) lastSeen(now time.Time) string {
	if x.s.LastPingAt.IsZero() {
		return "never"
	}
	return fmt.Sprintf("%s at %s (%s ago)", x.s.LastPingKind, x.fmtTime(x.s.LastPingAt), FormatDuration(now.Sub(x.s.LastPingAt)))
}

func runName(rid string, seq int64) string {
	if rid != "" {
		return fmt.Sprintf("%q", rid)
	}
	return fmt.Sprintf("#%d", seq)
}
