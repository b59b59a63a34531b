package notifiers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A Notifier delivers one notification in one attempt. Retrying is the
// caller's business: see the package documentation for how errors are
// classified.
type Notifier interface {
	Notify(ctx context.Context, n *Notification) error
}

// Event says why a notification is sent. The values are part of Vigil's
// public contract (the webhook payload's "event" field).
type Event string

// The events of an incident's life, and the test notification sent from the
// API.
const (
	EventOpened   Event = "incident.opened"
	EventResolved Event = "incident.resolved"
	EventUpdated  Event = "incident.updated"
	EventReminder Event = "incident.reminder"
	EventTest     Event = "test"
	// Events about a monitor, not an incident: its source stopped
	// declaring it, or declared it again. Their Incident is empty but for
	// Summary, the event's text. They inform; they are not sent to
	// channels that page (see plan.Route).
	EventMonitorUndeclared Event = "monitor.undeclared"
	EventMonitorRedeclared Event = "monitor.redeclared"
	// EventMonitorLate warns that a monitor is halfway through its grace
	// without a ping, before its missed incident; only to channels with
	// notify_late.
	EventMonitorLate Event = "monitor.late"
	// EventMonitorFlapping says that a monitor's incidents open and
	// resolve too often, and are not notified until EventMonitorStable.
	EventMonitorFlapping Event = "monitor.flapping"
	EventMonitorStable   Event = "monitor.stable"
	// EventGrouped lists the incidents of a project that opened together
	// (Group), in one message, to a channel with group_seconds. Each
	// incident still has its own recovery.
	EventGrouped Event = "incidents.grouped"
)

// IsMonitorEvent reports whether e is about a monitor, not an incident.
func (e Event) IsMonitorEvent() bool {
	switch e {
	case EventMonitorUndeclared, EventMonitorRedeclared, EventMonitorLate, EventMonitorFlapping, EventMonitorStable:
		return true
	}
	return false
}

// Valid reports whether e is one of the known events.
func (e Event) Valid() bool {
	switch e {
	case EventOpened, EventResolved, EventUpdated, EventReminder, EventTest, EventGrouped,
		EventReportWeekly, EventReportMonthly:
		return true
	}
	return e.IsMonitorEvent()
}

// IncidentKind is why an incident was opened.
type IncidentKind string

// Incident kinds, as in PROTOCOL §3.
const (
	IncidentMissed   IncidentKind = "missed"
	IncidentFailed   IncidentKind = "failed"
	IncidentStuck    IncidentKind = "stuck"
	IncidentDeadline IncidentKind = "deadline"
	IncidentOverlap  IncidentKind = "overlap"
	IncidentTooFast  IncidentKind = "too_fast"
	IncidentEarly    IncidentKind = "early"
	IncidentTooOften IncidentKind = "too_often"
)

// Valid reports whether k is one of the known incident kinds.
func (k IncidentKind) Valid() bool {
	switch k {
	case IncidentMissed, IncidentFailed, IncidentStuck, IncidentDeadline, IncidentOverlap,
		IncidentTooFast, IncidentEarly, IncidentTooOften:
		return true
	}
	return false
}

// aboutRunStart reports whether incidents of kind k are about when a run
// started (stuck, too fast, early, too often), which their facts show.
func (k IncidentKind) aboutRunStart() bool {
	switch k {
	case IncidentStuck, IncidentTooFast, IncidentEarly, IncidentTooOften:
		return true
	}
	return false
}

