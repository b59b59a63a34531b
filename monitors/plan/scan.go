package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// The columns each kind of row is read with, in the order the stores'
// queries select them, and the arguments a monitor is written with.

// MonitorArgs returns the arguments of Queries.MonitorInsert and
// MonitorUpdate. NextDeadlineAt is derived from the state here, so the
// stored deadline never disagrees with it.
func MonitorArgs(m *monitors.Monitor) ([]any, error) {
	m.NextDeadlineAt = m.NextDeadline()
	state, err := EncodeState(m.State)
	if err != nil {
		return nil, err
	}
	retry, err := EncodeRetryPolicy(m.RetryPolicy)
	if err != nil {
		return nil, err
	}
	return []any{
		m.ID, m.ProjectID, m.Name, m.Slug, nonNil(m.Tags), string(m.Schedule.Kind), m.Schedule.Expr,
		m.Schedule.TZ, m.Schedule.EverySeconds, m.GraceSeconds, m.MaxRuntimeSeconds, m.DeadlineSeconds,
		string(m.AlertOnFailure), m.FailureThreshold, m.RecoveryThreshold, string(m.Overlap),
		nonNil(m.Channels), m.Paused, m.Source, m.Discovered, retry, m.PingKey,
		m.CreatedAt.UTC(), m.UpdatedAt.UTC(), string(m.State.Status), state, TimeOrNil(m.State.LastPingAt),
		TimeOrNil(m.State.Expected), CeilMicro(m.NextDeadlineAt), string(m.Schedule.Dialect), !m.HideOutput,
		m.Description, m.MinRuntimeSeconds, m.EarlySeconds, string(m.TooOften), listOrNil(m.DependsOn), utcPtr(m.SnoozedUntil),
	}, nil
}

// listOrNil returns nil, stored as NULL, for an empty list.
func listOrNil(l []string) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

// ScanMonitor reads a monitor's columns, then extra ones. r is a row of
// Rows that has not moved on (as One and All give it), not one that
// closes its rows inside Scan, such as pgx's QueryRow: the state is
// decoded from the row's memory after Scan (ScratchBytes).
func ScanMonitor(r Row, extra ...any) (*monitors.Monitor, error) {
	var sc MonitorScanner
	return sc.Scan(r, extra...)
}

func scanMonitorWith(r Row, decode func(m *monitors.Monitor, state, retry []byte) error, extra ...any) (*monitors.Monitor, error) {
	sc := MonitorScanner{decode: decode}
	return sc.Scan(r, extra...)
}

// MonitorScanner reads monitors' rows one after another with the same
// scan targets, the state and retry policy read in place (ScratchBytes)
// and the columns of few values without a copy (word): a batch of pings
// and the evaluator's claim read a monitor for each row, and the
// allocations of each row were most of the cost of reading it. The zero
// value decodes with DecodeMonitorJSON.
type MonitorScanner struct {
	dest         []any
	retry, state ScratchBytes
	notifyOutput bool
	decode       func(m *monitors.Monitor, state, retry []byte) error
}

// Row reads a monitor's columns.
func (sc *MonitorScanner) Row(r Row) (*monitors.Monitor, error) { return sc.Scan(r) }

// Scan reads a monitor's columns, then extra ones.
func (sc *MonitorScanner) Scan(r Row, extra ...any) (*monitors.Monitor, error) {
	m := new(monitors.Monitor)
	sc.dest = append(sc.dest[:0], &m.ID, &m.ProjectID, &m.Name, &m.Slug, &m.Tags, (*word)(&m.Schedule.Kind), &m.Schedule.Expr,
		(*word)(&m.Schedule.TZ), &m.Schedule.EverySeconds, &m.GraceSeconds, &m.MaxRuntimeSeconds, &m.DeadlineSeconds,
		(*word)(&m.AlertOnFailure), &m.FailureThreshold, &m.RecoveryThreshold, (*word)(&m.Overlap), &m.Channels, &m.Paused,
		&m.Source, &m.Discovered, &sc.retry, &m.PingKey, &m.CreatedAt, &m.UpdatedAt, &sc.state, &m.NextDeadlineAt,
		(*word)(&m.Schedule.Dialect), &sc.notifyOutput, &m.Description, &m.MinRuntimeSeconds, &m.EarlySeconds, (*word)(&m.TooOften),
		&m.DependsOn, &m.SnoozedUntil)
	sc.dest = append(sc.dest, extra...)
	if err := r.Scan(sc.dest...); err != nil {
		return nil, err
	}
	m.HideOutput = !sc.notifyOutput
	if m.DependsOn == nil {
		m.DependsOn = []string{}
	}
	decode := sc.decode
	if decode == nil {
		decode = DecodeMonitorJSON
	}
	return m, decode(m, sc.state, sc.retry)
}

