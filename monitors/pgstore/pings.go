package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
)

// PingRecordBatch stores a batch of pings in one transaction, in four round
// trips whatever its size: one to lock every monitor of the batch and
// reserve ping IDs, one per monitor to create (rare), one pipelined write of
// the pings, the monitors' states, runs, incidents and events, and the
// commit.
//
// Each ping is applied with monitors.ApplyPing, in slice order, to its
// monitor. A ping that names no monitor, whose monitor cannot be created
// (ErrConflict when its ping key is taken), or that the state machine
// refuses, fails alone in its result and is not stored; the others are. On
// success, each stored ping's ID and monitor ID are set in its params and
// its result.
func (s *Store) PingRecordBatch(ctx context.Context, p *monitors.PingRecordBatchParams) ([]monitors.PingRecordResult, error) {
	results := make([]monitors.PingRecordResult, len(p.Pings))
	if len(p.Pings) == 0 {
		return results, nil
	}
	var (
		pingKeys        []string
		projectKeys     []string
		slugKeys, slugs []string
	)
	for i, pp := range p.Pings {
		switch {
		case pp == nil:
			results[i].Err = errors.New("record ping: nil ping")
		case pp.PingKey != "":
			pingKeys = append(pingKeys, pp.PingKey)
		case pp.ProjectPingKey != "" && pp.Slug != "":
			projectKeys = append(projectKeys, pp.ProjectPingKey)
			slugKeys, slugs = append(slugKeys, pp.ProjectPingKey), append(slugs, pp.Slug)
		default:
			results[i].Err = fmt.Errorf("record ping: %w: %w", monitors.ErrNotFound, errNoMonitor)
		}
	}

	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// One round trip: the projects named by slug pings, every monitor of
		// the batch (locked), and IDs for the pings.
		b := &pgx.Batch{}
		projects := make(map[string]string) // project ping key → project ID
		if len(projectKeys) > 0 {
			b.Queue(qProjectIDsByPingKey, projectKeys).Query(func(rows pgx.Rows) error {
				var id, key string
				_, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error {
					projects[key] = id
					return nil
				})
				return err
			})
		}
		loaded := newMonitorIndex()
		b.Queue(qMonitorLockBatch, nonNil(pingKeys), nonNil(slugKeys), nonNil(slugs)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				m, err := scanMonitor(rows)
				if err != nil {
					return err
				}
				loaded.add(m)
			}
			return rows.Err()
		})
		var ids []int64
		b.Queue(qPingIDs, len(p.Pings)).Query(func(rows pgx.Rows) error {
			var err error
			ids, err = pgx.CollectRows(rows, pgx.RowTo[int64])
			return err
		})
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("load monitors: %w", interpret(err))
		}
		slices.Sort(ids) // reserved in order; assigned in slice order below

		if err := s.createMonitors(ctx, tx, p.Pings, results, projects, loaded); err != nil {
			return err
		}

		var (
			w       writeSet
			touched = make(map[string]bool)
		)
		for i, pp := range p.Pings {
			if results[i].Err != nil {
				continue
			}
			m := loaded.find(pp, projects)
			if m == nil {
				results[i].Err = fmt.Errorf("record ping: %w", monitors.ErrNotFound)
				continue
			}
			ping := cleanPing(pp.Ping)
			ping.MonitorID = m.ID
			ping.ID, ids = ids[0], ids[1:]
			tr, err := monitors.ApplyPing(m, &ping)
			if err != nil {
				results[i].Err = fmt.Errorf("record ping for monitor %s: %w", m.ID, err)
				continue
			}
			w.pings = append(w.pings, &ping)
			w.changes = append(w.changes, change{m: m, tr: tr, pingID: ping.ID})
			if !touched[m.ID] {
				touched[m.ID] = true
				w.monitors = append(w.monitors, m)
			}
			results[i].MonitorID, results[i].PingID, results[i].Transition = m.ID, ping.ID, tr
		}
		if err := s.write(ctx, tx, &w); err != nil {
			return fmt.Errorf("record pings: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i, pp := range p.Pings {
		if results[i].Err == nil {
			pp.Ping.ID, pp.Ping.MonitorID = results[i].PingID, results[i].MonitorID
		}
	}
	return results, nil
}

