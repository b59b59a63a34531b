package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// txn is a transaction of the store, as the planning layer drives it. Each
// method is one statement, or one pipelined batch.
type txn struct {
	s  *Store
	tx pgx.Tx
}

var _ plan.Tx = txn{}

// InTx runs fn in a transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx plan.Tx) error) error {
	return s.inTx(ctx, func(tx pgx.Tx) error { return fn(txn{s, tx}) })
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
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
// batch and reserves the ping IDs, in one round trip.
func (t txn) PingBatchLoad(ctx context.Context, q *plan.PingBatchQuery) (*plan.PingBatchRows, error) {
	out := &plan.PingBatchRows{Projects: make(map[string]string)}
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
		out.Monitors, err = pgx.CollectRows(rows, scanMonitorRow)
		return err
	})
	b.Queue(qPingIDs, q.IDs).Query(func(rows pgx.Rows) (err error) {
		out.PingIDs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
		return err
	})
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, interpret(err)
	}
	slices.Sort(out.PingIDs)
	return out, nil
}

// MonitorCreate inserts m under a savepoint. A slug another transaction
// inserted first, and has committed by now (the insert waited for it), is
// returned locked.
func (t txn) MonitorCreate(ctx context.Context, m *monitors.Monitor) (*monitors.Monitor, bool, error) {
	sp, err := t.tx.Begin(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := (txn{t.s, sp}).MonitorInsert(ctx, m); err != nil {
		if rbErr := sp.Rollback(ctx); rbErr != nil {
			return nil, false, errors.Join(err, rbErr)
		}
		if errors.Is(err, monitors.ErrConflict) {
			found, ferr := scanMonitor(t.tx.QueryRow(ctx, qMonitorGetBySlug+` FOR UPDATE`, m.ProjectID, m.Slug))
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

// MonitorInsert inserts a monitor.
func (t txn) MonitorInsert(ctx context.Context, m *monitors.Monitor) error {
	args, err := monitorArgs(m)
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx, qMonitorInsert, args...)
	return interpret(err)
}

// MonitorLock loads a monitor FOR UPDATE.
func (t txn) MonitorLock(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	return scanMonitor(t.tx.QueryRow(ctx, qMonitorGet+` FOR UPDATE`, projectID, id))
}

// MonitorClaimDue claims due monitors with FOR UPDATE SKIP LOCKED: a row
// another evaluator (or ingest) holds is left to it.
//
// The claim must walk monitors_due_idx in deadline order and stop after
// limit rows, so that it costs the same whether ten or ten thousand
// monitors are due. From statistics gathered while few monitors were due,
// the planner may instead read every due row with a bitmap scan and sort
// them, which makes each claim of a burst cost the whole burst. The claim's
// transaction turns bitmap scans and sorts off (set_config with is_local),
// in the same round trip, which leaves the ordered index scan.
func (t txn) MonitorClaimDue(ctx context.Context, now time.Time, limit int) ([]*monitors.Monitor, error) {
	b := &pgx.Batch{}
	b.Queue(qClaimPlan)
	var ms []*monitors.Monitor
	b.Queue(qMonitorClaimDue, now.UTC(), limit).Query(func(rows pgx.Rows) (err error) {
		ms, err = pgx.CollectRows(rows, scanMonitorRow)
		return err
	})
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, err
	}
	return ms, nil
}

// MonitorPostpone moves a monitor's next deadline.
func (t txn) MonitorPostpone(ctx context.Context, id string, until time.Time) error {
	_, err := t.tx.Exec(ctx, qMonitorPostpone, id, until.UTC())
	return err
}

// PersonFieldsGet reads a monitor's person fields.
func (t txn) PersonFieldsGet(ctx context.Context, projectID, id string) ([]string, error) {
	var fields []string
	err := t.tx.QueryRow(ctx, qMonitorPersonFieldsGet, projectID, id).Scan(&fields)
	return fields, interpret(err)
}

// PersonFieldsSet writes a monitor's person fields.
func (t txn) PersonFieldsSet(ctx context.Context, projectID, id string, fields []string) error {
	_, err := t.tx.Exec(ctx, qMonitorPersonFieldsSet, projectID, id, fields)
	return interpret(err)
}

// SourceLock takes a transaction-level advisory lock on (project, source),
// across replicas.
func (t txn) SourceLock(ctx context.Context, projectID, source string) error {
	h := fnv.New64a()
	h.Write([]byte("vigil-source\x00" + projectID + "\x00" + source))
	_, err := t.tx.Exec(ctx, qSourceLock, int64(h.Sum64()))
	return interpret(err)
}

// SourceMonitors loads and locks, in ID order like every other multi-row
// lock of the store, the monitors a declaration may touch.
func (t txn) SourceMonitors(ctx context.Context, projectID, source string, slugs []string) ([]*monitors.Monitor, map[string][]string, error) {
	rows, err := t.tx.Query(ctx, qMonitorSyncLock, projectID, source, nonNil(slugs))
	if err != nil {
		return nil, nil, interpret(err)
	}
	fields := make(map[string][]string)
	ms, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Monitor, error) {
		var pf []string
		m, err := scanMonitor(r, &pf)
		if err == nil && len(pf) > 0 {
			fields[m.ID] = pf
		}
		return m, err
	})
	return ms, fields, interpret(err)
}