// ScratchBytes is a scan target for bytes that are read at once and not
// kept, such as JSON to decode: valid only until the next row is read.
// pgx hands over its row's memory (ScanBytes, which pgx prefers for jsonb
// and text columns); database/sql's drivers copy into the same memory
// row after row (Scan). NULL reads as empty.
type ScratchBytes []byte

// ScanBytes takes v, the row's memory, as it is.
func (b *ScratchBytes) ScanBytes(v []byte) error {
	*b = v
	return nil
}

// Scan copies src into b's memory.
func (b *ScratchBytes) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*b = (*b)[:0]
	case string:
		*b = append((*b)[:0], v...)
	case []byte:
		*b = append((*b)[:0], v...)
	default:
		return fmt.Errorf("scan bytes: %T is not text", src)
	}
	return nil
}

// word is a scan target for a string column of few values (a schedule's
// kind, time zone and dialect, a policy): a value it knows is not copied
// from the row.
type word string

// ScanBytes reads v, the row's memory.
func (w *word) ScanBytes(v []byte) error {
	if known, ok := words[string(v)]; ok {
		*w = word(known)
	} else {
		*w = word(v)
	}
	return nil
}

// Scan reads a value of database/sql, which has copied it already.
func (w *word) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*w = word(v)
	case []byte:
		return w.ScanBytes(v)
	default:
		return fmt.Errorf("scan text: %T is not text", src)
	}
	return nil
}

// words are the values of the columns read as words.
var words = func() map[string]string {
	m := map[string]string{}
	for _, w := range []string{"", "UTC",
		string(monitors.ScheduleCron), string(monitors.ScheduleInterval), string(monitors.ScheduleOnCalendar),
		string(monitors.DialectCronie), string(monitors.DialectRobfig), string(monitors.DialectQuartz),
		string(monitors.AlertFinal), string(monitors.AlertEveryAttempt), string(monitors.AlertNever),
		string(monitors.OverlapAlert), string(monitors.OverlapIgnore), string(monitors.TooOftenIgnore), string(monitors.TooOftenAlert)} {
		m[w] = w
	}
	return m
}()

// ScanMonitorRow reads a monitor's columns.
func ScanMonitorRow(r Row) (*monitors.Monitor, error) { return ScanMonitor(r) }

// scanListedMonitor reads a monitor's columns as ScanMonitor does, its
// state and retry policy decoded through the list cache (decodeListed).
func scanListedMonitor(r Row) (*monitors.Monitor, error) { return scanMonitorWith(r, decodeListed) }

func scanProject(r Row) (*monitors.Project, error) {
	var pr monitors.Project
	return &pr, r.Scan(&pr.ID, &pr.Name, &pr.PingKey, &pr.CreatedAt)
}

func scanAPIKey(r Row) (*monitors.APIKey, error) {
	var k monitors.APIKey
	return &k, r.Scan(&k.ID, &k.ProjectID, &k.Name, &k.Prefix, &k.Hash, &k.ReadOnly, &k.CreatedAt, &k.LastUsedAt, &k.RevokedAt)
}

func scanPing(r Row) (*monitors.Ping, error) {
	var pg monitors.Ping
	return &pg, r.Scan(&pg.ID, &pg.MonitorID, &pg.Kind, &pg.At, &pg.RID, &pg.Attempt, &pg.RetryAt, &pg.ExitCode,
		&pg.DurationMS, &pg.Body, &pg.BodyTruncated, &pg.RemoteAddr, &pg.UserAgent, &pg.ScheduledAt)
}

func scanRun(r Row) (*monitors.Run, error) {
	var run monitors.Run
	return &run, r.Scan(&run.MonitorID, &run.Seq, &run.RID, &run.StartedAt, &run.FinishedAt, &run.Outcome,
		&run.DurationMS, &run.Attempt, &run.ExitCode, &run.WillRetry, &run.Stuck)
}