// Notification is everything a channel needs to tell someone about an
// incident. It is plain data, built by the delivery layer from the store, so
// that every kind renders the same facts.
type Notification struct {
	// Event is why this notification is sent.
	Event Event
	// Incident is the incident it is about. For EventTest it may be empty.
	Incident Incident
	// Monitor is the monitor the incident belongs to.
	Monitor Monitor
	// SentAt is the time of this attempt. It stamps the webhook signature
	// and the message dates, and is "now" for anything that is measured up
	// to the present (how long an incident has been open at a reminder).
	SentAt time.Time
	// BaseURL is the public URL of this Vigil (VIGIL_BASE_URL), used for
	// links when Monitor.URL is empty.
	BaseURL string
	// SnoozeURL is a signed link that snoozes the monitor for an hour
	// without a sign-in ("snooze 1 h"); empty when there is none (a
	// recovery, a test, a monitor event).
	SnoozeURL string
	// EventAt is when the event happened: for a monitor event, when its
	// source stopped, or started again, declaring it. Zero when unknown.
	EventAt time.Time
	// DeliveryID names this notification to this channel, the same for
	// every attempt at it, so that a receiver can drop a duplicate (the
	// webhook's Vigil-Delivery-Id header). It is empty when unknown.
	DeliveryID string
	// Run is the run the incident concerns (the failed or stuck run), nil
	// when none or when it is no longer kept.
	Run *Run
	// Ping is the ping that opened the incident (for a failure, the
	// failing ping), nil when time opened it or the ping is no longer
	// kept. Its Body is empty when the monitor's notify_output is off.
	Ping *Ping
	// Group are the incidents an incidents.grouped notification lists,
	// in the order they opened; Incident and Monitor are the first's.
	Group []GroupItem
	// Report is set, and only, for a report event (report.weekly,
	// report.monthly), which has no incident and no monitor.
	Report *Report
}

// GroupItem is one incident of an incidents.grouped notification.
type GroupItem struct {
	Incident Incident
	Monitor  Monitor
}

// Run is the part of a notification that describes a run.
type Run struct {
	Seq        int64
	RID        string
	StartedAt  *time.Time
	FinishedAt *time.Time
	// Outcome is success, fail, cancelled, skipped, abandoned, or empty
	// while the run is open.
	Outcome    string
	DurationMS *int64
	Attempt    int // 0 when not reported
	ExitCode   *int
	// WillRetry says that the scheduler announced another attempt.
	WillRetry bool
	Stuck     bool
	// URL is the run on the dashboard.
	URL string
}

// Ping is the part of a notification that describes a ping.
type Ping struct {
	ID         int64
	Kind       string
	At         time.Time
	RID        string
	Attempt    int // 0 when not reported
	RetryAt    *time.Time
	ExitCode   *int
	DurationMS *int64
	// Body is the ping's body (the run's output) as stored, and
	// BodyTruncated says that ingest cut it at its limit.
	Body          string
	BodyTruncated bool
}

// Incident is the part of a notification that describes the incident.
type Incident struct {
	ID         string
	Kind       IncidentKind
	OpenedAt   time.Time
	ResolvedAt *time.Time
	// Summary is one line saying what happened, for example
	// "nightly-import did not run at 02:00 Europe/Berlin (grace 5m)".
	Summary string
	// Details is optional longer text: when the run was expected, what was
	// last seen, the output of a failed run.
	Details string
}

// Monitor is the part of a notification that describes the monitor.
type Monitor struct {
	ID     string
	Name   string
	Slug   string
	Status string
	Tags   []string
	// Source is the source (an application, a scheduler) that declares
	// the monitor; empty when a person made it.
	Source string
	// URL is the monitor's page on the dashboard.
	URL string
	// Schedule is the expression, for example "0 2 * * * (Europe/Berlin)".
	Schedule string
	// ScheduleWords is the schedule in plain words with its zone, for
	// example "at 02:00 every day, Europe/Berlin"; empty when unknown.
	ScheduleWords string
	// Zone is the IANA zone of the schedule's times; times are shown in
	// it and in UTC. Empty is UTC.
	Zone           string
	LastPingAt     *time.Time
	NextExpectedAt *time.Time
}

// DedupKey is the key that lets a receiver recognise notifications about the
// same incident (PagerDuty's dedup_key, Opsgenie's alias, the e-mail thread):
// the incident id. A test notification without an incident gets a key made
// from its monitor and time, so that a retried test is still one alert.
func (n *Notification) DedupKey() string {
	if n.Incident.ID != "" && n.Event != EventGrouped {
		return n.Incident.ID
	}
	if (n.Event.IsMonitorEvent() || n.Event.IsReport() || n.Event == EventGrouped) && n.DeliveryID != "" {
		return "vigil-" + n.DeliveryID // the same for every attempt
	}
	return "vigil-test-" + n.Monitor.ID + "-" + strconv.FormatInt(n.SentAt.UnixNano(), 36)
}

