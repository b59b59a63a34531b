package plan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/vigilhq/vigil/monitors"
)

// Scripts are the transaction scripts of a store: the methods of
// [monitors.Store] that load, decide and write. A store embeds Scripts, set
// up with itself as the Driver.
type Scripts struct {
	Driver Driver
	Q      *Queries
	// Log receives warnings, such as a monitor that could not be
	// evaluated. Nil discards them.
	Log *slog.Logger
	// MaxMonitorsPerProject bounds the monitors of each project: a write
	// that would create more fails with a *monitors.LimitError and writes
	// nothing of it. 0 or less is no limit.
	MaxMonitorsPerProject int
	// Sealer, when set, encrypts channel configs at rest (see sealed.go).
	// Without it they are stored as they are, and an encrypted one cannot
	// be read.
	Sealer Sealer
}

func (s *Scripts) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// builder collects a write set from transitions, in the order they happen.
type builder struct {
	w       WriteSet
	touched map[string]bool
	runs    map[runKey]int
	// overlay is what the changes so far did to incidents (see parents).
	overlay overlay
}

type runKey struct {
	monitor string
	seq     int64
}

// monitor adds m to the monitors written, once.
func (b *builder) monitor(m *monitors.Monitor) {
	if b.touched == nil {
		b.touched = make(map[string]bool)
	}
	if !b.touched[m.ID] {
		b.touched[m.ID] = true
		b.w.Monitors = append(b.w.Monitors, m)
	}
}

// change adds a transition of m, caused by ping (nil for none). With
// opens, a transition whose incident changes all open incidents goes to
// the write set's Opens.
func (b *builder) change(m *monitors.Monitor, tr *monitors.Transition, ping *monitors.Ping, opens bool) error {
	b.monitor(m)
	if tr == nil {
		return nil
	}
	for _, rc := range tr.Runs {
		r := rc.Run
		r.MonitorID = m.ID
		k := runKey{m.ID, r.Seq}
		if b.runs == nil {
			b.runs = make(map[runKey]int)
		}
		// A change carries the whole run, so the last change of a run wins.
		if i, ok := b.runs[k]; ok {
			b.w.Runs[i] = r
			continue
		}
		b.runs[k] = len(b.w.Runs)
		b.w.Runs = append(b.w.Runs, r)
	}
	dst := &b.w.Incidents
	if opens && onlyOpens(tr) {
		dst = &b.w.Opens
	}
	for _, ic := range tr.Incidents {
		iw := IncidentWrite{ProjectID: m.ProjectID, MonitorID: m.ID, Change: ic, Ping: ping}
		switch ic.Op {
		case monitors.IncidentOpen:
			id, err := uuid.NewV7()
			if err != nil {
				return fmt.Errorf("new incident id: %w", err)
			}
			iw.ID = id.String()
		case monitors.IncidentUpdate, monitors.IncidentResolve, monitors.IncidentClose, monitors.MonitorNotice,
			monitors.IncidentRelease:
		default:
			return fmt.Errorf("monitor %s: unknown incident operation %q", m.ID, ic.Op)
		}
		if b.overlay == nil {
			b.overlay = make(overlay)
		}
		b.overlay.note(m.ID, &iw)
		*dst = append(*dst, iw)
	}
	return nil
}

// onlyOpens reports whether every incident change of tr opens an incident,
// held or not, so that they can be written with the others of a claim at
// once: order matters only between changes to one incident.
func onlyOpens(tr *monitors.Transition) bool {
	for _, ic := range tr.Incidents {
		if ic.Op != monitors.IncidentOpen {
			return false
		}
	}
	return true
}

// done returns the write set with every monitor's next deadline derived
// from its state, so the stored deadline never disagrees with it.
func (b *builder) done() *WriteSet {
	for _, m := range b.w.Monitors {
		m.NextDeadlineAt = m.NextDeadline()
	}
	return &b.w
}

// write writes w (from builder.done) in tx, then routes and inserts the
// deliveries of the events it recorded. Every script that changes
// monitors ends with it.
func (s *Scripts) write(ctx context.Context, tx Tx, w *WriteSet) error {
	return s.writeLate(ctx, tx, w, &lateSet{s: s, tx: tx})
}

