package sqlitestore

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/plan"
)

// interpret translates database errors at the boundary: no rows is
// monitors.ErrNotFound, a unique violation monitors.ErrConflict, and a
// foreign key violation (a row that refers to a missing one)
// monitors.ErrNotFound.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return monitors.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return fmt.Errorf("%w (%s)", monitors.ErrConflict, se.Error())
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return fmt.Errorf("%w (%s)", monitors.ErrNotFound, se.Error())
		}
	}
	return err
}

// Times are stored as INTEGER microseconds since the Unix epoch, in UTC,
// the precision of PostgreSQL's timestamptz.

func micros(t time.Time) int64 { return t.UnixMicro() }

// microsOrNil returns NULL for the zero time.
func microsOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func microsPtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

// ceilMicros rounds t up to the microsecond, so that a stored deadline is
// never earlier than the real one: a monitor is not claimed before it is
// due.
func ceilMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	us := t.UnixMicro()
	if t.Sub(time.UnixMicro(us)) > 0 {
		us++
	}
	return us
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func fromNullMicros(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

// tm scans INTEGER microseconds, or NULL, into a time.
type tm struct{ t *time.Time }

func (d tm) Scan(src any) error {
	us, ok := src.(int64)
	if !ok {
		return fmt.Errorf("scan time: %T is not INTEGER microseconds", src)
	}
	*d.t = fromMicros(us)
	return nil
}

// tmp scans INTEGER microseconds or NULL into a *time.Time.
type tmp struct{ t **time.Time }

func (d tmp) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.t = fromNullMicros(n)
	return nil
}

// intp scans an INTEGER or NULL into a *int.
type intp struct{ p **int }

func (d intp) Scan(src any) error {
	var n sql.NullInt64
	if err := n.Scan(src); err != nil {
		return err
	}
	*d.p = nil
	if n.Valid {
		v := int(n.Int64)
		*d.p = &v
	}
	return nil
}

func nullInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

func nullInt64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// strList scans a JSON array of strings, as tags, channels and person
// fields are kept.
type strList []string

func (l *strList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		return fmt.Errorf("scan list: %T is not JSON text", src)
	}
	*l = strList{}
	if err := json.Unmarshal(b, (*[]string)(l)); err != nil {
		return fmt.Errorf("decode list: %w", err)
	}
	return nil
}

// limitArg returns a LIMIT argument: -1, no limit, for n <= 0.
func limitArg(n int) int64 {
	if n <= 0 {
		return -1
	}
	return int64(n)
}

func configArg(raw []byte) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

// monitorArgs returns the arguments of qMonitorInsert and qMonitorUpdate.
// NextDeadlineAt is derived from the state here, so the stored deadline
// never disagrees with it.
func monitorArgs(m *monitors.Monitor) ([]any, error) {
	m.NextDeadlineAt = m.NextDeadline()
	state, err := plan.EncodeState(m.State)
	if err != nil {
		return nil, err
	}
	retry, err := plan.EncodeRetryPolicy(m.RetryPolicy)
	if err != nil {
		return nil, err
	}
	var retryArg any
	if retry != nil {
		retryArg = string(retry)
	}
	return []any{
		m.ID, m.ProjectID, m.Name, m.Slug, jsonList(m.Tags), string(m.Schedule.Kind), m.Schedule.Expr,
		m.Schedule.TZ, m.Schedule.EverySeconds, m.GraceSeconds, m.MaxRuntimeSeconds, m.DeadlineSeconds,
		string(m.AlertOnFailure), m.FailureThreshold, m.RecoveryThreshold, string(m.Overlap),
		jsonList(m.Channels), m.Paused, m.Source, m.Discovered, retryArg, m.PingKey,
		micros(m.CreatedAt), micros(m.UpdatedAt), string(m.State.Status), string(state), microsOrNil(m.State.LastPingAt),
		microsOrNil(m.State.Expected), ceilMicros(m.NextDeadlineAt), string(m.Schedule.Dialect), !m.HideOutput,
	}, nil
}

// scanMonitor reads a row of monitorCols, then extra columns.
func scanMonitor(r scanner, extra ...any) (*monitors.Monitor, error) {
	var (
		m              monitors.Monitor
		tags, channels strList
		state          string
		retry          sql.NullString
		notifyOutput   bool
	)
	err := r.Scan(append([]any{&m.ID, &m.ProjectID, &m.Name, &m.Slug, &tags, &m.Schedule.Kind, &m.Schedule.Expr,
		&m.Schedule.TZ, &m.Schedule.EverySeconds, &m.GraceSeconds, &m.MaxRuntimeSeconds, &m.DeadlineSeconds,
		&m.AlertOnFailure, &m.FailureThreshold, &m.RecoveryThreshold, &m.Overlap, &channels, &m.Paused, &m.Source,
		&m.Discovered, &retry, &m.PingKey, tm{&m.CreatedAt}, tm{&m.UpdatedAt}, &state, tmp{&m.NextDeadlineAt}, &m.Schedule.Dialect,
		&notifyOutput}, extra...)...)
	if err != nil {
		return nil, interpret(err)
	}
	m.HideOutput = !notifyOutput
	m.Tags, m.Channels = tags, channels
	var retryJSON []byte
	if retry.Valid {
		retryJSON = []byte(retry.String)
	}
	return &m, plan.DecodeMonitorJSON(&m, []byte(state), retryJSON)
}

