package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/vigilhq/vigil/monitors"
)

// The store methods of durable delivery: the deliveries that every incident
// event creates, in its own transaction, their attempt log, and reminders.

// EnqueueFunc adds the jobs that send deliveries. The store calls it in the
// transaction that records incident events, with the deliveries that
// transaction just created, so that an event, its deliveries and their jobs
// are committed together or not at all. An error aborts the transaction.
type EnqueueFunc func(ctx context.Context, tx *sql.Tx, ds []*monitors.Delivery) error

const (
	// eventReturning, appended to a statement that inserts incident events,
	// returns them.
	eventReturning = ` RETURNING id, incident_id, monitor_id, project_id, kind, at, summary`

	deliveryCols = `id, project_id, incident_id, monitor_id, channel_id, event_id, event, state, attempts,
		created_at, next_attempt_at, finished_at`
	// qDeliveryCreate creates the deliveries of incident events: one per
	// channel of the event's monitor, or per default channel of its project
	// when the monitor names none. A reminder skips a channel that still
	// has a delivery of the incident pending: reminders do not pile up
	// behind a receiver that is down.
	qDeliveryCreate = `INSERT INTO deliveries (project_id, incident_id, event_id, event, monitor_id, channel_id,
			state, attempts, created_at, next_attempt_at)
		SELECT e.project_id, e.incident_id, e.id, e.kind, e.monitor_id, c.id, 'pending', 0, e.at, e.at
		FROM incident_events e
		JOIN monitors m ON m.id = e.monitor_id
		JOIN channels c ON c.project_id = e.project_id
			AND CASE WHEN json_array_length(m.channels) = 0 THEN c.is_default
				ELSE c.id IN (SELECT value FROM json_each(m.channels)) END
		WHERE e.id IN (SELECT value FROM json_each(?1))
			AND (e.kind <> 'incident.reminder' OR NOT EXISTS (SELECT 1 FROM deliveries d
				WHERE d.incident_id = e.incident_id AND d.channel_id = c.id AND d.state = 'pending'))
		ORDER BY e.id, c.id
		RETURNING ` + deliveryCols
	// qDeliveryGet also finds the earliest earlier delivery of the same
	// incident to the same channel that is still pending.
	qDeliveryGet = `SELECT d.id, d.project_id, d.incident_id, d.monitor_id, d.channel_id, d.event_id, d.event,
			d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at, e.at, e.summary,
			coalesce(w.id, 0), w.next_attempt_at
		FROM deliveries d
		JOIN incident_events e ON e.id = d.event_id
		LEFT JOIN deliveries w ON w.id = (SELECT p.id FROM deliveries p
			WHERE p.incident_id = d.incident_id AND p.channel_id = d.channel_id AND p.event_id < d.event_id
				AND p.state = 'pending'
			ORDER BY p.event_id LIMIT 1)
		WHERE d.project_id = ?1 AND d.id = ?2`
	// qDeliveryLock reads the delivery in the write transaction. No FOR
	// UPDATE: the transaction holds SQLite's only write lock.
	qDeliveryLock = `SELECT incident_id, channel_id, event, state, attempts FROM deliveries
		WHERE project_id = ?1 AND id = ?2`
	qDeliveryUpdate = `UPDATE deliveries SET state = ?2, attempts = ?3, next_attempt_at = ?4, finished_at = ?5
		WHERE id = ?1`
	attemptCols = `id, delivery_id, project_id, incident_id, channel_id, event, attempt, started_at,
		finished_at, outcome, status_code, error, next_attempt_at`
	qAttemptInsert = `INSERT INTO delivery_attempts (delivery_id, project_id, incident_id, channel_id, event,
			attempt, started_at, finished_at, outcome, status_code, error, next_attempt_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING ` + attemptCols
	qDeliveryList = `SELECT d.id, d.project_id, d.incident_id, d.monitor_id, d.channel_id, d.event_id, d.event,
			d.state, d.attempts, d.created_at, d.next_attempt_at, d.finished_at, e.at, e.summary, 0, NULL
		FROM deliveries d JOIN incident_events e ON e.id = d.event_id
		WHERE d.project_id = ?1 AND d.incident_id IN (SELECT value FROM json_each(?2))
		ORDER BY d.incident_id, d.event_id, d.channel_id`
	qAttemptList = `SELECT ` + attemptCols + ` FROM delivery_attempts
		WHERE project_id = ?1 AND incident_id IN (SELECT value FROM json_each(?2)) ORDER BY delivery_id, attempt`
	// qIncidentRemind stamps the open incidents due for a reminder. One
	// writer at a time: no two calls remind one incident twice.
	qIncidentRemind = `UPDATE incidents SET reminded_at = ?1
		WHERE id IN (SELECT id FROM incidents
			WHERE resolved_at IS NULL AND coalesce(reminded_at, opened_at) <= ?2
			ORDER BY opened_at, id LIMIT ?3)
		RETURNING id, project_id, monitor_id, summary`
	qReminderInsert = `INSERT INTO incident_events (incident_id, monitor_id, project_id, kind, at, summary)
		VALUES (?, ?, ?, 'incident.reminder', ?, ?)` + eventReturning
)