func scanIncident(r Row) (*monitors.Incident, error) {
	var in monitors.Incident
	return &in, r.Scan(&in.ID, &in.ProjectID, &in.MonitorID, &in.Kind, &in.OpenedAt, &in.ResolvedAt, &in.Summary,
		&in.ResolveSummary, &in.RunSeq, &in.PingID, &in.Held, &in.SuppressedBy)
}

// ScanEvent reads an incident event: id, incident_id, monitor_id,
// project_id, kind, at, summary.
func ScanEvent(r Row) (*monitors.IncidentEvent, error) {
	var e monitors.IncidentEvent
	return &e, r.Scan(&e.ID, &e.IncidentID, &e.MonitorID, &e.ProjectID, &e.Kind, &e.At, &e.Summary)
}

func scanOutage(r Row) (*monitors.Outage, error) {
	var o monitors.Outage
	return &o, r.Scan(&o.ID, &o.StartedAt, &o.EndedAt, &o.MonitorsPostponed, &o.SettledAt)
}

func scanChannel(r Row) (*monitors.Channel, error) {
	var (
		c      monitors.Channel
		config []byte
	)
	err := r.Scan(&c.ID, &c.ProjectID, &c.Kind, &c.Name, &config, &c.IsDefault, &c.CreatedAt, &c.UpdatedAt,
		&c.NotifyLate, &c.GroupSeconds, &c.Report)
	c.Config = config
	return &c, err
}

// ScanDelivery reads a delivery's columns, then extra ones.
func ScanDelivery(r Row, extra ...any) (*monitors.Delivery, error) {
	var d monitors.Delivery
	return &d, r.Scan(append([]any{&d.ID, &d.ProjectID, &d.IncidentID, &d.MonitorID, &d.ChannelID, &d.EventID,
		&d.Event, &d.State, &d.Attempts, &d.CreatedAt, &d.NextAttemptAt, &d.FinishedAt, &d.ReportID, &d.GroupAt}, extra...)...)
}

func scanDelivery(r Row) (*monitors.Delivery, error) { return ScanDelivery(r) }

// scanDeliveryFull reads a delivery with its event's time and summary and
// the delivery it waits for.
func scanDeliveryFull(r Row) (*monitors.Delivery, error) {
	var (
		at      time.Time
		summary string
		waits   int64
		waitsAt *time.Time
	)
	d, err := ScanDelivery(r, &at, &summary, &waits, &waitsAt)
	d.EventAt, d.Summary, d.WaitsFor, d.WaitsForNextAttemptAt = at, summary, waits, waitsAt
	return d, err
}

func scanAttempt(r Row) (*monitors.DeliveryAttempt, error) {
	var (
		a      monitors.DeliveryAttempt
		status *int
	)
	err := r.Scan(&a.ID, &a.DeliveryID, &a.ProjectID, &a.IncidentID, &a.ChannelID, &a.Event, &a.Attempt,
		&a.StartedAt, &a.FinishedAt, &a.Outcome, &status, &a.Error, &a.NextAttemptAt)
	if status != nil {
		a.StatusCode = *status
	}
	return &a, err
}

func scanUser(r Row) (*monitors.User, error) {
	var u monitors.User
	return &u, r.Scan(&u.ID, &u.Email, &u.PasswordHash, &u.CreatedAt, &u.DisabledAt)
}

func scanSession(r Row) (*monitors.Session, error) {
	var se monitors.Session
	return &se, r.Scan(&se.ID, &se.UserID, &se.TokenHash, &se.CSRFToken, &se.CreatedAt, &se.ExpiresAt)
}

// TimeOrNil returns nil for the zero time, to store NULL.
func TimeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// CeilMicro rounds t up to the microsecond, the stores' precision, so that
// a stored deadline is never earlier than the real one: a monitor is not
// claimed before it is due.
func CeilMicro(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	if r := u.Truncate(time.Microsecond); !r.Equal(u) {
		u = r.Add(time.Microsecond)
	}
	return &u
}

// Qualify qualifies each column of a comma-separated list with prefix
// (such as "m."), for a statement that joins the table to another.
func Qualify(prefix, cols string) string {
	list := strings.Split(cols, ",")
	for i, c := range list {
		list[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(list, ", ")
}

// LimitArg returns a LIMIT argument: nil, no limit, for n <= 0.
func LimitArg(n int) *int64 {
	if n <= 0 {
		return nil
	}
	v := int64(n)
	return &v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ConfigArg is a channel's config as stored: {} for none.
func ConfigArg(raw []byte) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}
