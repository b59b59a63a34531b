package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/vigilhq/vigil/monitors"
)

// PingRecordBatch stores a batch of pings in one write transaction: one
// query loads every monitor of the batch, then prepared statements write
// the pings, the monitors' states, runs, incidents and events.
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
		pingKeys    = []string{}
		projectKeys = []string{}
		slugPairs   = [][2]string{}
	)
	for i, pp := range p.Pings {
		switch {
		case pp == nil:
			results[i].Err = errors.New("record ping: nil ping")
		case pp.PingKey != "":
			pingKeys = append(pingKeys, pp.PingKey)
		case pp.ProjectPingKey != "" && pp.Slug != "":
			projectKeys = append(projectKeys, pp.ProjectPingKey)
			slugPairs = append(slugPairs, [2]string{pp.ProjectPingKey, pp.Slug})
		default:
			results[i].Err = fmt.Errorf("record ping: %w: %w", monitors.ErrNotFound, errNoMonitor)
		}
	}
	pingKeysJSON, err := json.Marshal(pingKeys)
	if err != nil {
		return nil, fmt.Errorf("record pings: %w", err)
	}
	slugPairsJSON, err := json.Marshal(slugPairs)
	if err != nil {
		return nil, fmt.Errorf("record pings: %w", err)
	}

	var pings []*monitors.Ping
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		pings = make([]*monitors.Ping, len(p.Pings))
		projects := make(map[string]string) // project ping key → project ID
		if len(projectKeys) > 0 {
			keys, err := json.Marshal(projectKeys)
			if err != nil {
				return fmt.Errorf("record pings: %w", err)
			}
			rows, err := tx.StmtContext(ctx, s.stmts.projectIDsByKey).QueryContext(ctx, string(keys))
			if err != nil {
				return fmt.Errorf("load projects: %w", err)
			}
			type pk struct{ id, key string }
			found, err := collect(rows, func(r scanner) (pk, error) {
				var v pk
				return v, r.Scan(&v.id, &v.key)
			})
			if err != nil {
				return fmt.Errorf("load projects: %w", err)
			}
			for _, f := range found {
				projects[f.key] = f.id
			}
		}
		rows, err := tx.StmtContext(ctx, s.stmts.monitorLockBatch).QueryContext(ctx, string(pingKeysJSON), string(slugPairsJSON))
		if err != nil {
			return fmt.Errorf("load monitors: %w", err)
		}
		ms, err := collect(rows, scanMonitor)
		if err != nil {
			return fmt.Errorf("load monitors: %w", err)
		}
		loaded := newMonitorIndex()
		for _, m := range ms {
			loaded.add(m)
		}

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
			tr, err := monitors.ApplyPing(m, &ping)
			if err != nil {
				results[i].Err = fmt.Errorf("record ping for monitor %s: %w", m.ID, err)
				continue
			}
			pings[i] = &ping
			w.pings = append(w.pings, &ping)
			w.changes = append(w.changes, change{m: m, tr: tr, ping: &ping})
			if !touched[m.ID] {
				touched[m.ID] = true
				w.monitors = append(w.monitors, m)
			}
			results[i].MonitorID, results[i].Transition = m.ID, tr
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
			results[i].PingID = pings[i].ID
			pp.Ping.ID, pp.Ping.MonitorID = pings[i].ID, pings[i].MonitorID
		}
	}
	return results, nil
}