// DB returns the store's one writer connection, for River's client to
// share: River's writes then take turns with the store's instead of
// failing with SQLITE_BUSY.
func (s *Store) DB() *sql.DB { return s.w }

// scanEvent scans a row returned by eventReturning.
func scanEvent(r scanner) (*monitors.IncidentEvent, error) {
	var (
		e    monitors.IncidentEvent
		kind string
		at   int64
	)
	if err := r.Scan(&e.ID, &e.IncidentID, &e.MonitorID, &e.ProjectID, &kind, &at, &e.Summary); err != nil {
		return nil, err
	}
	e.Kind, e.At = monitors.IncidentEventKind(kind), fromMicros(at)
	return &e, nil
}

// insertEvents runs a statement that inserts incident events and returns
// them, appending them to events.
func insertEvents(ctx context.Context, stmt *sql.Stmt, events *[]*monitors.IncidentEvent, args ...any) error {
	rows, err := stmt.QueryContext(ctx, args...)
	if err != nil {
		return interpret(err)
	}
	evs, err := collect(rows, scanEvent)
	if err != nil {
		return interpret(err)
	}
	*events = append(*events, evs...)
	return nil
}

// deliver creates the deliveries of events in tx and hands them to the
// enqueue hook. Every path that inserts incident events calls it in the
// same transaction.
func (s *Store) deliver(ctx context.Context, tx *sql.Tx, events []*monitors.IncidentEvent) error {
	if len(events) == 0 {
		return nil
	}
	ids := make([]int64, len(events))
	byID := make(map[int64]*monitors.IncidentEvent, len(events))
	for i, e := range events {
		ids[i], byID[e.ID] = e.ID, e
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return fmt.Errorf("create deliveries: %w", err)
	}
	ds, err := queryAll(ctx, tx, qDeliveryCreate, []any{string(idsJSON)}, func(r scanner) (*monitors.Delivery, error) {
		return scanDelivery(r)
	})
	if err != nil {
		return fmt.Errorf("create deliveries: %w", interpret(err))
	}
	for _, d := range ds {
		if e := byID[d.EventID]; e != nil {
			d.EventAt, d.Summary = e.At, e.Summary
		}
	}
	if len(ds) == 0 || s.enqueue == nil {
		return nil
	}
	if err := s.enqueue(ctx, tx, ds); err != nil {
		return fmt.Errorf("enqueue deliveries: %w", err)
	}
	return nil
}