// DeliveryTargets reads the monitors' channels, their projects' channels,
// and the channels with a pending delivery of the incidents.
func (t txn) DeliveryTargets(ctx context.Context, monitorIDs, incidentIDs []string) (*plan.Targets, error) {
	out := &plan.Targets{Monitors: map[string]plan.MonitorTarget{}, Channels: map[string][]plan.ChannelTarget{},
		Pending: map[string]map[string]bool{}}
	b := &pgx.Batch{}
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
	b.Queue(qDeliveryChannels, monitorIDs).Query(func(rows pgx.Rows) error {
		var (
			project string
			c       plan.ChannelTarget
		)
		_, err := pgx.ForEachRow(rows, []any{&project, &c.ID, &c.IsDefault}, func() error {
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

// DeliveryInsert inserts deliveries in one statement and hands them to the
// enqueue hook.
func (t txn) DeliveryInsert(ctx context.Context, ds []*monitors.Delivery) ([]*monitors.Delivery, error) {
	n := len(ds)
	projects, incidents, monitorIDs, channels, kinds := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	events, ats := make([]int64, n), make([]time.Time, n)
	for i, d := range ds {
		projects[i], incidents[i], monitorIDs[i], channels[i], kinds[i] = d.ProjectID, d.IncidentID, d.MonitorID, d.ChannelID, string(d.Event)
		events[i], ats[i] = d.EventID, d.EventAt.UTC()
	}
	rows, err := t.tx.Query(ctx, qDeliveryInsert, projects, incidents, events, kinds, monitorIDs, channels, ats)
	if err != nil {
		return nil, interpret(err)
	}
	byKey := make(map[[2]any]*monitors.Delivery, n)
	for _, d := range ds {
		byKey[[2]any{d.EventID, d.ChannelID}] = d
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*monitors.Delivery, error) {
		d, err := scanDelivery(r)
		if err == nil {
			if w := byKey[[2]any{d.EventID, d.ChannelID}]; w != nil {
				d.EventAt, d.Summary = w.EventAt, w.Summary
			}
		}
		return d, err
	})
	if err != nil {
		return nil, interpret(err)
	}
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
	rows, err := t.tx.Query(ctx, qIncidentRemind, now, cutoff, limit)
	if err != nil {
		return nil, interpret(err)
	}
	evs, err := pgx.CollectRows(rows, scanEventRow)
	return evs, interpret(err)
}

// DeliveryLock loads a delivery FOR UPDATE.
func (t txn) DeliveryLock(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error) {
	return scanDelivery(t.tx.QueryRow(ctx, qDeliveryLock, projectID, id))
}

// DeliveryAttemptInsert logs an attempt and moves its delivery on.
func (t txn) DeliveryAttemptInsert(ctx context.Context, a *monitors.DeliveryAttempt, state monitors.DeliveryState, finished *time.Time) (*monitors.DeliveryAttempt, error) {
	var status *int32
	if a.StatusCode != 0 {
		v := int32(a.StatusCode)
		status = &v
	}
	got, err := scanAttempt(t.tx.QueryRow(ctx, qAttemptInsert, a.DeliveryID, a.ProjectID, a.IncidentID, a.ChannelID,
		string(a.Event), a.Attempt, a.StartedAt, a.FinishedAt, string(a.Outcome), status, a.Error, a.NextAttemptAt))
	if err != nil {
		return nil, err
	}
	_, err = t.tx.Exec(ctx, qDeliveryUpdate, a.DeliveryID, string(state), a.Attempt, a.NextAttemptAt, finished)
	return got, interpret(err)
}

// HeartbeatLock locks the one heartbeat row: evaluators on every replica
// take turns, so a gap is seen, and recorded, by one of them.
func (t txn) HeartbeatLock(ctx context.Context) (*time.Time, error) {
	var prev *time.Time
	err := t.tx.QueryRow(ctx, qHeartbeatLock).Scan(&prev)
	return utcPtr(prev), interpret(err)
}

// HeartbeatStamp sets the heartbeat.
func (t txn) HeartbeatStamp(ctx context.Context, at time.Time) error {
	_, err := t.tx.Exec(ctx, qHeartbeatStamp, at.UTC())
	return err
}

// OutageUnsettled returns the oldest unsettled outage.
func (t txn) OutageUnsettled(ctx context.Context) (*monitors.Outage, error) {
	return optional(scanOutage(t.tx.QueryRow(ctx, qOutageUnsettled)))
}

// OutageInsert records an outage.
func (t txn) OutageInsert(ctx context.Context, start, end time.Time) (*monitors.Outage, error) {
	return scanOutage(t.tx.QueryRow(ctx, qOutageInsert, start.UTC(), end.UTC()))
}

// OutageExtend moves an outage's end.
func (t txn) OutageExtend(ctx context.Context, id int64, end time.Time) (*monitors.Outage, error) {
	return scanOutage(t.tx.QueryRow(ctx, qOutageExtend, id, end.UTC()))
}

// OutageSettle settles an outage no monitor is due for any more. A monitor
// another evaluator is still evaluating keeps its old deadline until that
// evaluator commits, so it keeps the outage open.
func (t txn) OutageSettle(ctx context.Context, id int64, now time.Time) (*monitors.Outage, error) {
	return optional(scanOutage(t.tx.QueryRow(ctx, qOutageSettle, id, now.UTC())))
}

// OutagePostponed counts the monitors an outage postponed.
func (t txn) OutagePostponed(ctx context.Context, start time.Time, n int) error {
	_, err := t.tx.Exec(ctx, qOutagePostponed, start.UTC(), n)
	return err
}

// ChannelLock loads a channel FOR UPDATE.
func (t txn) ChannelLock(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	return scanChannel(t.tx.QueryRow(ctx, qChannelGet+` FOR UPDATE`, projectID, id))
}

// ChannelUpdate writes a channel.
func (t txn) ChannelUpdate(ctx context.Context, c *monitors.Channel) error {
	_, err := t.tx.Exec(ctx, qChannelUpdate, c.ProjectID, c.ID, c.Name, configArg(c.Config), c.IsDefault, c.UpdatedAt)
	return interpret(err)
}

// ChannelUsers lists the monitors that name a channel.
func (t txn) ChannelUsers(ctx context.Context, projectID, id string) ([]string, error) {
	rows, err := t.tx.Query(ctx, qChannelUsers, projectID, id)
	if err != nil {
		return nil, interpret(err)
	}
	users, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return users, interpret(err)
}

// ChannelDelete deletes a channel.
func (t txn) ChannelDelete(ctx context.Context, projectID, id string) error {
	_, err := t.tx.Exec(ctx, qChannelDelete, projectID, id)
	return interpret(err)
}

// UserAny locks the users table against other writers and reports whether
// it has a row.
func (t txn) UserAny(ctx context.Context) (bool, error) {
	if _, err := t.tx.Exec(ctx, qUserLockFirst); err != nil {
		return false, err
	}
	var exists bool
	err := t.tx.QueryRow(ctx, qUserExists).Scan(&exists)
	return exists, err
}

// UserInsert stores a user.
func (t txn) UserInsert(ctx context.Context, u *monitors.User) error {
	_, err := t.tx.Exec(ctx, qUserInsert, u.ID, u.Email, u.PasswordHash, u.CreatedAt)
	return interpret(err)
}

// ProjectMemberInsert adds a member.
func (t txn) ProjectMemberInsert(ctx context.Context, projectID, userID string, at time.Time) error {
	_, err := t.tx.Exec(ctx, qProjectMemberAdd, projectID, userID, at.UTC())
	return interpret(err)
}

// optional turns "no row" into nil.
func optional[T any](v *T, err error) (*T, error) {
	if errors.Is(err, monitors.ErrNotFound) {
		return nil, nil
	}
	return v, err
}