// createMonitors creates, from NewMonitor, the monitors that create=1 pings
// name by slug and that do not exist yet. Creations go in (project, slug)
// order, the same in every transaction, each under a savepoint so that one
// that fails fails only its pings. A monitor created meanwhile by another
// transaction is used as found.
func (s *Store) createMonitors(ctx context.Context, tx pgx.Tx, pings []*monitors.PingRecordParams,
	results []monitors.PingRecordResult, projects map[string]string, loaded *monitorIndex) error {
	type want struct {
		key   slugKey
		first int // the index of the first ping that asks for it
	}
	var wants []want
	seen := make(map[slugKey]bool)
	for i, pp := range pings {
		if results[i].Err != nil || !pp.Create || pp.PingKey != "" || loaded.find(pp, projects) != nil {
			continue
		}
		pid, ok := projects[pp.ProjectPingKey]
		if !ok {
			continue // not found, below
		}
		k := slugKey{pid, pp.Slug}
		if !seen[k] {
			seen[k] = true
			wants = append(wants, want{k, i})
		}
	}
	slices.SortFunc(wants, func(a, b want) int {
		return cmp.Or(cmp.Compare(a.key.project, b.key.project), cmp.Compare(a.key.slug, b.key.slug))
	})
	failed := make(map[slugKey]error)
	for _, wt := range wants {
		pp := pings[wt.first]
		m, created, err := s.createMonitor(ctx, tx, wt.key, pp)
		if err != nil {
			failed[wt.key] = err
			continue
		}
		loaded.add(m)
		results[wt.first].Created = created
	}
	for i, pp := range pings {
		if results[i].Err != nil || pp.PingKey != "" {
			continue
		}
		if err, ok := failed[slugKey{projects[pp.ProjectPingKey], pp.Slug}]; ok {
			results[i].Err = err
		}
	}
	return nil
}

// createMonitor inserts pp.NewMonitor for key under a savepoint. It reports
// created false when another transaction created the monitor first.
func (s *Store) createMonitor(ctx context.Context, tx pgx.Tx, key slugKey, pp *monitors.PingRecordParams) (*monitors.Monitor, bool, error) {
	if pp.NewMonitor == nil {
		return nil, false, fmt.Errorf("create monitor %q: no NewMonitor given", key.slug)
	}
	m := *pp.NewMonitor
	m.ProjectID, m.Slug = key.project, key.slug
	if m.Name == "" {
		m.Name = m.Slug
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = pp.Ping.At
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.CreatedAt
	}
	if err := m.Validate(); err != nil {
		return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	args, err := monitorArgs(&m)
	if err != nil {
		return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	if err := s.checkRoom(ctx, sp, key.project, 1); err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, errors.Join(err, rbErr))
		}
		return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	if _, err := sp.Exec(ctx, qMonitorInsert, args...); err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, errors.Join(err, rbErr))
		}
		err = interpret(err)
		if errors.Is(err, monitors.ErrConflict) {
			// Created meanwhile by another transaction, which has committed
			// by now (the insert waited for it), or a ping key clash.
			found, ferr := scanMonitor(tx.QueryRow(ctx, qMonitorGetBySlugForUpdate, key.project, key.slug))
			if ferr == nil {
				return found, false, nil
			}
			if !errors.Is(ferr, monitors.ErrNotFound) {
				return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, ferr)
			}
		}
		return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	if err := sp.Commit(ctx); err != nil {
		return nil, false, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	return &m, true, nil
}

type slugKey struct{ project, slug string }

// monitorIndex finds the loaded monitors of a batch by ping key and by slug.
type monitorIndex struct {
	byPingKey map[string]*monitors.Monitor
	bySlug    map[slugKey]*monitors.Monitor
}

func newMonitorIndex() *monitorIndex {
	return &monitorIndex{byPingKey: make(map[string]*monitors.Monitor), bySlug: make(map[slugKey]*monitors.Monitor)}
}

func (x *monitorIndex) add(m *monitors.Monitor) {
	x.byPingKey[m.PingKey] = m
	x.bySlug[slugKey{m.ProjectID, m.Slug}] = m
}

func (x *monitorIndex) find(pp *monitors.PingRecordParams, projects map[string]string) *monitors.Monitor {
	if pp.PingKey != "" {
		return x.byPingKey[pp.PingKey]
	}
	pid, ok := projects[pp.ProjectPingKey]
	if !ok {
		return nil
	}
	return x.bySlug[slugKey{pid, pp.Slug}]
}

// cleanPing returns a copy of p fit to store: UTC times at the database's
// precision, storable text, and its own copies of the pointed-to values.
func cleanPing(p monitors.Ping) monitors.Ping {
	p.At = p.At.UTC().Truncate(time.Microsecond)
	if p.RetryAt != nil {
		t := p.RetryAt.UTC().Truncate(time.Microsecond)
		p.RetryAt = &t
	}
	p.RID, p.Body = cleanText(p.RID), cleanText(p.Body)
	p.RemoteAddr, p.UserAgent = cleanText(p.RemoteAddr), cleanText(p.UserAgent)
	if p.ExitCode != nil {
		v := *p.ExitCode
		p.ExitCode = &v
	}
	if p.DurationMS != nil {
		v := *p.DurationMS
		p.DurationMS = &v
	}
	return p
}

