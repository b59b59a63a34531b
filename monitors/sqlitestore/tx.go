package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// txn is a write transaction of the store, as the planning layer drives
// it. It holds SQLite's only write lock from its BEGIN IMMEDIATE, so reads
// need no FOR UPDATE: nothing they read can change before the commit.
type txn struct {
	db
	s  *Store
	tx *sql.Tx
}

var _ plan.Tx = txn{}

// InTx runs fn in a write transaction (BEGIN IMMEDIATE), committing when it
// returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx plan.Tx) error) error {
	// A transaction prepares nothing on the pool: that would wait for the
	// one writer connection, which the transaction holds. It runs the
	// statements the writer's cache holds prepared, and the others as they
	// are, to be prepared once it has ended. The hot path's statements are
	// prepared already (s.stmts).
	defer s.wStmts.preparePending(context.WithoutCancel(ctx))
	return s.inTx(ctx, func(tx *sql.Tx) error { return fn(txn{db{q: tx, stmts: s.wStmts, tx: tx}, s, tx}) })
}

func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", interpret(err))
	}
	return nil
}

// PingBatchLoad resolves the project ping keys and loads every monitor of
// the batch, with one query each. IDs are assigned as the pings are
// inserted.
func (t txn) PingBatchLoad(ctx context.Context, q *plan.PingBatchQuery) (*plan.PingBatchRows, error) {
	out := &plan.PingBatchRows{Projects: make(map[string]string)}
	if len(q.ProjectKeys) > 0 {
		type pk struct{ id, key string }
		rows, err := t.tx.StmtContext(ctx, t.s.stmts.projectIDsByKey).QueryContext(ctx, jsonList(q.ProjectKeys))
		if err != nil {
			return nil, err
		}
		found, err := collect(rows, func(r plan.Row) (v pk, err error) { return v, r.Scan(&v.id, &v.key) })
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			out.Projects[f.key] = f.id
		}
	}
	var rows *sql.Rows
	var err error
	if len(q.Slugs) == 0 {
		rows, err = t.tx.StmtContext(ctx, t.s.stmts.monitorLockKeys).QueryContext(ctx, jsonList(q.PingKeys))
	} else {
		pairs := make([][2]string, len(q.Slugs))
		for i, r := range q.Slugs {
			pairs[i] = [2]string{r.ProjectPingKey, r.Slug}
		}
		rows, err = t.tx.StmtContext(ctx, t.s.stmts.monitorLockBatch).QueryContext(ctx, jsonList(q.PingKeys), jsonList(pairs))
	}
	if err != nil {
		return nil, err
	}
	var sc plan.MonitorScanner
	out.Monitors, err = collect(rows, sc.Row)
	return out, err
}

