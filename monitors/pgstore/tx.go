package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// txn is a transaction of the store, as the planning layer drives it. Each
// method is one statement, or one pipelined batch.
type txn struct {
	db
	s  *Store
	tx pgx.Tx
}

var _ plan.Tx = txn{}

// InTx runs fn in a transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx plan.Tx) error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return fn(txn{db{tx}, s, tx}) })
}

// inTx runs fn in a transaction, committing when it returns nil. The
// transaction's BEGIN goes with its first statement (lazyTx).
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx := &lazyTx{pool: s.pool}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", interpret(err))
	}
	return nil
}

// PingBatchLoad resolves the project ping keys, locks every monitor of the
// batch, reserves the ping IDs and reads the projects' maintenance windows
// and late channels, in one round trip.
func (t txn) PingBatchLoad(ctx context.Context, q *plan.PingBatchQuery) (*plan.PingBatchRows, error) {
	out := &plan.PingBatchRows{Projects: make(map[string]string), Windows: make(map[string][]*monitors.MaintenanceWindow),
		Late: make(map[string]map[string]bool)}
	slugKeys, slugs := make([]string, len(q.Slugs)), make([]string, len(q.Slugs))
	for i, r := range q.Slugs {
		slugKeys[i], slugs[i] = r.ProjectPingKey, r.Slug
	}
	b := &pgx.Batch{}
	if len(q.ProjectKeys) > 0 {
		b.Queue(qProjectIDsByPingKey, q.ProjectKeys).Query(func(rows pgx.Rows) error {
			var id, key string
			_, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error {
				out.Projects[key] = id
				return nil
			})
			return err
		})
	}
	b.Queue(qMonitorLockBatch, q.PingKeys, slugKeys, slugs).Query(func(rows pgx.Rows) (err error) {
		out.Monitors, err = monitorRows(rows)
		return err
	})
	b.Queue(qPingIDs, q.IDs).Query(func(rows pgx.Rows) (err error) {
		// One target for every row: pgx.RowTo allocates one for each.
		var id int64
		out.PingIDs = make([]int64, 0, q.IDs)
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			out.PingIDs = append(out.PingIDs, id)
			return nil
		})
		return err
	})
	known, unknown := t.s.projects.split(q.PingKeys)
	b.Queue(qBatchProjects, unknown, q.ProjectKeys, known).Query(func(rows pgx.Rows) error {
		var (
			id          string
			docs, late  []string
			lateDefault []bool
		)
		_, err := pgx.ForEachRow(rows, []any{&id, &docs, &late, &lateDefault}, func() error {
			ws := make([]*monitors.MaintenanceWindow, len(docs))
			for i, doc := range docs {
				w, err := plan.DecodeWindow([]byte(doc))
				if err != nil {
					return fmt.Errorf("project %s: %w", id, err)
				}
				ws[i] = w
			}
			if len(late) != len(lateDefault) {
				return fmt.Errorf("project %s: %d late channels, %d flags", id, len(late), len(lateDefault))
			}
			channels := make(map[string]bool, len(late))
			for i, c := range late {
				channels[c] = lateDefault[i]
			}
			out.Windows[id], out.Late[id] = ws, channels
			return nil
		})
		return err
	})
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, interpret(err)
	}
	slices.Sort(out.PingIDs)
	t.s.projects.learn(out.Monitors)
	return out, nil
}

// projectsByKeyMax bounds projectsByKey: at most this many ping keys,
// forgotten all at once when full (a fleet pinged by more keys than this
// then finds some of its projects through the index again, as before).
const projectsByKeyMax = 1 << 16

// projectsByKey remembers the project of each monitor ping key the
// store's batches loaded, so that a batch's qBatchProjects reads the
// projects it knows by ID instead of finding them again through
// monitors_ping_key_key (0.08 to 0.09 ms of a batch's backend time in the
// benchmark; docs/benchmarks.md, Ingest, sixth round on PostgreSQL). A
// monitor never changes project. A key that names another monitor by now,
// or none, only makes the load read a project the batch does not need, or
// leave out one it does, which the planning layer then reads itself (a
// project missing from PingBatchRows.Windows and Late is read as before):
// what the batch sees of a project is always read in its own transaction.
type projectsByKey struct {
	mu  sync.Mutex
	m   map[string]string // monitor ping key → project ID
	ids map[string]string // the project IDs of m, each kept once
}