// writeLate is write with the late channels already read by late.
func (s *Scripts) writeLate(ctx context.Context, tx Tx, w *WriteSet, late *lateSet) error {
	if err := late.prepare(ctx, w); err != nil {
		return err
	}
	events, err := tx.Write(ctx, w)
	if err != nil {
		return err
	}
	if err := s.wakeDependents(ctx, tx, w); err != nil {
		return err
	}
	return s.deliver(ctx, tx, events, w.Monitors)
}

// modify loads a monitor under a lock, lets fn change it, checks that its
// ID and project did not change, and writes its whole row with the
// transition fn returns. It is MonitorModify and MonitorPatch.
func (s *Scripts) modify(ctx context.Context, tx Tx, projectID, id string, fn func(m *monitors.Monitor) (*monitors.Transition, error)) (*monitors.Monitor, error) {
	m, err := One(ctx, tx, ScanMonitorRow, s.Q.MonitorLock, projectID, id)
	if err != nil {
		return nil, err
	}
	if err := s.parents(ctx, tx, nil, m); err != nil {
		return nil, err
	}
	dependsOn := slices.Clone(m.DependsOn)
	tr, err := fn(m)
	if err != nil {
		return nil, &fnError{err}
	}
	if m.ID != id || m.ProjectID != projectID {
		return nil, errIdentity
	}
	if !slices.Equal(dependsOn, m.DependsOn) {
		if err := s.checkDependencies(ctx, tx, projectID, []*monitors.Monitor{m}); err != nil {
			return nil, &fnError{err}
		}
		// The parents are those of the new depends_on; a hold under a
		// monitor no longer depended on ends now.
		if err := s.parents(ctx, tx, nil, m); err != nil {
			return nil, err
		}
		more, err := monitors.ReleaseHeld(m, NowOr(m.UpdatedAt))
		if err != nil {
			return nil, err
		}
		tr = joinTransitions(tr, more)
	}
	b := builder{w: WriteSet{FullRow: true}}
	if err := b.change(m, tr, nil, false); err != nil {
		return nil, err
	}
	return m, s.write(ctx, tx, b.done())
}

// joinTransitions returns a's changes followed by b's; either may be nil.
func joinTransitions(a, b *monitors.Transition) *monitors.Transition {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &monitors.Transition{Runs: slices.Concat(a.Runs, b.Runs), Incidents: slices.Concat(a.Incidents, b.Incidents)}
}

// errIdentity is the one rule of every change to a monitor: its row is
// found by ID and project, which therefore cannot change.
var errIdentity = errors.New("the ID and project of a monitor cannot change")

// MonitorModify loads a monitor under a lock, lets p.Fn change it, and
// writes the whole row with the transition Fn returns, in one transaction.
// An error from Fn is returned as is, and nothing is written.
func (s *Scripts) MonitorModify(ctx context.Context, p *monitors.MonitorModifyParams) (*monitors.Monitor, error) {
	var m *monitors.Monitor
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		var err error
		m, err = s.modify(ctx, tx, p.ProjectID, p.ID, p.Fn)
		return wrapUnlessFn(err, "modify monitor "+p.ID)
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// fnError marks an error returned by a caller's function, which is
// returned as is.
type fnError struct{ err error }

func (e *fnError) Error() string { return e.err.Error() }
func (e *fnError) Unwrap() error { return e.err }

func wrapUnlessFn(err error, what string) error {
	var fe *fnError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return fe.err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// MonitorPatch is MonitorModify for a person: p.Fn also gets and sets the
// monitor's person fields, written in the same transaction.
func (s *Scripts) MonitorPatch(ctx context.Context, p *monitors.MonitorPatchParams) (*monitors.Monitor, []string, error) {
	var (
		m      *monitors.Monitor
		fields []string
	)
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		old, err := One(ctx, tx, scalar[[]string], s.Q.PersonFieldsGet, p.ProjectID, p.ID)
		if err != nil {
			return fmt.Errorf("patch monitor %s: %w", p.ID, err)
		}
		m, err = s.modify(ctx, tx, p.ProjectID, p.ID, func(m *monitors.Monitor) (*monitors.Transition, error) {
			tr, nf, err := p.Fn(m, old)
			if err != nil {
				return nil, err
			}
			fields = nf
			if fields == nil {
				fields = []string{}
			}
			return tr, nil
		})
		if err != nil {
			return wrapUnlessFn(err, "patch monitor "+p.ID)
		}
		_, err = tx.Exec(ctx, s.Q.PersonFieldsSet, p.ProjectID, p.ID, fields)
		return wrapUnlessFn(err, "patch monitor "+p.ID)
	})
	if err != nil {
		return nil, nil, err
	}
	return m, fields, nil
}

