package monitors

import (
	"fmt"
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
	// Retry is set while a failed attempt waits for its announced retry.
	Retry *RetryWait `json:"retry,omitempty"`
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
}

// RetryWait is an announced retry that has not arrived yet.
type RetryWait struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt,omitempty"` // the attempt number expected next, 0 when unknown
	FailAt  time.Time `json:"fail_at"`
}

// OpenRun is a run that started and has not finished.
type OpenRun struct {
	Seq       int64     `json:"seq"`
	RID       string    `json:"rid,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Attempt   int       `json:"attempt,omitempty"`
	Stuck     bool      `json:"stuck,omitempty"`
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
	s := m.State
	// Copy what is shared so the caller's monitor is untouched on error.
	s.Runs = append([]OpenRun(nil), s.Runs...)
	open := make(map[IncidentKind]time.Time, len(s.Open))
	for k, v := range s.Open {
		open[k] = v
	}
	s.Open = open
	if s.Retry != nil {
		r := *s.Retry
		s.Retry = &r
	}
	if s.Hold != nil {
		h := *s.Hold
		s.Hold = &h
	}
	return &machine{m: m, sched: sched, s: &s}, nil
}

// finish stores the new state and next deadline in the monitor.
func (x *machine) finish() *Transition {
	x.s.Status = x.status()
	if len(x.s.Open) == 0 {
		x.s.Open = nil
	}
	x.m.State = *x.s
	x.m.NextDeadlineAt = x.m.NextDeadline()
	return &x.tr
}

func (x *machine) status() Status {
	switch {
	case x.m.Paused:
		return StatusPaused
	case len(x.s.Open) > 0:
		return StatusDown
	case x.s.Retry != nil:
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
		x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentUpdate, Kind: kind, At: at, Summary: summary, RunSeq: runSeq})
		return
	}
	x.s.Open[kind] = at
	x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentOpen, Kind: kind, At: at, Summary: summary, RunSeq: runSeq})
}

func (x *machine) resolve(kind IncidentKind, at time.Time, summary string) {
	if _, ok := x.s.Open[kind]; !ok {
		return
	}
	delete(x.s.Open, kind)
	x.tr.Incidents = append(x.tr.Incidents, IncidentChange{Op: IncidentResolve, Kind: kind, At: at, Summary: summary})
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

func (x *machine) ping(p *Ping) {
	s := x.s
	if p.Kind == PingLog {
		return // a message only: no change of state
	}
	if x.m.Paused {
		// Recorded, but a paused monitor stays paused and judges nothing:
		// a person paused it, and only a person resumes it.
		return
	}
	s.LastPingAt, s.LastPingKind = p.At, p.Kind
	s.Expected = x.expectedAfter(p.At)
	if x.m.DeadlineSeconds > 0 && s.DeadlineOcc.IsZero() {
		s.DeadlineOcc = s.Expected
	}
	if x.isOpen(IncidentMissed) {
		x.resolve(IncidentMissed, p.At, fmt.Sprintf("received a %s ping at %s", p.Kind, x.fmtTime(p.At)))
	}
	// Any sign of life is the announced retry arriving, unless the ping says
	// it is an earlier attempt (a new occurrence starting while the retries
	// of the previous one go on).
	if r := s.Retry; r != nil && (p.Attempt == 0 || r.Attempt == 0 || p.Attempt >= r.Attempt) {
		s.Retry = nil
	}
	if s.Hold != nil && p.At.After(s.Hold.Until) {
		s.Hold = nil
	}

	switch p.Kind {
	case PingStart:
		x.start(p)
	case PingSkip:
		s.RunSeq++
		at := p.At
		x.tr.Runs = append(x.tr.Runs, RunChange{Run: Run{Seq: s.RunSeq, RID: p.RID, StartedAt: &at, FinishedAt: &at, Outcome: RunSkipped, Attempt: p.Attempt}})
	case PingSuccess, PingFail, PingCancel:
		x.finishRun(p)
	}
}

func (x *machine) start(p *Ping) {
	s := x.s
	if len(s.Runs) > 0 && x.m.Overlap == OverlapAlert {
		oldest := s.Runs[0]
		x.open(IncidentOverlap, p.At, s.RunSeq+1, fmt.Sprintf(
			"%s started a run at %s while %d earlier run(s) were still running (the oldest, %s, started at %s)",
			x.m.Name, x.fmtTime(p.At), len(s.Runs), runName(oldest.RID, oldest.Seq), x.fmtTime(oldest.StartedAt)))
	}
	s.RunSeq++
	run := OpenRun{Seq: s.RunSeq, RID: p.RID, StartedAt: p.At, Attempt: p.Attempt}
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

func (x *machine) finishRun(p *Ping) {
	s := x.s
	idx := -1
	if p.RID != "" {
		for i, r := range s.Runs {
			if r.RID == p.RID {
				idx = i
				break
			}
		}
	} else if len(s.Runs) > 0 {
		idx = 0 // without rid, a finish closes the oldest open run
	}

	fin := p.At
	run := Run{RID: p.RID, FinishedAt: &fin, Attempt: p.Attempt, ExitCode: p.ExitCode}
	var closed *OpenRun
	if idx >= 0 {
		r := s.Runs[idx]
		closed = &r
		s.Runs = append(s.Runs[:idx], s.Runs[idx+1:]...)
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
		x.success(p)
	case PingFail:
		run.Outcome = RunFailed
		run.WillRetry = p.RetryAt != nil
		x.failure(p, run)
	case PingCancel:
		run.Outcome = RunCancelled
	}
	x.tr.Runs = append(x.tr.Runs, RunChange{Run: run})
	if closed != nil {
		x.afterRunClosed(*closed, p.At, fmt.Sprintf("run %s ended (%s) at %s", runName(closed.RID, closed.Seq), p.Kind, x.fmtTime(p.At)))
	}
}

func (x *machine) success(p *Ping) {
	s := x.s
	s.LastSuccessAt = p.At
	s.Failures = 0
	s.Successes++
	if x.isOpen(IncidentFailed) && s.Successes >= x.m.RecoveryThreshold {
		x.resolve(IncidentFailed, p.At, fmt.Sprintf("succeeded at %s (%d consecutive success(es))", x.fmtTime(p.At), s.Successes))
	}
	if x.m.DeadlineSeconds > 0 {
		x.resolve(IncidentDeadline, p.At, fmt.Sprintf("succeeded at %s", x.fmtTime(p.At)))
		s.DeadlineOcc = s.Expected
	}
}

func (x *machine) failure(p *Ping, run Run) {
	s := x.s
	s.Successes = 0
	willRetry := p.RetryAt != nil
	if willRetry {
		next := 0
		if p.Attempt > 0 {
			next = p.Attempt + 1
		}
		s.Retry = &RetryWait{At: *p.RetryAt, Attempt: next, FailAt: p.At}
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
	if !m.Paused {
		x.time(now, opts)
	}
	return x.finish(), nil
}

// due reports whether a rule due at t fires at now, and postpones it with a
// hold when t fell inside an outage.
func (x *machine) due(t, now time.Time, opts TimeOptions) bool {
	if t.After(now) {
		return false
	}
	if !opts.OutageEnd.IsZero() && t.After(opts.OutageStart) && !t.After(opts.OutageEnd) {
		until := opts.OutageEnd.Add(x.m.Grace())
		if x.s.Hold == nil || x.s.Hold.Until.Before(until) {
			x.s.Hold = &Hold{OutageEnd: opts.OutageEnd, Until: until}
		}
	}
	if h := x.s.Hold; h != nil && !t.After(h.OutageEnd) && now.Before(h.Until) {
		return false
	}
	return true
}

func (x *machine) time(now time.Time, opts TimeOptions) {
	s := x.s
	grace := x.m.Grace()
	// A missed occurrence and a missed retry are both "missed": the first
	// to come due opens the incident. Occurrences are watched even while a
	// retry is awaited, since a scheduler starts each occurrence on its own.
	if !x.isOpen(IncidentMissed) {
		switch {
		case s.Retry != nil && x.due(s.Retry.At.Add(grace), now, opts):
			what := "the announced retry"
			if s.Retry.Attempt > 0 {
				what = fmt.Sprintf("retry attempt %d", s.Retry.Attempt)
			}
			x.open(IncidentMissed, now, 0, fmt.Sprintf("%s: %s, announced for %s, did not arrive (grace %s); last ping: %s",
				x.m.Name, what, x.fmtTime(s.Retry.At), FormatDuration(grace), x.lastSeen(now)))
			s.Retry = nil
		case !s.Expected.IsZero() && x.due(s.Expected.Add(grace), now, opts):
			x.open(IncidentMissed, now, 0, fmt.Sprintf("%s did not %s (grace %s); last ping: %s",
				x.m.Name, x.expectedPhrase(), FormatDuration(grace), x.lastSeen(now)))
		}
	}

	maxRT := x.m.MaxRuntime()
	for i := 0; i < len(s.Runs); i++ {
		r := &s.Runs[i]
		if x.due(r.StartedAt.Add(maxRT+AbandonAfter), now, opts) {
			x.abandon(i, now, fmt.Sprintf("no end reported %s after its max runtime", FormatDuration(AbandonAfter)))
			i--
			continue
		}
		if !r.Stuck && x.due(r.StartedAt.Add(maxRT), now, opts) {
			r.Stuck = true
			started := r.StartedAt
			x.tr.Runs = append(x.tr.Runs, RunChange{Run: Run{Seq: r.Seq, RID: r.RID, StartedAt: &started, Attempt: r.Attempt, Stuck: true}})
			x.open(IncidentStuck, now, r.Seq, fmt.Sprintf("%s: run %s started at %s and has not finished after %s (max runtime %s)",
				x.m.Name, runName(r.RID, r.Seq), x.fmtTime(r.StartedAt), FormatDuration(now.Sub(r.StartedAt)), FormatDuration(maxRT)))
		}
	}

	if d := x.m.Deadline(); d > 0 && !s.DeadlineOcc.IsZero() && !x.isOpen(IncidentDeadline) {
		if x.due(s.DeadlineOcc.Add(d), now, opts) {
			x.open(IncidentDeadline, now, 0, fmt.Sprintf("%s: the occurrence of %s had no success by %s (deadline %s); last ping: %s",
				x.m.Name, x.fmtTime(s.DeadlineOcc), x.fmtTime(s.DeadlineOcc.Add(d)), FormatDuration(d), x.lastSeen(now)))
		}
	}
	if s.Hold != nil && !now.Before(s.Hold.Until) {
		s.Hold = nil
	}
}

// NextDeadline returns the earliest instant at which time alone would change
// the monitor's state, or nil when only a ping or a person can.
func (m *Monitor) NextDeadline() *time.Time {
	s := &m.State
	if m.Paused {
		return nil
	}
	var best time.Time
	consider := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if h := s.Hold; h != nil && !t.After(h.OutageEnd) && t.Before(h.Until) {
			t = h.Until
		}
		if best.IsZero() || t.Before(best) {
			best = t
		}
	}
	_, missedOpen := s.Open[IncidentMissed]
	grace := m.Grace()
	if !missedOpen {
		if s.Retry != nil {
			consider(s.Retry.At.Add(grace))
		}
		if !s.Expected.IsZero() {
			consider(s.Expected.Add(grace))
		}
	}
	maxRT := m.MaxRuntime()
	for _, r := range s.Runs {
		if r.Stuck {
			consider(r.StartedAt.Add(maxRT + AbandonAfter))
		} else {
			consider(r.StartedAt.Add(maxRT))
		}
	}
	if _, open := s.Open[IncidentDeadline]; !open && m.DeadlineSeconds > 0 && !s.DeadlineOcc.IsZero() {
		consider(s.DeadlineOcc.Add(m.Deadline()))
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
		LastSuccessAt: s.LastSuccessAt, Open: s.Open}
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
		s.DeadlineOcc = time.Time{}
		x.resolve(IncidentDeadline, now, "the deadline was removed")
	case s.DeadlineOcc.IsZero() || !s.DeadlineOcc.Add(m.Deadline()).After(now):
		if !x.isOpen(IncidentDeadline) {
			s.DeadlineOcc = s.Expected
		}
	}
	// A changed failure threshold applies from the next failure.
	if x.isOpen(IncidentFailed) && s.Successes >= m.RecoveryThreshold {
		x.resolve(IncidentFailed, now, "the recovery threshold was lowered")
	}
	if m.Overlap == OverlapIgnore {
		x.resolve(IncidentOverlap, now, "overlap alerts were turned off")
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