// split returns the projects of the keys it knows, each once, and the
// keys it does not know.
func (c *projectsByKey) split(keys []string) (known, unknown []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		p, ok := c.m[k]
		if !ok {
			unknown = append(unknown, k)
			continue
		}
		if !slices.Contains(known, p) {
			known = append(known, p)
		}
	}
	return known, unknown
}

// learn remembers the projects of ms's ping keys. The strings are copied,
// so that the map does not hold on to the buffers the rows were read
// into, and each project ID is kept once.
func (c *projectsByKey) learn(ms []*monitors.Monitor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.ids = make(map[string]string), make(map[string]string)
	}
	for _, m := range ms {
		if p, ok := c.m[m.PingKey]; ok && p == m.ProjectID {
			continue
		}
		if len(c.m) >= projectsByKeyMax {
			clear(c.m)
			clear(c.ids)
		}
		id, ok := c.ids[m.ProjectID]
		if !ok {
			id = strings.Clone(m.ProjectID)
			c.ids[id] = id
		}
		c.m[strings.Clone(m.PingKey)] = id
	}
}

// MonitorCreate inserts m under a savepoint. A slug another transaction
// inserted first, and has committed by now (the insert waited for it), is
// returned locked.
func (t txn) MonitorCreate(ctx context.Context, m *monitors.Monitor) (*monitors.Monitor, bool, error) {
	args, err := plan.MonitorArgs(m)
	if err != nil {
		return nil, false, err
	}
	sp, err := t.tx.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	if _, err := sp.Exec(ctx, qMonitorInsert, args...); err != nil {
		err = interpret(err)
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, false, errors.Join(err, rbErr)
		}
		if errors.Is(err, monitors.ErrConflict) {
			found, ferr := plan.One(ctx, t, plan.ScanMonitorRow, qMonitorGetBySlug+` FOR UPDATE`, m.ProjectID, m.Slug)
			if ferr == nil {
				return found, false, nil
			}
			if !errors.Is(ferr, monitors.ErrNotFound) {
				return nil, false, ferr
			}
		}
		return nil, false, err
	}
	if err := sp.Commit(ctx); err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// MonitorClaimDue claims due monitors with FOR UPDATE SKIP LOCKED: a row
// another evaluator (or ingest) holds is left to it.
//
// The claim must walk monitor_deadlines_due_idx in deadline order and stop after
// limit rows, so that it costs the same whether ten or ten thousand
// monitors are due. From statistics gathered while few monitors were due,
// the planner may instead read every due row with a bitmap scan and sort
// them, which makes each claim of a burst cost the whole burst. And as the
// statistics of monitors (gathered while few were due) put the monitors due
// at a handful, it may join them by reading all of monitors (measured at
// 1,000,000 monitors: 1 s per claim of a burst, and 0.26 s, most of it JIT
// compilation, for each pass with nothing due). The claim turns bitmap
// scans, sorts, sequential scans, hash and merge joins, materialization,
// memoization and JIT off (set_config with is_local), which leaves the ordered index
// scan and one primary-key look-up per claimed monitor, and puts them back
// after it, in the same round trip: the rest of the transaction plans as
// usual.
func (t txn) MonitorClaimDue(ctx context.Context, now time.Time, limit int) ([]*monitors.Monitor, error) {
	b := &pgx.Batch{}
	b.Queue(qClaimPlan)
	var ms []*monitors.Monitor
	b.Queue(qMonitorClaimDue, now.UTC(), limit).Query(func(rows pgx.Rows) (err error) {
		ms, err = monitorRows(rows)
		return err
	})
	for _, q := range qClaimPlanEnd {
		b.Queue(q)
	}
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return ms, nil
}

// SourceLock takes a transaction-level advisory lock on (project, source),
// across replicas.
func (t txn) SourceLock(ctx context.Context, projectID, source string) error {
	h := fnv.New64a()
	h.Write([]byte("vigil-source\x00" + projectID + "\x00" + source))
	_, err := t.tx.Exec(ctx, qSourceLock, int64(h.Sum64()))
	return interpret(err)
}

