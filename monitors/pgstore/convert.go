package pgstore

import (
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	if errors.Is(err, pgx.ErrNoRows) {
		return monitors.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%w (%s)", monitors.ErrConflict, pgErr.ConstraintName)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%w (%s)", monitors.ErrNotFound, pgErr.ConstraintName)
		}
	}
	return err
}

// Times are timestamptz, written in UTC and read back in UTC.

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// timeOrNil returns nil for the zero time, to store NULL.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// ceilMicro rounds t up to the microsecond, the database's precision, so
// that a stored deadline is never earlier than the real one: a monitor is
// not claimed before it is due.
func ceilMicro(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	if r := u.Truncate(time.Microsecond); !r.Equal(u) {
		u = r.Add(time.Microsecond)
	}
	return &u
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
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
	return []any{
		m.ID, m.ProjectID, m.Name, m.Slug, nonNil(m.Tags), string(m.Schedule.Kind), m.Schedule.Expr,
		m.Schedule.TZ, m.Schedule.EverySeconds, m.GraceSeconds, m.MaxRuntimeSeconds, m.DeadlineSeconds,
		string(m.AlertOnFailure), m.FailureThreshold, m.RecoveryThreshold, string(m.Overlap),
		nonNil(m.Channels), m.Paused, m.Source, m.Discovered, retry, m.PingKey,
		m.CreatedAt.UTC(), m.UpdatedAt.UTC(), string(m.State.Status), state, timeOrNil(m.State.LastPingAt),
		timeOrNil(m.State.Expected), ceilMicro(m.NextDeadlineAt), string(m.Schedule.Dialect), !m.HideOutput,
	}, nil
}

// scanMonitor reads a row of monitorCols, then extra columns.
func scanMonitor(r pgx.Row, extra ...any) (*monitors.Monitor, error) {
	var (
		m            monitors.Monitor
		retry, state []byte
		notifyOutput bool
	)
	err := r.Scan(append([]any{&m.ID, &m.ProjectID, &m.Name, &m.Slug, &m.Tags, &m.Schedule.Kind, &m.Schedule.Expr,
		&m.Schedule.TZ, &m.Schedule.EverySeconds, &m.GraceSeconds, &m.MaxRuntimeSeconds, &m.DeadlineSeconds,
		&m.AlertOnFailure, &m.FailureThreshold, &m.RecoveryThreshold, &m.Overlap, &m.Channels, &m.Paused,
		&m.Source, &m.Discovered, &retry, &m.PingKey, &m.CreatedAt, &m.UpdatedAt, &state, &m.NextDeadlineAt, &m.Schedule.Dialect,
		&notifyOutput}, extra...)...)
	if err != nil {
		return nil, interpret(err)
	}
	m.HideOutput = !notifyOutput
	m.CreatedAt, m.UpdatedAt, m.NextDeadlineAt = m.CreatedAt.UTC(), m.UpdatedAt.UTC(), utcPtr(m.NextDeadlineAt)
	return &m, plan.DecodeMonitorJSON(&m, state, retry)
}

func scanMonitor1(r pgx.Row) (*monitors.Monitor, error)                  { return scanMonitor(r) }
func scanMonitorRow(r pgx.CollectableRow) (*monitors.Monitor, error)     { return scanMonitor(r) }
func scanEventRow(r pgx.CollectableRow) (*monitors.IncidentEvent, error) { return scanEvent(r) }
func scanString(r pgx.Row) (s string, err error)                         { return s, interpret(r.Scan(&s)) }

func scanProject(r pgx.Row) (*monitors.Project, error) {
	var pr monitors.Project
	if err := r.Scan(&pr.ID, &pr.Name, &pr.PingKey, &pr.CreatedAt); err != nil {
		return nil, interpret(err)
	}
	pr.CreatedAt = pr.CreatedAt.UTC()
	return &pr, nil
}