// Downtime is how long the incident lasted: ResolvedAt minus OpenedAt, or
// zero while it is still open.
func (n *Notification) Downtime() time.Duration {
	if n.Incident.ResolvedAt == nil {
		return 0
	}
	return max(n.Incident.ResolvedAt.Sub(n.Incident.OpenedAt), 0)
}

// OpenFor is how long the incident has been open: its downtime once
// resolved, otherwise SentAt minus OpenedAt.
func (n *Notification) OpenFor() time.Duration {
	if n.Incident.ResolvedAt != nil {
		return n.Downtime()
	}
	if n.Incident.OpenedAt.IsZero() || n.SentAt.IsZero() {
		return 0
	}
	return max(n.SentAt.Sub(n.Incident.OpenedAt), 0)
}

// IsResolved reports whether the notification announces a recovery.
func (n *Notification) IsResolved() bool { return n.Event == EventResolved }

// MonitorName is the monitor's name, or its slug, or its id, whichever is
// set first.
func (n *Notification) MonitorName() string {
	switch {
	case n.Monitor.Name != "":
		return n.Monitor.Name
	case n.Monitor.Slug != "":
		return n.Monitor.Slug
	case n.Monitor.ID != "":
		return n.Monitor.ID
	}
	return "monitor"
}

// Link is the page to send a reader to: the monitor's dashboard URL, or the
// base URL of this Vigil when the monitor has none.
func (n *Notification) Link() string {
	if n.Event == EventGrouped && n.BaseURL != "" {
		return n.BaseURL + "/" // the dashboard's list of monitors
	}
	if n.Report != nil && n.Report.URL != "" {
		return n.Report.URL
	}
	if n.Monitor.URL != "" {
		return n.Monitor.URL
	}
	return n.BaseURL
}

// Headline is the one-line title every kind uses, for example
// "DOWN nightly-import: missed" or "UP nightly-import: recovered after 12m".
func (n *Notification) Headline() string {
	name := n.MonitorName()
	switch n.Event {
	case EventResolved:
		if d := n.Downtime(); d > 0 {
			return fmt.Sprintf("UP %s: recovered after %s", name, FormatDuration(d))
		}
		return fmt.Sprintf("UP %s: recovered", name)
	case EventReminder:
		if d := n.OpenFor(); d > 0 {
			return fmt.Sprintf("STILL DOWN %s: %s, down for %s", name, n.KindWords(), FormatDuration(d))
		}
		return fmt.Sprintf("STILL DOWN %s: %s", name, n.KindWords())
	case EventUpdated:
		return fmt.Sprintf("DOWN %s: %s (update)", name, n.KindWords())
	case EventTest:
		return fmt.Sprintf("TEST %s: test notification from Vigil", name)
	case EventMonitorUndeclared:
		return fmt.Sprintf("UNDECLARED %s: no longer declared by its source", name)
	case EventMonitorRedeclared:
		return fmt.Sprintf("DECLARED AGAIN %s: watched again", name)
	case EventMonitorLate:
		return fmt.Sprintf("LATE %s: no ping yet, missed soon", name)
	case EventMonitorFlapping:
		return fmt.Sprintf("FLAPPING %s: incidents open and resolve too often; quiet until stable", name)
	case EventMonitorStable:
		return fmt.Sprintf("STABLE %s: no longer flapping", name)
	case EventGrouped:
		return fmt.Sprintf("DOWN %s: %s", n.groupNames(3), n.KindWords())
	case EventReportWeekly, EventReportMonthly:
		return n.reportHeadline()
	}
	return fmt.Sprintf("DOWN %s: %s", name, n.KindWords())
}

// groupNames names the monitors of a group, at most max of them:
// "nightly-import, backup-db and 18 more".
func (n *Notification) groupNames(max int) string {
	var names []string
	seen := map[string]bool{}
	for _, g := range n.Group {
		name := (&Notification{Monitor: g.Monitor}).MonitorName()
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:max], ", "), len(names)-max)
}