// DeliveryTargets reads the monitors' channels, their projects' channels,
// and the channels with a pending delivery of the incidents.
func (t txn) DeliveryTargets(ctx context.Context, monitorIDs, projectIDs, incidentIDs []string) (*plan.Targets, error) {
	out := &plan.Targets{Monitors: map[string]plan.MonitorTarget{}, Channels: map[string][]plan.ChannelTarget{},
		Pending: map[string]map[string]bool{}}
	b := &pgx.Batch{}
	if len(monitorIDs) > 0 {
		b.Queue(qDeliveryMonitors, monitorIDs).Query(func(rows pgx.Rows) error {
			var (
				id  string
				mt  plan.MonitorTarget
				chs []string
			)
			_, err := pgx.ForEachRow(rows, []any{&id, &mt.ProjectID, &chs}, func() error {
				mt.Channels = chs
				out.Monitors[id] = mt
				return nil
			})
			return err
		})
	}
	b.Queue(qDeliveryChannels, projectIDs).Query(func(rows pgx.Rows) error {
		var (
			project string
			c       plan.ChannelTarget
		)
		_, err := pgx.ForEachRow(rows, []any{&project, &c.ID, &c.Kind, &c.IsDefault, &c.NotifyLate, &c.GroupSeconds}, func() error {
			out.Channels[project] = append(out.Channels[project], c)
			return nil
		})
		return err
	})
	if len(incidentIDs) > 0 {
		b.Queue(qDeliveryPending, incidentIDs).Query(func(rows pgx.Rows) error {
			var incident, channel string
			_, err := pgx.ForEachRow(rows, []any{&incident, &channel}, func() error {
				if out.Pending[incident] == nil {
					out.Pending[incident] = map[string]bool{}
				}
				out.Pending[incident][channel] = true
				return nil
			})
			return err
		})
	}
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, interpret(err)
	}
	return out, nil
}

// GroupLock takes a transaction-level advisory lock on each channel's
// groups, in the order given (sorted by the caller), across replicas.
func (t txn) GroupLock(ctx context.Context, channelIDs []string) error {
	keys := make([]int64, len(channelIDs))
	for i, id := range channelIDs {
		h := fnv.New64a()
		h.Write([]byte("vigil-group\x00" + id))
		keys[i] = int64(h.Sum64())
	}
	_, err := t.tx.Exec(ctx, qGroupLock, keys)
	return interpret(err)
}

// DeliveryInsert inserts deliveries in one statement and hands them to the
// enqueue hook.
func (t txn) DeliveryInsert(ctx context.Context, ds []*monitors.Delivery) ([]*monitors.Delivery, error) {
	n := len(ds)
	projects, incidents, monitorIDs, channels, kinds := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	events, ats, reports, groups := make([]int64, n), make([]time.Time, n), make([]string, n), make([]*time.Time, n)
	for i, d := range ds {
		projects[i], incidents[i], monitorIDs[i], channels[i], kinds[i] = d.ProjectID, d.IncidentID, d.MonitorID, d.ChannelID, string(d.Event)
		events[i], ats[i], reports[i], groups[i] = d.EventID, d.EventAt.UTC(), d.ReportID, d.GroupAt
	}
	rows, err := t.tx.Query(ctx, qDeliveryInsert, projects, incidents, events, kinds, monitorIDs, channels, ats, reports, groups)
	if err != nil {
		return nil, interpret(err)
	}
	ins := plan.NewInserted(ds)
	_, err = pgx.ForEachRow(rows, ins.Dest(), ins.Row)
	if err != nil {
		return nil, interpret(err)
	}
	out := ins.Deliveries()
	if len(out) == 0 || t.s.enqueue == nil {
		return out, nil
	}
	if err := t.s.enqueue(ctx, t.tx, out); err != nil {
		return nil, fmt.Errorf("enqueue deliveries: %w", err)
	}
	return out, nil
}

// IncidentRemindDue stamps the incidents due for a reminder and records
// their reminder events, in one statement.
func (t txn) IncidentRemindDue(ctx context.Context, now, cutoff time.Time, limit int) ([]*monitors.IncidentEvent, error) {
	return plan.All(ctx, t, plan.ScanEvent, qIncidentRemind, now, cutoff, limit)
}

// monitorRows reads the monitors of a batch's query, each with the same
// scan targets.
func monitorRows(rows pgx.Rows) ([]*monitors.Monitor, error) {
	var sc plan.MonitorScanner
	return pgx.CollectRows(rows, func(pgx.CollectableRow) (*monitors.Monitor, error) { return sc.Row(pgRows{rows}) })
}