// PingList returns a monitor's pings, newest first, before p.Before when it
// is not 0. A Limit of 0 or less returns them all. A monitor of another
// project is monitors.ErrNotFound.
func (s *Store) PingList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Ping, error) {
	if err := s.checkMonitor(ctx, p.ProjectID, p.MonitorID); err != nil {
		return nil, fmt.Errorf("list pings of monitor %s: %w", p.MonitorID, err)
	}
	rows, err := s.pool.Query(ctx, qPingList, p.MonitorID, p.Before, limitArg(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list pings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Ping, error) {
		var (
			pg       monitors.Ping
			kind     string
			attempt  int32
			exitCode *int32
		)
		err := r.Scan(&pg.ID, &pg.MonitorID, &kind, &pg.At, &pg.RID, &attempt, &pg.RetryAt, &exitCode, &pg.DurationMS,
			&pg.Body, &pg.BodyTruncated, &pg.RemoteAddr, &pg.UserAgent)
		if err != nil {
			return nil, err
		}
		pg.Kind, pg.Attempt, pg.ExitCode = monitors.PingKind(kind), int(attempt), intPtr(exitCode)
		pg.At, pg.RetryAt = utc(pg.At), utcPtr(pg.RetryAt)
		return &pg, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list pings: %w", err)
	}
	return out, nil
}

// RunList returns a monitor's runs, newest first, before the run of seq
// p.Before when it is not 0. A Limit of 0 or less returns them all. A
// monitor of another project is monitors.ErrNotFound.
func (s *Store) RunList(ctx context.Context, p *monitors.HistoryListParams) ([]*monitors.Run, error) {
	if err := s.checkMonitor(ctx, p.ProjectID, p.MonitorID); err != nil {
		return nil, fmt.Errorf("list runs of monitor %s: %w", p.MonitorID, err)
	}
	rows, err := s.pool.Query(ctx, qRunList, p.MonitorID, p.Before, limitArg(p.Limit))
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Run, error) {
		var (
			run      monitors.Run
			outcome  string
			attempt  int32
			exitCode *int32
		)
		err := r.Scan(&run.MonitorID, &run.Seq, &run.RID, &run.StartedAt, &run.FinishedAt, &outcome, &run.DurationMS,
			&attempt, &exitCode, &run.WillRetry, &run.Stuck)
		if err != nil {
			return nil, err
		}
		run.Outcome, run.Attempt, run.ExitCode = monitors.RunOutcome(outcome), int(attempt), intPtr(exitCode)
		run.StartedAt, run.FinishedAt = utcPtr(run.StartedAt), utcPtr(run.FinishedAt)
		return &run, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Pruning works through monitors in chunks and deletes in bounded
// statements, each its own short transaction, so it never holds many locks
// for long.
const (
	pruneMonitorChunk = 200
	pruneDeleteChunk  = 5000
)

// PingPrune deletes all but the newest p.KeepPings pings and p.KeepRuns
// runs of each monitor, and returns how many rows (pings and runs) it
// deleted. A Keep value of 0 or less leaves that history alone, so that a
// zero value never deletes everything.
func (s *Store) PingPrune(ctx context.Context, p *monitors.PingPruneParams) (int64, error) {
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
		type cut struct {
			monitor string
			ping    *int64
			run     *int64
		}
		rows, err := s.pool.Query(ctx, qPingPruneCutoffs, after, keepPings, keepRuns, pruneMonitorChunk)
		if err != nil {
			return deleted, fmt.Errorf("prune history: %w", err)
		}
		var cuts []cut
		var c cut
		_, err = pgx.ForEachRow(rows, []any{&c.monitor, &c.ping, &c.run}, func() error {
			cuts = append(cuts, c)
			return nil
		})
		if err != nil {
			return deleted, fmt.Errorf("prune history: %w", err)
		}
		for _, c := range cuts {
			if c.ping != nil {
				n, err := s.pruneChunks(ctx, qPingPrune, c.monitor, *c.ping)
				deleted += n
				if err != nil {
					return deleted, fmt.Errorf("prune pings of monitor %s: %w", c.monitor, err)
				}
			}
			if c.run != nil {
				n, err := s.pruneChunks(ctx, qRunPrune, c.monitor, *c.run)
				deleted += n
				if err != nil {
					return deleted, fmt.Errorf("prune runs of monitor %s: %w", c.monitor, err)
				}
			}
		}
		if len(cuts) < pruneMonitorChunk {
			return deleted, nil
		}
		after = cuts[len(cuts)-1].monitor
	}
}

// pruneChunks runs a prune statement until it deletes less than a chunk.
func (s *Store) pruneChunks(ctx context.Context, q, monitorID string, cutoff int64) (int64, error) {
	var deleted int64
	for {
		tag, err := s.pool.Exec(ctx, q, monitorID, cutoff, pruneDeleteChunk)
		if err != nil {
			return deleted, err
		}
		deleted += tag.RowsAffected()
		if tag.RowsAffected() < pruneDeleteChunk {
			return deleted, nil
		}
	}
}

// limitArg returns a LIMIT argument: NULL, no limit, for n <= 0.
func limitArg(n int) *int64 {
	if n <= 0 {
		return nil
	}
	v := int64(n)
	return &v
}

func intPtr(p *int32) *int {
	if p == nil {
		return nil
	}
	v := int(*p)
	return &v
}