func scanDelivery(r scanner, extra ...any) (*monitors.Delivery, error) {
	var (
		d              monitors.Delivery
		event, state   string
		created        int64
		next, finished sql.NullInt64
	)
	dest := append([]any{&d.ID, &d.ProjectID, &d.IncidentID, &d.MonitorID, &d.ChannelID, &d.EventID, &event,
		&state, &d.Attempts, &created, &next, &finished}, extra...)
	if err := r.Scan(dest...); err != nil {
		return nil, interpret(err)
	}
	d.Event, d.State = monitors.IncidentEventKind(event), monitors.DeliveryState(state)
	d.CreatedAt, d.NextAttemptAt, d.FinishedAt = fromMicros(created), fromNullMicros(next), fromNullMicros(finished)
	return &d, nil
}

// scanDeliveryFull scans qDeliveryGet and qDeliveryList.
func scanDeliveryFull(r scanner) (*monitors.Delivery, error) {
	var (
		at      int64
		summary string
		waits   int64
		waitsAt sql.NullInt64
	)
	d, err := scanDelivery(r, &at, &summary, &waits, &waitsAt)
	if err != nil {
		return nil, err
	}
	d.EventAt, d.Summary, d.WaitsFor, d.WaitsForNextAttemptAt = fromMicros(at), summary, waits, fromNullMicros(waitsAt)
	return d, nil
}

func scanAttempt(r scanner) (*monitors.DeliveryAttempt, error) {
	var (
		a                 monitors.DeliveryAttempt
		event, outcome    string
		started, finished int64
		status, next      sql.NullInt64
	)
	err := r.Scan(&a.ID, &a.DeliveryID, &a.ProjectID, &a.IncidentID, &a.ChannelID, &event, &a.Attempt,
		&started, &finished, &outcome, &status, &a.Error, &next)
	if err != nil {
		return nil, interpret(err)
	}
	a.Event, a.Outcome = monitors.IncidentEventKind(event), monitors.AttemptOutcome(outcome)
	a.StartedAt, a.FinishedAt, a.NextAttemptAt = fromMicros(started), fromMicros(finished), fromNullMicros(next)
	a.StatusCode = int(status.Int64)
	return &a, nil
}

// DeliveryGet returns a delivery of the project, with the event it carries
// and the earlier pending delivery it waits for, if any.
func (s *Store) DeliveryGet(ctx context.Context, projectID string, id int64) (*monitors.Delivery, error) {
	d, err := scanDeliveryFull(s.r.QueryRowContext(ctx, qDeliveryGet, projectID, id))
	if err != nil {
		return nil, fmt.Errorf("get delivery %d: %w", id, err)
	}
	return d, nil
}