func scanMonitor1(r scanner) (*monitors.Monitor, error)   { return scanMonitor(r) }
func scanString(r scanner) (s string, err error)          { return s, interpret(r.Scan(&s)) }
func scanDelivery1(r scanner) (*monitors.Delivery, error) { return scanDelivery(r) }

func scanProject(r scanner) (*monitors.Project, error) {
	var pr monitors.Project
	return &pr, interpret(r.Scan(&pr.ID, &pr.Name, &pr.PingKey, tm{&pr.CreatedAt}))
}

func scanAPIKey(r scanner) (*monitors.APIKey, error) {
	var k monitors.APIKey
	return &k, interpret(r.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Prefix, &k.Hash, &k.ReadOnly, tm{&k.CreatedAt},
		tmp{&k.LastUsedAt}, tmp{&k.RevokedAt}))
}

func scanPing(r scanner) (*monitors.Ping, error) {
	var (
		pg       monitors.Ping
		duration sql.NullInt64
	)
	err := r.Scan(&pg.ID, &pg.MonitorID, &pg.Kind, tm{&pg.At}, &pg.RID, &pg.Attempt, tmp{&pg.RetryAt}, intp{&pg.ExitCode},
		&duration, &pg.Body, &pg.BodyTruncated, &pg.RemoteAddr, &pg.UserAgent)
	if duration.Valid {
		pg.DurationMS = &duration.Int64
	}
	return &pg, interpret(err)
}

func scanRun(r scanner) (*monitors.Run, error) {
	var (
		run      monitors.Run
		duration sql.NullInt64
	)
	err := r.Scan(&run.MonitorID, &run.Seq, &run.RID, tmp{&run.StartedAt}, tmp{&run.FinishedAt}, &run.Outcome, &duration,
		&run.Attempt, intp{&run.ExitCode}, &run.WillRetry, &run.Stuck)
	if duration.Valid {
		run.DurationMS = &duration.Int64
	}
	return &run, interpret(err)
}

func scanIncident(r scanner) (*monitors.Incident, error) {
	var in monitors.Incident
	return &in, interpret(r.Scan(&in.ID, &in.ProjectID, &in.MonitorID, &in.Kind, tm{&in.OpenedAt}, tmp{&in.ResolvedAt},
		&in.Summary, &in.ResolveSummary, &in.RunSeq, &in.PingID))
}

// scanEvent reads the columns of eventReturning.
func scanEvent(r scanner) (*monitors.IncidentEvent, error) {
	var e monitors.IncidentEvent
	return &e, interpret(r.Scan(&e.ID, &e.IncidentID, &e.MonitorID, &e.ProjectID, &e.Kind, tm{&e.At}, &e.Summary))
}

func scanOutage(r scanner) (*monitors.Outage, error) {
	var o monitors.Outage
	return &o, interpret(r.Scan(&o.ID, tm{&o.StartedAt}, tm{&o.EndedAt}, &o.MonitorsPostponed, tmp{&o.SettledAt}))
}

func scanChannel(r scanner) (*monitors.Channel, error) {
	var (
		c      monitors.Channel
		config string
	)
	err := r.Scan(&c.ID, &c.ProjectID, &c.Kind, &c.Name, &config, &c.IsDefault, tm{&c.CreatedAt}, tm{&c.UpdatedAt})
	c.Config = []byte(config)
	return &c, interpret(err)
}

func scanDelivery(r scanner, extra ...any) (*monitors.Delivery, error) {
	var d monitors.Delivery
	err := r.Scan(append([]any{&d.ID, &d.ProjectID, &d.IncidentID, &d.MonitorID, &d.ChannelID, &d.EventID, &d.Event,
		&d.State, &d.Attempts, tm{&d.CreatedAt}, tmp{&d.NextAttemptAt}, tmp{&d.FinishedAt}}, extra...)...)
	return &d, interpret(err)
}

// scanDeliveryFull scans qDeliveryGet and qDeliveryList.
func scanDeliveryFull(r scanner) (*monitors.Delivery, error) {
	var (
		at      time.Time
		summary string
		waits   int64
		waitsAt *time.Time
	)
	d, err := scanDelivery(r, tm{&at}, &summary, &waits, tmp{&waitsAt})
	d.EventAt, d.Summary, d.WaitsFor, d.WaitsForNextAttemptAt = at, summary, waits, waitsAt
	return d, err
}

func scanAttempt(r scanner) (*monitors.DeliveryAttempt, error) {
	var (
		a      monitors.DeliveryAttempt
		status sql.NullInt64
	)
	err := r.Scan(&a.ID, &a.DeliveryID, &a.ProjectID, &a.IncidentID, &a.ChannelID, &a.Event, &a.Attempt,
		tm{&a.StartedAt}, tm{&a.FinishedAt}, &a.Outcome, &status, &a.Error, tmp{&a.NextAttemptAt})
	a.StatusCode = int(status.Int64)
	return &a, interpret(err)
}

func scanUser(r scanner) (*monitors.User, error) {
	var u monitors.User
	return &u, interpret(r.Scan(&u.ID, &u.Email, &u.PasswordHash, tm{&u.CreatedAt}))
}

func scanSession(r scanner) (*monitors.Session, error) {
	var se monitors.Session
	return &se, interpret(r.Scan(&se.ID, &se.UserID, &se.TokenHash, &se.CSRFToken, tm{&se.CreatedAt}, tm{&se.ExpiresAt}))
}