// syncAttempts bounds how often MonitorSync starts over after another
// writer inserted one of its slugs. Declarations of one source wait for
// each other, so only a person (or a ping with create=1) creating the same
// slug at the same moment makes it start over, and the second attempt then
// sees that monitor.
const syncAttempts = 3

// errSlugTaken marks an insert of a sync that lost a race for its slug.
type errSlugTaken struct{ err error }

func (e *errSlugTaken) Error() string { return e.err.Error() }
func (e *errSlugTaken) Unwrap() error { return e.err }

// MonitorSync applies a declaration in one transaction, under the source's
// lock, so two replicas of one application declaring at once take turns and
// the second finds the monitors the first created.
func (s *Scripts) MonitorSync(ctx context.Context, p *monitors.MonitorSyncParams) error {
	for attempt := 1; ; attempt++ {
		err := s.Driver.InTx(ctx, func(tx Tx) error {
			if err := tx.SourceLock(ctx, p.ProjectID, p.Source); err != nil {
				return fmt.Errorf("lock source %q: %w", p.Source, err)
			}
			fields := make(map[string][]string)
			current, err := All(ctx, tx, func(r Row) (*monitors.Monitor, error) {
				var pf []string
				m, err := ScanMonitor(r, &pf)
				if err == nil && len(pf) > 0 {
					fields[m.ID] = pf
				}
				return m, err
			}, s.Q.SourceMonitors, p.ProjectID, p.Source, nonNil(p.Slugs))
			if err != nil {
				return fmt.Errorf("lock monitors of source %q: %w", p.Source, err)
			}
			if err := s.resolveDeclared(ctx, tx, p.ProjectID, p.Declared); err != nil {
				return err
			}
			plan, err := p.Fn(current, fields)
			if err != nil || plan == nil {
				return err
			}
			// Declared depends_on may name monitors by slug, those of this
			// declaration among them: resolved and checked before any is
			// written.
			changed := slices.Clone(plan.Insert)
			for _, u := range plan.Update {
				changed = append(changed, u.Monitor)
			}
			if err := s.checkDependencies(ctx, tx, p.ProjectID, changed); err != nil {
				return err
			}
			if err := s.checkRoom(ctx, tx, p.ProjectID, len(plan.Insert)); err != nil {
				return err
			}
			for _, m := range plan.Insert {
				// A savepoint would not help: the conflict means another
				// writer committed this slug, and the whole plan was made
				// without it.
				if err := insertMonitor(ctx, tx, s.Q, m); err != nil {
					err = fmt.Errorf("insert monitor %q: %w", m.Slug, err)
					if errors.Is(err, monitors.ErrConflict) {
						return &errSlugTaken{err}
					}
					return err
				}
			}
			b := builder{w: WriteSet{FullRow: true}}
			for _, u := range plan.Update {
				if u.Monitor.ProjectID != p.ProjectID {
					return fmt.Errorf("sync monitor %s: it belongs to another project", u.Monitor.ID)
				}
				if err := b.change(u.Monitor, u.Transition, nil, false); err != nil {
					return err
				}
			}
			if err := s.write(ctx, tx, b.done()); err != nil {
				return fmt.Errorf("sync monitors of source %q: %w", p.Source, err)
			}
			return nil
		})
		var taken *errSlugTaken
		if errors.As(err, &taken) && attempt < syncAttempts {
			continue
		}
		return err
	}
}

// retryUnevaluable is how long a monitor that cannot be evaluated (its
// stored schedule no longer parses) waits before it is tried again, so that
// it neither blocks the evaluator nor is forgotten.
const retryUnevaluable = time.Minute