func scanAPIKey(r pgx.Row) (*monitors.APIKey, error) {
	var k monitors.APIKey
	err := r.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Prefix, &k.Hash, &k.ReadOnly, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
	if err != nil {
		return nil, interpret(err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = k.CreatedAt.UTC(), utcPtr(k.LastUsedAt), utcPtr(k.RevokedAt)
	return &k, nil
}

func scanPing(r pgx.Row) (*monitors.Ping, error) {
	var (
		pg       monitors.Ping
		attempt  int32
		exitCode *int32
	)
	err := r.Scan(&pg.ID, &pg.MonitorID, &pg.Kind, &pg.At, &pg.RID, &attempt, &pg.RetryAt, &exitCode, &pg.DurationMS,
		&pg.Body, &pg.BodyTruncated, &pg.RemoteAddr, &pg.UserAgent)
	if err != nil {
		return nil, interpret(err)
	}
	pg.Attempt, pg.ExitCode, pg.At, pg.RetryAt = int(attempt), intPtr(exitCode), pg.At.UTC(), utcPtr(pg.RetryAt)
	return &pg, nil
}

func scanRun(r pgx.Row) (*monitors.Run, error) {
	var (
		run      monitors.Run
		attempt  int32
		exitCode *int32
	)
	err := r.Scan(&run.MonitorID, &run.Seq, &run.RID, &run.StartedAt, &run.FinishedAt, &run.Outcome, &run.DurationMS,
		&attempt, &exitCode, &run.WillRetry, &run.Stuck)
	if err != nil {
		return nil, interpret(err)
	}
	run.Attempt, run.ExitCode = int(attempt), intPtr(exitCode)
	run.StartedAt, run.FinishedAt = utcPtr(run.StartedAt), utcPtr(run.FinishedAt)
	return &run, nil
}

func scanIncident(r pgx.Row) (*monitors.Incident, error) {
	var in monitors.Incident
	err := r.Scan(&in.ID, &in.ProjectID, &in.MonitorID, &in.Kind, &in.OpenedAt, &in.ResolvedAt, &in.Summary,
		&in.ResolveSummary, &in.RunSeq, &in.PingID)
	if err != nil {
		return nil, interpret(err)
	}
	in.OpenedAt, in.ResolvedAt = in.OpenedAt.UTC(), utcPtr(in.ResolvedAt)
	return &in, nil
}

// scanEvent reads the columns of eventReturning.
func scanEvent(r pgx.Row) (*monitors.IncidentEvent, error) {
	var e monitors.IncidentEvent
	if err := r.Scan(&e.ID, &e.IncidentID, &e.MonitorID, &e.ProjectID, &e.Kind, &e.At, &e.Summary); err != nil {
		return nil, interpret(err)
	}
	e.At = e.At.UTC()
	return &e, nil
}

func scanOutage(r pgx.Row) (*monitors.Outage, error) {
	var o monitors.Outage
	if err := r.Scan(&o.ID, &o.StartedAt, &o.EndedAt, &o.MonitorsPostponed, &o.SettledAt); err != nil {
		return nil, interpret(err)
	}
	o.StartedAt, o.EndedAt, o.SettledAt = o.StartedAt.UTC(), o.EndedAt.UTC(), utcPtr(o.SettledAt)
	return &o, nil
}

func scanChannel(r pgx.Row) (*monitors.Channel, error) {
	var (
		c      monitors.Channel
		config []byte
	)
	if err := r.Scan(&c.ID, &c.ProjectID, &c.Kind, &c.Name, &config, &c.IsDefault, &c.CreatedAt, &c.UpdatedAt); err != nil {
		return nil, interpret(err)
	}
	c.Config, c.CreatedAt, c.UpdatedAt = config, c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c, nil
}

func scanDelivery(r pgx.Row, extra ...any) (*monitors.Delivery, error) {
	var d monitors.Delivery
	err := r.Scan(append([]any{&d.ID, &d.ProjectID, &d.IncidentID, &d.MonitorID, &d.ChannelID, &d.EventID, &d.Event,
		&d.State, &d.Attempts, &d.CreatedAt, &d.NextAttemptAt, &d.FinishedAt}, extra...)...)
	if err != nil {
		return nil, interpret(err)
	}
	d.CreatedAt, d.NextAttemptAt, d.FinishedAt = d.CreatedAt.UTC(), utcPtr(d.NextAttemptAt), utcPtr(d.FinishedAt)
	return &d, nil
}

// scanDeliveryFull scans qDeliveryGet and qDeliveryList.
func scanDeliveryFull(r pgx.Row) (*monitors.Delivery, error) {
	var (
		at      time.Time
		summary string
		waits   int64
		waitsAt *time.Time
	)
	d, err := scanDelivery(r, &at, &summary, &waits, &waitsAt)
	if err != nil {
		return nil, err
	}
	d.EventAt, d.Summary, d.WaitsFor, d.WaitsForNextAttemptAt = at.UTC(), summary, waits, utcPtr(waitsAt)
	return d, nil
}

func scanAttempt(r pgx.Row) (*monitors.DeliveryAttempt, error) {
	var (
		a      monitors.DeliveryAttempt
		status *int32
	)
	err := r.Scan(&a.ID, &a.DeliveryID, &a.ProjectID, &a.IncidentID, &a.ChannelID, &a.Event, &a.Attempt,
		&a.StartedAt, &a.FinishedAt, &a.Outcome, &status, &a.Error, &a.NextAttemptAt)
	if err != nil {
		return nil, interpret(err)
	}
	a.StartedAt, a.FinishedAt, a.NextAttemptAt = a.StartedAt.UTC(), a.FinishedAt.UTC(), utcPtr(a.NextAttemptAt)
	if status != nil {
		a.StatusCode = int(*status)
	}
	return &a, nil
}

func scanUser(r pgx.Row) (*monitors.User, error) {
	var u monitors.User
	if err := r.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.CreatedAt); err != nil {
		return nil, interpret(err)
	}
	u.CreatedAt = u.CreatedAt.UTC()
	return &u, nil
}

func scanSession(r pgx.Row) (*monitors.Session, error) {
	var se monitors.Session
	if err := r.Scan(&se.ID, &se.UserID, &se.TokenHash, &se.CSRFToken, &se.CreatedAt, &se.ExpiresAt); err != nil {
		return nil, interpret(err)
	}
	se.CreatedAt, se.ExpiresAt = se.CreatedAt.UTC(), se.ExpiresAt.UTC()
	return &se, nil
}