// DeliveryAttemptRecord logs one attempt of a pending delivery and moves
// the delivery on, in one write transaction.
func (s *Store) DeliveryAttemptRecord(ctx context.Context, p *monitors.DeliveryAttemptRecordParams) (*monitors.DeliveryAttempt, error) {
	state, next, finished, err := attemptEffect(p)
	if err != nil {
		return nil, err
	}
	var a *monitors.DeliveryAttempt
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var (
			incident, channel, event, current string
			attempts                          int
		)
		err := tx.QueryRowContext(ctx, qDeliveryLock, p.ProjectID, p.DeliveryID).Scan(&incident, &channel, &event, &current, &attempts)
		if err != nil {
			return fmt.Errorf("record attempt of delivery %d: %w", p.DeliveryID, interpret(err))
		}
		if monitors.DeliveryState(current) != monitors.DeliveryPending {
			return fmt.Errorf("record attempt of delivery %d: it is %s already: %w", p.DeliveryID, current, monitors.ErrConflict)
		}
		var status any
		if p.StatusCode != 0 {
			status = p.StatusCode
		}
		a, err = scanAttempt(tx.QueryRowContext(ctx, qAttemptInsert, p.DeliveryID, p.ProjectID, incident, channel, event,
			attempts+1, micros(p.StartedAt), micros(p.FinishedAt), string(p.Outcome), status,
			attemptErrorText(p.Error), microsPtr(next)))
		if err != nil {
			return fmt.Errorf("record attempt of delivery %d: %w", p.DeliveryID, err)
		}
		if _, err := tx.ExecContext(ctx, qDeliveryUpdate, p.DeliveryID, string(state), attempts+1, microsPtr(next),
			microsPtr(finished)); err != nil {
			return fmt.Errorf("record attempt of delivery %d: %w", p.DeliveryID, interpret(err))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// attemptEffect checks p and returns the delivery's state, next attempt and
// finish time after the attempt.
func attemptEffect(p *monitors.DeliveryAttemptRecordParams) (monitors.DeliveryState, *time.Time, *time.Time, error) {
	finished := p.FinishedAt
	switch p.Outcome {
	case monitors.AttemptSuccess:
		return monitors.DeliverySent, nil, &finished, nil
	case monitors.AttemptFailed:
		return monitors.DeliveryFailed, nil, &finished, nil
	case monitors.AttemptRetry:
		if p.NextAttemptAt == nil {
			return "", nil, nil, errors.New("record attempt: a retry needs the time of the next attempt")
		}
		return monitors.DeliveryPending, p.NextAttemptAt, nil, nil
	}
	return "", nil, nil, fmt.Errorf("record attempt: unknown outcome %q", p.Outcome)
}

// attemptErrorText makes an attempt's error storable and bounded, as
// pgstore does.
func attemptErrorText(s string) string {
	s = cleanText(s)
	if utf8.RuneCountInString(s) <= monitors.DeliveryErrorMax {
		return s
	}
	return string([]rune(s)[:monitors.DeliveryErrorMax-1]) + "…"
}

// DeliveryList returns the deliveries of the project's incidents with those
// IDs, each with its attempts, by incident, event and channel.
func (s *Store) DeliveryList(ctx context.Context, p *monitors.DeliveryListParams) ([]*monitors.Delivery, error) {
	if len(p.IncidentIDs) == 0 {
		return []*monitors.Delivery{}, nil
	}
	ids, err := encodeStrings(p.IncidentIDs)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	ds, err := queryAll(ctx, s.r, qDeliveryList, []any{p.ProjectID, ids}, scanDeliveryFull)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	as, err := queryAll(ctx, s.r, qAttemptList, []any{p.ProjectID, ids}, scanAttempt)
	if err != nil {
		return nil, fmt.Errorf("list delivery attempts: %w", err)
	}
	byID := make(map[int64]*monitors.Delivery, len(ds))
	for _, d := range ds {
		d.AttemptLog = []*monitors.DeliveryAttempt{}
		byID[d.ID] = d
	}
	for _, a := range as {
		if d := byID[a.DeliveryID]; d != nil {
			d.AttemptLog = append(d.AttemptLog, a)
		}
	}
	return ds, nil
}

// IncidentRemind records a reminder event for each open incident whose
// opening or last reminder is p.Interval or more before p.Now, with its
// deliveries and their jobs, in one write transaction.
func (s *Store) IncidentRemind(ctx context.Context, p *monitors.IncidentRemindParams) ([]*monitors.IncidentEvent, error) {
	if p.Interval <= 0 {
		return nil, errors.New("remind incidents: the interval must be positive")
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	now := micros(p.Now)
	var events []*monitors.IncidentEvent
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		type due struct{ id, project, monitor, summary string }
		dues, err := queryAll(ctx, tx, qIncidentRemind, []any{now, micros(p.Now.Add(-p.Interval)), limit},
			func(r scanner) (due, error) {
				var d due
				return d, r.Scan(&d.id, &d.project, &d.monitor, &d.summary)
			})
		if err != nil {
			return fmt.Errorf("remind incidents: %w", interpret(err))
		}
		for _, d := range dues {
			e, err := scanEvent(tx.QueryRowContext(ctx, qReminderInsert, d.id, d.monitor, d.project, now, d.summary))
			if err != nil {
				return fmt.Errorf("remind incident %s: %w", d.id, interpret(err))
			}
			events = append(events, e)
		}
		return s.deliver(ctx, tx, events)
	})
	if err != nil {
		return nil, err
	}
	if events == nil {
		events = []*monitors.IncidentEvent{}
	}
	return events, nil
}
