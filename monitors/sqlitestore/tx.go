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
	s  *Store
	tx *sql.Tx
}

var _ plan.Tx = txn{}

// InTx runs fn in a write transaction (BEGIN IMMEDIATE), committing when it
// returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx plan.Tx) error) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return fn(txn{s, tx}) })
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

func (t txn) exec(ctx context.Context, q string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, q, args...)
	return interpret(err)
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
		found, err := collect(rows, func(r scanner) (v pk, err error) { return v, r.Scan(&v.id, &v.key) })
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			out.Projects[f.key] = f.id
		}
	}
	pairs := make([][2]string, len(q.Slugs))
	for i, r := range q.Slugs {
		pairs[i] = [2]string{r.ProjectPingKey, r.Slug}
	}
	rows, err := t.tx.StmtContext(ctx, t.s.stmts.monitorLockBatch).QueryContext(ctx, jsonList(q.PingKeys), jsonList(pairs))
	if err != nil {
		return nil, err
	}
	out.Monitors, err = collect(rows, scanMonitor1)
	return out, err
}

// MonitorCreate inserts a monitor. One that fails fails only its pings:
// SQLite undoes a failed statement, not the transaction. No other writer
// can have created it meanwhile.
func (t txn) MonitorCreate(ctx context.Context, m *monitors.Monitor) (*monitors.Monitor, bool, error) {
	if err := t.MonitorInsert(ctx, m); err != nil {
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
	return t.exec(ctx, qMonitorInsert, args...)
}

// MonitorLock loads a monitor.
func (t txn) MonitorLock(ctx context.Context, projectID, id string) (*monitors.Monitor, error) {
	return scanMonitor(t.tx.QueryRowContext(ctx, qMonitorGet, projectID, id))
}

// MonitorClaimDue claims due monitors. No SKIP LOCKED: SQLite has one
// writer, so no two evaluators can claim the same monitor.
func (t txn) MonitorClaimDue(ctx context.Context, now time.Time, limit int) ([]*monitors.Monitor, error) {
	return queryAll(ctx, t.tx, qMonitorClaimDue, []any{micros(now), limit}, scanMonitor1)
}

// MonitorPostpone moves a monitor's next deadline.
func (t txn) MonitorPostpone(ctx context.Context, id string, until time.Time) error {
	return t.exec(ctx, qMonitorPostpone, id, micros(until))
}

// PersonFieldsGet reads a monitor's person fields.
func (t txn) PersonFieldsGet(ctx context.Context, projectID, id string) ([]string, error) {
	var fields strList
	err := t.tx.QueryRowContext(ctx, qMonitorPersonFieldsGet, projectID, id).Scan(&fields)
	return fields, interpret(err)
}

// PersonFieldsSet writes a monitor's person fields.
func (t txn) PersonFieldsSet(ctx context.Context, projectID, id string, fields []string) error {
	return t.exec(ctx, qMonitorPersonFieldsSet, projectID, id, jsonList(fields))
}

// SourceLock does nothing: the write transaction already serializes every
// declaration.
func (t txn) SourceLock(context.Context, string, string) error { return nil }

// SourceMonitors loads the monitors a declaration may touch.
func (t txn) SourceMonitors(ctx context.Context, projectID, source string, slugs []string) ([]*monitors.Monitor, map[string][]string, error) {
	fields := make(map[string][]string)
	ms, err := queryAll(ctx, t.tx, qMonitorSyncLock, []any{projectID, source, jsonList(slugs)}, func(r scanner) (*monitors.Monitor, error) {
		var pf strList
		m, err := scanMonitor(r, &pf)
		if err == nil && len(pf) > 0 {
			fields[m.ID] = pf
		}
		return m, err
	})
	return ms, fields, err
}

// DeliveryTargets reads the monitors' channels, their projects' channels,
// and the channels with a pending delivery of the incidents.
func (t txn) DeliveryTargets(ctx context.Context, monitorIDs, incidentIDs []string) (*plan.Targets, error) {
	out := &plan.Targets{Monitors: map[string]plan.MonitorTarget{}, Channels: map[string][]plan.ChannelTarget{},
		Pending: map[string]map[string]bool{}}
	ids := jsonList(monitorIDs)
	_, err := queryAll(ctx, t.tx, qDeliveryMonitors, []any{ids}, func(r scanner) (v struct{}, err error) {
		var (
			id  string
			mt  plan.MonitorTarget
			chs strList
		)
		err = r.Scan(&id, &mt.ProjectID, &chs)
		mt.Channels = chs
		out.Monitors[id] = mt
		return v, err
	})
	if err != nil {
		return nil, err
	}
	_, err = queryAll(ctx, t.tx, qDeliveryChannels, []any{ids}, func(r scanner) (v struct{}, err error) {
		var (
			project string
			c       plan.ChannelTarget
		)
		err = r.Scan(&project, &c.ID, &c.IsDefault)
		out.Channels[project] = append(out.Channels[project], c)
		return v, err
	})
	if err != nil || len(incidentIDs) == 0 {
		return out, err
	}
	_, err = queryAll(ctx, t.tx, qDeliveryPending, []any{jsonList(incidentIDs)}, func(r scanner) (v struct{}, err error) {
		var incident, channel string
		err = r.Scan(&incident, &channel)
		if out.Pending[incident] == nil {
			out.Pending[incident] = map[string]bool{}
		}
		out.Pending[incident][channel] = true
		return v, err
	})
	return out, err
}

// DeliveryInsert inserts deliveries, one statement each, and hands them to
// the enqueue hook.
func (t txn) DeliveryInsert(ctx context.Context, ds []*monitors.Delivery) ([]*monitors.Delivery, error) {
	var out []*monitors.Delivery
	for _, w := range ds {
		got, err := queryAll(ctx, t.tx, qDeliveryInsert, []any{w.ProjectID, w.IncidentID, w.EventID, string(w.Event),
			w.MonitorID, w.ChannelID, micros(w.EventAt)}, scanDelivery1)
		if err != nil {
			return nil, err
		}
		for _, d := range got {
			d.EventAt, d.Summary = w.EventAt, w.Summary
			out = append(out, d)
		}
	}
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
	dues, err := queryAll(ctx, t.tx, qIncidentRemind, []any{micros(now), micros(cutoff), limit},
		func(r scanner) (d due, err error) { return d, r.Scan(&d.id, &d.project, &d.monitor, &d.summary) })
	if err != nil {
		return nil, err
	}
	events := make([]*monitors.IncidentEvent, 0, len(dues))
	for _, d := range dues {
		e, err := scanEvent(t.tx.QueryRowContext(ctx, qReminderInsert, d.id, d.monitor, d.project, micros(now), d.summary))
		if err != nil {
			return nil, fmt.Errorf("remind incident %s: %w", d.id, err)
		}
		events = append(events, e)
	}
	return events, nil
}

// DeliveryLock loads a delivery.
func (t txn) DeliveryLock(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error) {
	return scanDelivery(t.tx.QueryRowContext(ctx, qDeliveryLock, projectID, id))
}

// DeliveryAttemptInsert logs an attempt and moves its delivery on.
func (t txn) DeliveryAttemptInsert(ctx context.Context, a *monitors.DeliveryAttempt, state monitors.DeliveryState, finished *time.Time) (*monitors.DeliveryAttempt, error) {
	var status any
	if a.StatusCode != 0 {
		status = a.StatusCode
	}
	got, err := scanAttempt(t.tx.QueryRowContext(ctx, qAttemptInsert, a.DeliveryID, a.ProjectID, a.IncidentID, a.ChannelID,
		string(a.Event), a.Attempt, micros(a.StartedAt), micros(a.FinishedAt), string(a.Outcome), status, a.Error,
		microsPtr(a.NextAttemptAt)))
	if err != nil {
		return nil, err
	}
	return got, t.exec(ctx, qDeliveryUpdate, a.DeliveryID, string(state), a.Attempt, microsPtr(a.NextAttemptAt), microsPtr(finished))
}

// HeartbeatLock reads the heartbeat, in the write transaction.
func (t txn) HeartbeatLock(ctx context.Context) (*time.Time, error) {
	var prev sql.NullInt64
	err := t.tx.QueryRowContext(ctx, qHeartbeatLock).Scan(&prev)
	return fromNullMicros(prev), interpret(err)
}

// HeartbeatStamp sets the heartbeat.
func (t txn) HeartbeatStamp(ctx context.Context, at time.Time) error {
	return t.exec(ctx, qHeartbeatStamp, micros(at))
}

// OutageUnsettled returns the oldest unsettled outage.
func (t txn) OutageUnsettled(ctx context.Context) (*monitors.Outage, error) {
	return optional(scanOutage(t.tx.QueryRowContext(ctx, qOutageUnsettled)))
}

// OutageInsert records an outage.
func (t txn) OutageInsert(ctx context.Context, start, end time.Time) (*monitors.Outage, error) {
	return scanOutage(t.tx.QueryRowContext(ctx, qOutageInsert, micros(start), micros(end)))
}

// OutageExtend moves an outage's end.
func (t txn) OutageExtend(ctx context.Context, id int64, end time.Time) (*monitors.Outage, error) {
	return scanOutage(t.tx.QueryRowContext(ctx, qOutageExtend, id, micros(end)))
}

// OutageSettle settles an outage no monitor is due for any more.
func (t txn) OutageSettle(ctx context.Context, id int64, now time.Time) (*monitors.Outage, error) {
	return optional(scanOutage(t.tx.QueryRowContext(ctx, qOutageSettle, id, micros(now))))
}

// OutagePostponed counts the monitors an outage postponed.
func (t txn) OutagePostponed(ctx context.Context, start time.Time, n int) error {
	return t.exec(ctx, qOutagePostponed, micros(start), n)
}

// ChannelLock loads a channel.
func (t txn) ChannelLock(ctx context.Context, projectID, id string) (*monitors.Channel, error) {
	return scanChannel(t.tx.QueryRowContext(ctx, qChannelGet, projectID, id))
}

// ChannelUpdate writes a channel.
func (t txn) ChannelUpdate(ctx context.Context, c *monitors.Channel) error {
	return t.exec(ctx, qChannelUpdate, c.ProjectID, c.ID, c.Name, configArg(c.Config), c.IsDefault, micros(c.UpdatedAt))
}

// ChannelUsers lists the monitors that name a channel.
func (t txn) ChannelUsers(ctx context.Context, projectID, id string) ([]string, error) {
	return queryAll(ctx, t.tx, qChannelUsers, []any{projectID, id}, scanString)
}

// ChannelDelete deletes a channel.
func (t txn) ChannelDelete(ctx context.Context, projectID, id string) error {
	return t.exec(ctx, qChannelDelete, projectID, id)
}

// UserAny reports whether a user exists; the write transaction holds the
// only write lock, so none can be made before it commits.
func (t txn) UserAny(ctx context.Context) (bool, error) {
	var exists bool
	err := t.tx.QueryRowContext(ctx, qUserExists).Scan(&exists)
	return exists, err
}

// UserInsert stores a user.
func (t txn) UserInsert(ctx context.Context, u *monitors.User) error {
	return t.exec(ctx, qUserInsert, u.ID, u.Email, u.PasswordHash, micros(u.CreatedAt))
}

// ProjectMemberInsert adds a member.
func (t txn) ProjectMemberInsert(ctx context.Context, projectID, userID string, at time.Time) error {
	return t.exec(ctx, qProjectMemberAdd, projectID, userID, micros(at))
}

// jsonList encodes a list as the JSON text SQLite reads with json_each.
func jsonList[T any](l []T) string {
	if l == nil {
		return "[]"
	}
	b, _ := json.Marshal(l) // lists of strings and pairs of strings always encode
	return string(b)
}