// KindWords says what happened in a few words: "missed", "failed",
// "failed after 4 attempts", "failed (attempt 2, will be retried)",
// "stuck for 1h 12m", "not done by its deadline", "overlapping runs",
// "succeeded too fast, in 2s", "started early", "ran too often";
// for a monitor event, "no longer declared" or "declared again".
func (n *Notification) KindWords() string {
	switch n.Event {
	case EventMonitorUndeclared:
		return "no longer declared"
	case EventMonitorRedeclared:
		return "declared again"
	case EventMonitorLate:
		return "late"
	case EventMonitorFlapping:
		return "flapping"
	case EventMonitorStable:
		return "stable again"
	case EventGrouped:
		return fmt.Sprintf("%d incidents opened together", len(n.Group))
	}
	switch n.Incident.Kind {
	case IncidentFailed:
		attempt, retry := n.attempt()
		switch {
		case retry && attempt > 0:
			return fmt.Sprintf("failed (attempt %d, will be retried)", attempt)
		case retry:
			return "failed (will be retried)"
		case attempt > 1:
			return fmt.Sprintf("failed after %d attempts", attempt)
		}
		return "failed"
	case IncidentStuck:
		if r := n.Run; r != nil && r.StartedAt != nil {
			end := n.SentAt
			if r.FinishedAt != nil {
				end = *r.FinishedAt
			}
			if d := end.Sub(*r.StartedAt); d > 0 {
				return "stuck for " + FormatDuration(d)
			}
		}
		return "stuck"
	case IncidentDeadline:
		return "not done by its deadline"
	case IncidentOverlap:
		return "overlapping runs"
	case IncidentTooFast:
		if r := n.Run; r != nil && r.DurationMS != nil {
			return "succeeded too fast, in " + FormatDuration(time.Duration(*r.DurationMS)*time.Millisecond)
		}
		return "succeeded too fast"
	case IncidentEarly:
		return "started early"
	case IncidentTooOften:
		return "ran too often"
	}
	return string(n.Incident.Kind)
}

// attempt is the attempt number of the failure (0 when not reported) and
// whether the scheduler announced a retry.
func (n *Notification) attempt() (int, bool) {
	attempt, retry := 0, false
	if r := n.Run; r != nil {
		attempt, retry = r.Attempt, r.WillRetry
	}
	if p := n.Ping; p != nil {
		if attempt == 0 {
			attempt = p.Attempt
		}
		retry = retry || p.RetryAt != nil
	}
	return attempt, retry
}

// SnoozeLinkText is the words of [Notification.SnoozeURL]'s link.
const SnoozeLinkText = "Snooze 1 h"

// RunURL is the dashboard page of the incident's run, or "" when none.
func (n *Notification) RunURL() string {
	if n.Run == nil {
		return ""
	}
	return n.Run.URL
}

// Output limits of [Notification.OutputTail]: how many of the last lines of
// a failing run's output a channel shows at most, and how many
// characters. Each kind passes what it can carry.
const (
	OutputLinesDefault = 20
	OutputCharsDefault = 2000
)

// OutputTail returns the last lines of the output of the ping that opened
// the incident, at most maxLines lines and maxChars characters (whole
// lines when it can, the end of a line longer than that otherwise),
// without trailing blank lines, and whether anything was left out (by
// this cut, or by ingest's limit). It is "" when there is no output, or
// the monitor's notify_output is off.
func (n *Notification) OutputTail(maxLines, maxChars int) (string, bool) {
	if n.Ping == nil || maxLines <= 0 || maxChars <= 0 {
		return "", false
	}
	body := strings.TrimRight(stripControls(strings.ReplaceAll(n.Ping.Body, "\r\n", "\n")), " \t\n")
	if strings.TrimSpace(body) == "" {
		return "", false
	}
	cut := n.Ping.BodyTruncated
	lines := strings.Split(body, "\n")
	if len(lines) > maxLines {
		lines, cut = lines[len(lines)-maxLines:], true
	}
	total := 0
	start := len(lines)
	for start > 0 {
		l := utf8.RuneCountInString(lines[start-1]) + 1
		if total+l > maxChars+1 {
			break
		}
		total += l
		start--
	}
	if start == len(lines) {
		// The last line alone is too long: keep its end.
		r := []rune(lines[len(lines)-1])
		return "…" + string(r[len(r)-(maxChars-1):]), true
	}
	if start > 0 {
		cut = true
	}
	return strings.Join(lines[start:], "\n"), cut
}