// createMonitors creates, from NewMonitor, the monitors that create=1 pings
// name by slug and that do not exist yet, in (project, slug) order. One that
// fails fails only its pings: SQLite undoes a failed statement, not the
// transaction.
func (s *Store) createMonitors(ctx context.Context, tx *sql.Tx, pings []*monitors.PingRecordParams,
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
		m, err := s.createMonitor(ctx, tx, wt.key, pings[wt.first])
		if err != nil {
			failed[wt.key] = err
			continue
		}
		loaded.add(m)
		results[wt.first].Created = true
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

// createMonitor inserts pp.NewMonitor for key.
func (s *Store) createMonitor(ctx context.Context, tx *sql.Tx, key slugKey, pp *monitors.PingRecordParams) (*monitors.Monitor, error) {
	if pp.NewMonitor == nil {
		return nil, fmt.Errorf("create monitor %q: no NewMonitor given", key.slug)
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
		return nil, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	args, err := monitorArgs(&m)
	if err != nil {
		return nil, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	if err := s.checkRoom(ctx, tx, key.project, 1); err != nil {
		return nil, fmt.Errorf("create monitor %q: %w", key.slug, err)
	}
	if _, err := tx.ExecContext(ctx, qMonitorInsert, args...); err != nil {
		return nil, fmt.Errorf("create monitor %q: %w", key.slug, interpret(err))
	}
	return &m, nil
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

// cleanPing returns a copy of p fit to store: storable text, and its own
// copies of the pointed-to values.
func cleanPing(p monitors.Ping) monitors.Ping {
	p.At = fromMicros(micros(p.At))
	if p.RetryAt != nil {
		t := fromMicros(micros(*p.RetryAt))
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
	out, err := queryAll(ctx, s.r, qPingList, []any{p.MonitorID, p.Before, limitArg(p.Limit)}, func(r scanner) (*monitors.Ping, error) {
		var (
			pg                monitors.Ping
			kind              string
			at                int64
			retryAt, exitCode sql.NullInt64
			duration          sql.NullInt64
		)
		err := r.Scan(&pg.ID, &pg.MonitorID, &kind, &at, &pg.RID, &pg.Attempt, &retryAt, &exitCode, &duration,
			&pg.Body, &pg.BodyTruncated, &pg.RemoteAddr, &pg.UserAgent)
		if err != nil {
			return nil, err
		}
		pg.Kind, pg.At, pg.RetryAt = monitors.PingKind(kind), fromMicros(at), fromNullMicros(retryAt)
		pg.ExitCode, pg.DurationMS = intFromNull(exitCode), int64FromNull(duration)
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
	out, err := queryAll(ctx, s.r, qRunList, []any{p.MonitorID, p.Before, limitArg(p.Limit)}, func(r scanner) (*monitors.Run, error) {
		var (
			run                monitors.Run
			outcome            string
			started, finished  sql.NullInt64
			duration, exitCode sql.NullInt64
		)
		err := r.Scan(&run.MonitorID, &run.Seq, &run.RID, &started, &finished, &outcome, &duration,
			&run.Attempt, &exitCode, &run.WillRetry, &run.Stuck)
		if err != nil {
			return nil, err
		}
		run.Outcome, run.StartedAt, run.FinishedAt = monitors.RunOutcome(outcome), fromNullMicros(started), fromNullMicros(finished)
		run.DurationMS, run.ExitCode = int64FromNull(duration), intFromNull(exitCode)
		return &run, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// Pruning works through monitors in chunks and deletes in bounded
// statements, each its own short write transaction, so that pings waiting
// for SQLite's one write lock never wait long.
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
	keepPings, keepRuns := int64(p.KeepPings), int64(p.KeepRuns)
	const keepAll = int64(1) << 62 // an offset past any history
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
			monitor   string
			ping, run sql.NullInt64
		}
		cuts, err := queryAll(ctx, s.r, qPingPruneCutoffs, []any{after, keepPings, keepRuns, pruneMonitorChunk},
			func(r scanner) (cut, error) {
				var c cut
				return c, r.Scan(&c.monitor, &c.ping, &c.run)
			})
		if err != nil {
			return deleted, fmt.Errorf("prune history: %w", err)
		}
		for _, c := range cuts {
			if c.ping.Valid {
				n, err := s.pruneChunks(ctx, qPingPrune, c.monitor, c.ping.Int64)
				deleted += n
				if err != nil {
					return deleted, fmt.Errorf("prune pings of monitor %s: %w", c.monitor, err)
				}
			}
			if c.run.Valid {
				n, err := s.pruneChunks(ctx, qRunPrune, c.monitor, c.run.Int64)
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
		res, err := s.w.ExecContext(ctx, q, monitorID, cutoff, pruneDeleteChunk)
		if err != nil {
			return deleted, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return deleted, err
		}
		deleted += n
		if n < pruneDeleteChunk {
			return deleted, nil
		}
	}
}