// MonitorEvaluateDue claims up to p.Limit due monitors, applies the time to
// each with monitors.ApplyTime, and writes the results in the same
// transaction. A monitor that cannot be evaluated is logged and tried again
// a minute later. The monitors an outage postponed are counted on it.
func (s *Scripts) MonitorEvaluateDue(ctx context.Context, p *monitors.EvaluateDueParams) (*monitors.EvaluateDueResult, error) {
	if p.Limit <= 0 {
		return nil, errors.New("evaluate due monitors: limit must be positive")
	}
	res := &monitors.EvaluateDueResult{}
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		res.Evaluated = res.Evaluated[:0]
		ms, err := tx.MonitorClaimDue(ctx, p.Now, p.Limit)
		if err != nil {
			return fmt.Errorf("claim due monitors: %w", err)
		}
		if p.Claimed != nil {
			p.Claimed(len(ms))
		}
		var (
			b         builder
			skipped   []*monitors.Monitor
			postponed int
		)
		maint := windows{s: s, tx: tx}
		late := &lateSet{s: s, tx: tx}
		// The parents' open incidents of the whole claim in one query; the
		// claim writes nothing before its end, and its own changes are
		// read through the builder's overlay.
		parents := parentSet{s: s, db: tx}
		if err := parents.load(ctx, ms); err != nil {
			return err
		}
		for _, m := range dependencyOrder(ms) {
			due := *m.NextDeadlineAt
			hold := m.State.Hold
			if err := maint.set(ctx, m, p.Now); err != nil {
				return err
			}
			if err := parents.set(ctx, &b, m); err != nil {
				return err
			}
			if err := late.set(ctx, m); err != nil {
				return err
			}
			tr, err := monitors.ApplyTime(m, p.Now, p.Options)
			if err != nil {
				s.log().ErrorContext(ctx, "cannot evaluate monitor", "monitor_id", m.ID, "error", err)
				skipped = append(skipped, m)
				continue
			}
			if p.Options.Postponed(hold, m.State.Hold) {
				postponed++
			}
			if err := b.change(m, tr, nil, true); err != nil {
				return err
			}
			res.Evaluated = append(res.Evaluated, monitors.EvaluatedMonitor{MonitorID: m.ID, DueAt: due, Transition: tr})
		}
		if err := s.writeLate(ctx, tx, b.done(), late); err != nil {
			return fmt.Errorf("write evaluated monitors: %w", err)
		}
		for _, m := range skipped {
			if _, err := tx.Exec(ctx, s.Q.MonitorPostpone, m.ID, p.Now.Add(retryUnevaluable).UTC()); err != nil {
				return fmt.Errorf("postpone monitor %s: %w", m.ID, err)
			}
		}
		if postponed == 0 || p.Options.OutageEnd.IsZero() {
			return nil
		}
		if _, err := tx.Exec(ctx, s.Q.OutagePostponed, p.Options.OutageStart.UTC(), postponed); err != nil {
			return fmt.Errorf("count postponed monitors: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// EvaluatorHeartbeat stamps the heartbeat shared by every evaluator and
// detects, records and settles outages of Vigil itself (the outage rule):
// a previous stamp more than p.Threshold before p.Now is an outage from
// that stamp to p.Now, or extends the outage still being settled, since
// monitors waiting from its first part must be postponed too; an outage
// settles once no unpaused monitor is due at or before its end.
func (s *Scripts) EvaluatorHeartbeat(ctx context.Context, p *monitors.EvaluatorHeartbeatParams) (*monitors.EvaluatorHeartbeat, error) {
	if p.Threshold <= 0 {
		return nil, errors.New("evaluator heartbeat: threshold must be positive")
	}
	now := p.Now.UTC()
	var res *monitors.EvaluatorHeartbeat
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		res = &monitors.EvaluatorHeartbeat{}
		prev, err := One(ctx, tx, scalar[*time.Time], s.Q.HeartbeatLock)
		if err != nil {
			return fmt.Errorf("lock evaluator heartbeat: %w", err)
		}
		res.Previous = prev
		stamp, gap := Heartbeat(prev, now, p.Threshold)
		if _, err := tx.Exec(ctx, s.Q.HeartbeatStamp, stamp); err != nil {
			return fmt.Errorf("stamp evaluator heartbeat: %w", err)
		}
		o, err := Optional(One(ctx, tx, scanOutage, s.Q.OutageUnsettled))
		if err != nil {
			return fmt.Errorf("read unsettled outage: %w", err)
		}
		if gap {
			res.Detected = true
			if o != nil {
				o, err = One(ctx, tx, scanOutage, s.Q.OutageExtend, o.ID, now)
			} else {
				o, err = One(ctx, tx, scanOutage, s.Q.OutageInsert, prev.UTC(), now)
			}
			if err != nil {
				return fmt.Errorf("record outage: %w", err)
			}
		}
		if o == nil {
			return nil
		}
		res.Outage = o
		settled, err := Optional(One(ctx, tx, scanOutage, s.Q.OutageSettle, o.ID, now))
		if err != nil {
			return fmt.Errorf("settle outage: %w", err)
		}
		if settled != nil {
			res.Outage, res.Settled = settled, true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Heartbeat returns the stamp a pass at now leaves on the heartbeat, whose
// previous stamp was prev (nil for none), and whether the gap since prev is
// an outage of Vigil: longer than threshold. Another replica's clock may be
// a little ahead, so the stamp never goes back.
func Heartbeat(prev *time.Time, now time.Time, threshold time.Duration) (stamp time.Time, outage bool) {
	if prev == nil {
		return now, false
	}
	if prev.After(now) {
		return *prev, false
	}
	return now, now.Sub(*prev) > threshold
}

// Pruning works through monitors in chunks and deletes in bounded
// statements, each its own short transaction, so it never holds many locks
// (or SQLite's one write lock) for long.
const (
	pruneMonitorChunk = 200
	pruneDeleteChunk  = 5000
)

// pruneCut is where a monitor's kept history ends: the newest ping ID and
// run seq not kept, nil when all are kept.
type pruneCut struct {
	monitorID string
	ping, run *int64
}

// PingPrune deletes the pings received before p.Before (when set), then
// all but the newest p.KeepPings pings and p.KeepRuns runs of each
// monitor, and returns how many rows (pings and runs) it deleted. A Keep
// value of 0 or less leaves that history alone, so that a zero value never
// deletes everything.
func (s *Scripts) PingPrune(ctx context.Context, p *monitors.PingPruneParams) (int64, error) {
	aged, err := s.pingAge(ctx, p)
	if err != nil {
		return aged, err
	}
	n, err := s.pingPruneCount(ctx, p)
	return aged + n, err
}

// pingAge removes the pings received before p.Before: by the store's own
// means when its Driver is a [PingAger], otherwise in chunks of the oldest
// pings, each its own statement.
func (s *Scripts) pingAge(ctx context.Context, p *monitors.PingPruneParams) (int64, error) {
	if p.Before.IsZero() {
		return 0, nil
	}
	if a, ok := s.Driver.(PingAger); ok {
		now := p.Now
		if now.IsZero() {
			now = time.Now()
		}
		n, err := a.PingAge(ctx, now.UTC(), p.Before.UTC())
		if err != nil {
			return n, fmt.Errorf("age out pings: %w", err)
		}
		return n, nil
	}
	var deleted int64
	for {
		n, err := s.w().Exec(ctx, s.Q.PingPruneBefore, p.Before.UTC(), pruneDeleteChunk)
		deleted += n
		if err != nil {
			return deleted, fmt.Errorf("age out pings received before %s: %w", p.Before.UTC().Format(time.RFC3339), err)
		}
		if n < pruneDeleteChunk {
			return deleted, nil
		}
	}
}

// pingPruneCount keeps the newest p.KeepPings pings and p.KeepRuns runs of
// each monitor.
func (s *Scripts) pingPruneCount(ctx context.Context, p *monitors.PingPruneParams) (int64, error) {
	if p.KeepPings <= 0 && p.KeepRuns <= 0 {
		return 0, nil
	}
	// An offset past any history means "nothing to prune" for a kind that
	// is kept whole.
	keepPings, keepRuns := int64(p.KeepPings), int64(p.KeepRuns)
	const keepAll = int64(1) << 62
	if keepPings <= 0 {
		keepPings = keepAll
	}
	if keepRuns <= 0 {
		keepRuns = keepAll
	}
	var (
		deleted int64
		after   string
	)
	for {
		cuts, err := All(ctx, s.r(), func(r Row) (c pruneCut, err error) { return c, r.Scan(&c.monitorID, &c.ping, &c.run) },
			s.Q.PingPruneCutoffs, after, keepPings, keepRuns, pruneMonitorChunk)
		if err != nil {
			return deleted, fmt.Errorf("prune history: %w", err)
		}
		for _, c := range cuts {
			for _, k := range []struct {
				q, what string
				cutoff  *int64
			}{{s.Q.PingPrune, "pings", c.ping}, {s.Q.RunPrune, "runs", c.run}} {
				var pruned int64
				for k.cutoff != nil {
					n, err := s.w().Exec(ctx, k.q, c.monitorID, *k.cutoff, pruneDeleteChunk)
					deleted += n
					pruned += n
					if err != nil {
						return deleted, fmt.Errorf("prune %s of monitor %s: %w", k.what, c.monitorID, err)
					}
					if n < pruneDeleteChunk {
						break
					}
				}
				if pruned > 0 && k.what == "runs" {
					if _, err := s.w().Exec(ctx, s.Q.RunPruned, c.monitorID); err != nil {
						return deleted, fmt.Errorf("count the pruning of the runs of monitor %s: %w", c.monitorID, err)
					}
				}
			}
		}
		if len(cuts) < pruneMonitorChunk {
			return deleted, nil
		}
		after = cuts[len(cuts)-1].monitorID
	}
}

// ChannelModify loads a channel under a lock, lets p.Fn change it and
// writes it.
func (s *Scripts) ChannelModify(ctx context.Context, p *monitors.ChannelModifyParams) (*monitors.Channel, error) {
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		c, err := s.openChannel(One(ctx, tx, scanChannel, s.Q.ChannelLock, p.ProjectID, p.ID))
		if err != nil {
			return fmt.Errorf("modify channel %s: %w", p.ID, err)
		}
		if err := p.Fn(c); err != nil {
			return err
		}
		c.ID, c.ProjectID = p.ID, p.ProjectID
		c.UpdatedAt = c.UpdatedAt.UTC().Truncate(time.Microsecond)
		config, err := s.configArg(c.ID, c.Config)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, s.Q.ChannelUpdate, c.ProjectID, c.ID, c.Name, config, c.IsDefault, c.UpdatedAt,
			c.NotifyLate, c.GroupSeconds, string(c.Report)); err != nil {
			return fmt.Errorf("modify channel %s: %w", p.ID, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return s.ChannelGet(ctx, p.ProjectID, p.ID)
}

// ChannelDelete deletes a channel that no monitor of its project names;
// otherwise it returns a *monitors.ChannelInUseError. The channel is
// locked first, so a delete and a check see the same monitors.
func (s *Scripts) ChannelDelete(ctx context.Context, projectID, id string) error {
	return s.Driver.InTx(ctx, func(tx Tx) error {
		if _, err := One(ctx, tx, scanChannel, s.Q.ChannelLock, projectID, id); err != nil {
			return fmt.Errorf("delete channel %s: %w", id, err)
		}
		users, err := All(ctx, tx, scalar[string], s.Q.ChannelUsers, projectID, id)
		if err != nil {
			return fmt.Errorf("delete channel %s: %w", id, err)
		}
		if len(users) > 0 {
			return &monitors.ChannelInUseError{ChannelID: id, Monitors: users}
		}
		if _, err := tx.Exec(ctx, s.Q.ChannelDelete, projectID, id); err != nil {
			return fmt.Errorf("delete channel %s: %w", id, err)
		}
		return nil
	})
}

// UserCreate stores a new user and their memberships in one transaction.
// With p.OnlyFirst, the users are locked for the check, so two first
// accounts cannot both be made.
func (s *Scripts) UserCreate(ctx context.Context, p *monitors.UserCreateParams) (*monitors.User, error) {
	u := &monitors.User{ID: p.ID, Email: monitors.NormalizeEmail(p.Email), PasswordHash: p.PasswordHash,
		CreatedAt: NowOr(p.Now)}
	err := s.Driver.InTx(ctx, func(tx Tx) error {
		if p.OnlyFirst {
			if s.Q.UserLock != "" {
				if _, err := tx.Exec(ctx, s.Q.UserLock); err != nil {
					return fmt.Errorf("lock users: %w", err)
				}
			}
			exists, err := One(ctx, tx, scalar[bool], s.Q.UserExists)
			if err != nil {
				return fmt.Errorf("count users: %w", err)
			}
			if exists {
				return fmt.Errorf("a user exists already: %w", monitors.ErrConflict)
			}
		}
		if _, err := tx.Exec(ctx, s.Q.UserInsert, u.ID, u.Email, u.PasswordHash, u.CreatedAt); err != nil {
			return err
		}
		for _, pid := range p.ProjectIDs {
			if _, err := tx.Exec(ctx, s.Q.ProjectMemberAdd, pid, u.ID, u.CreatedAt); err != nil {
				return fmt.Errorf("add to project %s: %w", pid, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create user: %w", err)
	}
	return u, nil
}

// NowOr returns t, or the current time when t is zero, in UTC at the
// stores' precision: the creation time of a row whose caller gave none.
func NowOr(t time.Time) time.Time {
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Truncate(time.Microsecond)
}