// ansiRE matches a terminal escape sequence (CSI), such as a colour.
var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// OutputFor is [Notification.OutputTail] escaped for a channel: the tail
// of at most maxLines lines whose escaped form, escape(tail), fits in
// maxChars characters, and whether anything was left out. escape may be
// nil for text that needs none.
func (n *Notification) OutputFor(maxLines, maxChars int, escape func(string) string) (string, bool) {
	if escape == nil {
		escape = func(s string) string { return s }
	}
	chars := maxChars
	for {
		tail, cut := n.OutputTail(maxLines, chars)
		esc := escape(tail)
		over := utf8.RuneCountInString(esc) - maxChars
		if over <= 0 {
			return esc, cut
		}
		if chars <= 1 {
			return "", true
		}
		chars -= max(over, 1)
	}
}

// stripControls drops control characters but newlines and tabs (terminal
// colour codes, carriage returns of progress bars), which no channel
// shows as text.
func stripControls(s string) string {
	s = ansiRE.ReplaceAllString(s, "")
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return -1
		}
		return r
	}, s)
}

// FormatZoned renders t in the monitor's zone and in UTC:
// "2026-03-14 02:00 CET (01:00 UTC)", with the UTC date too when it
// differs; only UTC when the zone is UTC or unknown.
func (n *Notification) FormatZoned(t time.Time) string {
	utc := FormatTime(t)
	if n.Monitor.Zone == "" || n.Monitor.Zone == "UTC" {
		return utc
	}
	loc, err := time.LoadLocation(n.Monitor.Zone)
	if err != nil {
		return utc
	}
	local := t.In(loc)
	if local.Format("2006-01-02") == t.UTC().Format("2006-01-02") {
		return local.Format("2006-01-02 15:04 MST") + " (" + t.UTC().Format("15:04") + " UTC)"
	}
	return local.Format("2006-01-02 15:04 MST") + " (" + utc + ")"
}

// Summary is the incident's summary, or a sentence made from the event when
// the incident has none.
func (n *Notification) Summary() string {
	if n.Event == EventGrouped {
		lines := n.GroupLines()
		for i, l := range lines {
			lines[i] = "• " + l
		}
		return strings.Join(lines, "\n")
	}
	if n.Incident.Summary != "" {
		return n.Incident.Summary
	}
	switch n.Event {
	case EventTest:
		return "This is a test notification from Vigil. If you can read it, the channel works."
	case EventResolved:
		return n.MonitorName() + " is up again."
	case EventMonitorUndeclared:
		return n.MonitorName() + " is no longer declared by its source."
	case EventMonitorRedeclared:
		return n.MonitorName() + " is declared again by its source."
	case EventMonitorLate:
		return n.MonitorName() + " has not pinged since it was expected."
	case EventMonitorFlapping:
		return n.MonitorName() + " is flapping."
	case EventMonitorStable:
		return n.MonitorName() + " is stable again."
	case EventReportWeekly, EventReportMonthly:
		return n.reportSummary()
	}
	return fmt.Sprintf("%s: incident (%s).", n.MonitorName(), n.Incident.Kind)
}

// GroupLines lists the incidents of an incidents.grouped notification,
// one line each: the incident's summary, led by its monitor's name when
// the summary does not begin with it.
func (n *Notification) GroupLines() []string {
	out := make([]string, 0, len(n.Group))
	for _, g := range n.Group {
		name := (&Notification{Monitor: g.Monitor}).MonitorName()
		line := g.Incident.Summary
		if line == "" {
			line = string(g.Incident.Kind)
		}
		if !strings.HasPrefix(line, name) {
			line = name + " (" + string(g.Incident.Kind) + "): " + line
		}
		out = append(out, line)
	}
	return out
}

// Tone is how a notification reads at a glance; each kind maps it to its
// colours, icons and priorities, so that every channel agrees on it.
type Tone string

// The tones.
const (
	ToneDown   Tone = "down"   // an incident opened
	ToneUp     Tone = "up"     // an incident resolved
	ToneUpdate Tone = "update" // news of an open incident: an update, a reminder
	ToneNotice Tone = "notice" // news about a monitor, not an alert: monitor.undeclared, monitor.redeclared, monitor.flapping, monitor.stable
	ToneTest   Tone = "test"   // a test notification
)