// MonitorCreate inserts a monitor. One that fails fails only its pings:
// SQLite undoes a failed statement, not the transaction. No other writer
// can have created it meanwhile.
func (t txn) MonitorCreate(ctx context.Context, m *monitors.Monitor) (*monitors.Monitor, bool, error) {
	args, err := plan.MonitorArgs(m)
	if err == nil {
		_, err = t.Exec(ctx, qMonitorInsert, args...)
	}
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// MonitorClaimDue claims due monitors. No SKIP LOCKED: SQLite has one
// writer, so no two evaluators can claim the same monitor.
func (t txn) MonitorClaimDue(ctx context.Context, now time.Time, limit int) ([]*monitors.Monitor, error) {
	var sc plan.MonitorScanner
	return plan.All(ctx, t, sc.Row, qMonitorClaimDue, now, limit)
}

// SourceLock does nothing: the write transaction already serializes every
// declaration.
func (t txn) SourceLock(context.Context, string, string) error { return nil }

// DeliveryTargets reads the monitors' channels, their projects' channels,
// and the channels with a pending delivery of the incidents.
func (t txn) DeliveryTargets(ctx context.Context, monitorIDs, projectIDs, incidentIDs []string) (*plan.Targets, error) {
	out := &plan.Targets{Monitors: map[string]plan.MonitorTarget{}, Channels: map[string][]plan.ChannelTarget{},
		Pending: map[string]map[string]bool{}}
	if len(monitorIDs) == 0 {
		monitorIDs = []string{}
	}
	_, err := plan.All(ctx, t, func(r plan.Row) (v struct{}, err error) {
		var (
			id string
			mt plan.MonitorTarget
		)
		err = r.Scan(&id, &mt.ProjectID, &mt.Channels)
		out.Monitors[id] = mt
		return v, err
	}, qDeliveryMonitors, monitorIDs)
	if err != nil {
		return nil, err
	}
	_, err = plan.All(ctx, t, func(r plan.Row) (v struct{}, err error) {
		var (
			project string
			c       plan.ChannelTarget
		)
		err = r.Scan(&project, &c.ID, &c.Kind, &c.IsDefault, &c.NotifyLate, &c.GroupSeconds)
		out.Channels[project] = append(out.Channels[project], c)
		return v, err
	}, qDeliveryChannels, projectIDs)
	if err != nil || len(incidentIDs) == 0 {
		return out, err
	}
	_, err = plan.All(ctx, t, func(r plan.Row) (v struct{}, err error) {
		var incident, channel string
		err = r.Scan(&incident, &channel)
		if out.Pending[incident] == nil {
			out.Pending[incident] = map[string]bool{}
		}
		out.Pending[incident][channel] = true
		return v, err
	}, qDeliveryPending, incidentIDs)
	return out, err
}

// GroupLock does nothing: the write transaction holds SQLite's only write
// lock.
func (t txn) GroupLock(context.Context, []string) error { return nil }

// DeliveryInsert inserts deliveries with multi-row statements, in order,
// and hands them to the enqueue hook.
func (t txn) DeliveryInsert(ctx context.Context, ds []*monitors.Delivery) ([]*monitors.Delivery, error) {
	ins := plan.NewInserted(ds)
	for _, n := range chunks(len(ds)) {
		chunk := ds[:n]
		ds = ds[n:]
		args := make([]any, 0, n*10)
		for i, w := range chunk {
			args = append(args, i, w.ProjectID, w.IncidentID, w.EventID, string(w.Event), w.MonitorID, w.ChannelID,
				micros(w.EventAt), w.ReportID, microsPtr(w.GroupAt))
		}
		rows, err := t.tx.StmtContext(ctx, t.s.stmts.deliveryInsert.stmt(n)).QueryContext(ctx, args...)
		if err != nil {
			return nil, fmt.Errorf("insert deliveries: %w", interpret(err))
		}
		if _, err := collect(rows, func(r plan.Row) (struct{}, error) {
			if err := r.Scan(ins.Dest()...); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, ins.Row()
		}); err != nil {
			return nil, fmt.Errorf("insert deliveries: %w", err)
		}
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

// IncidentRemindDue stamps the incidents due for a reminder, then records
// their events: SQLite has no data-modifying CTEs.
func (t txn) IncidentRemindDue(ctx context.Context, now, cutoff time.Time, limit int) ([]*monitors.IncidentEvent, error) {
	type due struct{ id, project, monitor, summary string }
	dues, err := plan.All(ctx, t, func(r plan.Row) (d due, err error) { return d, r.Scan(&d.id, &d.project, &d.monitor, &d.summary) },
		qIncidentRemind, now, cutoff, limit)
	if err != nil {
		return nil, err
	}
	events := make([]*monitors.IncidentEvent, 0, len(dues))
	for _, d := range dues {
		e, err := plan.One(ctx, t, plan.ScanEvent, qReminderInsert, d.id, d.monitor, d.project, now, d.summary)
		if err != nil {
			return nil, fmt.Errorf("remind incident %s: %w", d.id, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// jsonList encodes a list as the JSON text SQLite reads with json_each.
func jsonList[T any](l []T) string {
	if l == nil {
		return "[]"
	}
	b, _ := json.Marshal(l) // lists of strings and pairs of strings always encode
	return string(b)
}