// Tone is the notification's tone.
func (n *Notification) Tone() Tone {
	switch {
	case n.Event == EventOpened, n.Event == EventGrouped:
		return ToneDown
	case n.Event == EventMonitorLate:
		return ToneUpdate
	case n.Event == EventResolved:
		return ToneUp
	case n.Event == EventTest:
		return ToneTest
	case n.Event.IsMonitorEvent(), n.Event.IsReport():
		return ToneNotice
	}
	return ToneUpdate
}

// Fact is one labelled line of a message ("Last ping", "3 Jan 02:05 UTC").
type Fact struct {
	Label string
	Value string
}

// Facts lists the details every kind shows under the summary, in order:
// for a monitor event its source and when it stopped (or started again)
// declaring the monitor, the schedule in words, when a run was expected
// (not for a recovery, nor for an undeclared monitor, of which nothing is
// expected) and when the monitor was
// last seen (in its zone and UTC), for a failure its exit status, attempt
// and duration, for a stuck run when it started, when the incident
// opened, on recovery how long it lasted, and the tags. Empty values are
// left out. The output and the links are apart ([Notification.OutputTail],
// [Notification.Link], [Notification.RunURL]): each kind places them in
// its own way.
func (n *Notification) Facts() []Fact {
	var facts []Fact
	add := func(label, value string) {
		if value != "" {
			facts = append(facts, Fact{Label: label, Value: value})
		}
	}
	if n.Event == EventGrouped {
		add("Incidents", strconv.Itoa(len(n.Group)))
		if len(n.Group) > 0 {
			first, last := n.Group[0].Incident.OpenedAt, n.Group[len(n.Group)-1].Incident.OpenedAt
			opened := FormatTime(first)
			if !last.Equal(first) {
				opened += " to " + last.UTC().Format("15:04:05") + " UTC"
			}
			add("Opened", opened)
		}
		return facts
	}
	switch n.Event {
	case EventMonitorUndeclared, EventMonitorRedeclared:
		add("Source", n.Monitor.Source)
		label := "Undeclared"
		if n.Event == EventMonitorRedeclared {
			label = "Declared again"
		}
		if !n.EventAt.IsZero() {
			add(label, n.FormatZoned(n.EventAt))
		}
	}
	add("Schedule", n.scheduleFact())
	if n.Event != EventResolved && n.Event != EventMonitorUndeclared && n.Monitor.NextExpectedAt != nil {
		add("Expected", n.FormatZoned(*n.Monitor.NextExpectedAt))
	}
	if n.Event != EventTest {
		last := "never"
		if n.Monitor.LastPingAt != nil {
			last = n.FormatZoned(*n.Monitor.LastPingAt)
		}
		add("Last ping", last)
	}
	if n.Incident.Kind == IncidentFailed {
		if code := n.exitCode(); code != nil {
			add("Exit status", strconv.Itoa(*code))
		}
		attempt, retry := n.attempt()
		switch {
		case retry && n.Ping != nil && n.Ping.RetryAt != nil:
			add("Attempt", fmt.Sprintf("%s; the scheduler retries at %s", attemptWord(attempt), n.FormatZoned(*n.Ping.RetryAt)))
		case retry:
			add("Attempt", attemptWord(attempt)+"; the scheduler will retry")
		case n.Ping != nil || n.Run != nil:
			add("Attempt", attemptWord(attempt)+", final: no retry announced")
		}
	}
	if d := n.duration(); d != "" {
		add("Duration", d)
	}
	if n.Incident.Kind.aboutRunStart() && n.Run != nil && n.Run.StartedAt != nil {
		add("Started", n.FormatZoned(*n.Run.StartedAt))
	}
	if !n.Incident.OpenedAt.IsZero() {
		add("Opened", n.FormatZoned(n.Incident.OpenedAt))
	}
	if n.Event == EventResolved && n.Incident.ResolvedAt != nil {
		add("Resolved", n.FormatZoned(*n.Incident.ResolvedAt))
		if d := n.Downtime(); d > 0 {
			add("Downtime", FormatDuration(d))
		}
	}
	if len(n.Monitor.Tags) > 0 {
		add("Tags", strings.Join(n.Monitor.Tags, ", "))
	}
	return facts
}

// scheduleFact is the schedule in words (with its zone) and its
// expression: "at 02:00 every day, Europe/Berlin (0 2 * * *)".
func (n *Notification) scheduleFact() string {
	m := n.Monitor
	if m.ScheduleWords == "" {
		return m.Schedule
	}
	words := m.ScheduleWords
	if expr, _, ok := strings.Cut(m.Schedule, " ("); ok && expr != "" && !strings.HasPrefix(m.Schedule, "every ") {
		words += " (" + expr + ")"
	}
	return words
}

func attemptWord(attempt int) string {
	if attempt <= 0 {
		return "not reported"
	}
	return strconv.Itoa(attempt)
}

func (n *Notification) exitCode() *int {
	if n.Ping != nil && n.Ping.ExitCode != nil {
		return n.Ping.ExitCode
	}
	if n.Run != nil {
		return n.Run.ExitCode
	}
	return nil
}

// duration is how long the failing run took, as its ping or run reports
// it: "12.4 s", "3m 5s".
func (n *Notification) duration() string {
	var ms *int64
	if n.Run != nil && n.Run.DurationMS != nil {
		ms = n.Run.DurationMS
	} else if n.Ping != nil && n.Ping.DurationMS != nil {
		ms = n.Ping.DurationMS
	}
	if ms == nil || n.Incident.Kind == IncidentStuck {
		return ""
	}
	d := time.Duration(*ms) * time.Millisecond
	switch {
	case d < time.Second:
		return strconv.FormatInt(*ms, 10) + " ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
	}
	return FormatDuration(d)
}

// Validate reports a notification that no channel could render correctly.
// Kinds call it first and return its error as permanent.
func (n *Notification) Validate() error {
	var errs []error
	if !n.Event.Valid() {
		errs = append(errs, fmt.Errorf("event %q is not one of incident.opened, incident.resolved, incident.updated, incident.reminder, incidents.grouped, monitor.undeclared, monitor.redeclared, monitor.late, monitor.flapping, monitor.stable, report.weekly, report.monthly, test", n.Event))
	}
	if n.Event == EventGrouped && len(n.Group) == 0 {
		errs = append(errs, errors.New("incidents.grouped lists no incident"))
	}
	if n.Event.IsReport() && n.Report == nil {
		errs = append(errs, errors.New("report event has no report"))
	}
	if n.Event != EventTest && !n.Event.IsMonitorEvent() && !n.Event.IsReport() {
		if n.Incident.ID == "" {
			errs = append(errs, errors.New("incident id is empty"))
		}
		if !n.Incident.Kind.Valid() {
			errs = append(errs, fmt.Errorf("incident kind %q is not one of missed, failed, stuck, deadline, overlap", n.Incident.Kind))
		}
		if n.Incident.OpenedAt.IsZero() {
			errs = append(errs, errors.New("incident opened_at is zero"))
		}
	}
	if n.Event == EventResolved && n.Incident.ResolvedAt == nil {
		errs = append(errs, errors.New("resolved notification has no resolved_at"))
	}
	if n.SentAt.IsZero() {
		errs = append(errs, errors.New("sent_at is zero"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid notification: %w", err)
	}
	return nil
}

// FormatTime renders t for people, in UTC: "2026-01-03 02:05 UTC".
func FormatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 MST")
}

func formatOptionalTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return FormatTime(*t)
}

// FormatDuration renders d for people, to the two largest units:
// "45s", "12m", "1h 5m", "3d 2h".
func FormatDuration(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	d = d.Round(time.Minute)
	days := d / (24 * time.Hour)
	hours := (d % (24 * time.Hour)) / time.Hour
	minutes := (d % time.Hour) / time.Minute
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%dd %dh", days, hours)
	case days > 0:
		return fmt.Sprintf("%dd", days)
	case hours > 0 && minutes > 0:
		return fmt.Sprintf("%dh %dm", hours, minutes)
	case hours > 0:
		return fmt.Sprintf("%dh", hours)
	}
	return fmt.Sprintf("%dm", minutes)
}
