package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/kinds"
)

// ErrKindUnavailable is returned by [Sender.TestChannel] for a channel of
// a kind this server cannot send to at all: email without an SMTP server.
var ErrKindUnavailable = errors.New("delivery: this server has no SMTP server configured (VIGIL_SMTP_HOST), so it cannot send e-mail")

// waitMax bounds one wait of a delivery for an earlier one to the same
// channel, so that it looks again at least this often.
const waitMax = time.Minute

// Sender makes delivery attempts: it builds a channel's notifier the same
// way for delivery jobs and for test notifications.
type Sender struct {
	cfg     Config
	metrics *metrics
}

// NewSender returns a Sender on its own, for test notifications outside a
// running [Service]. cfg.Store may be nil: TestChannel does not use it.
func NewSender(cfg Config) (*Sender, error) {
	cfg = cfg.withDefaults()
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	return &Sender{cfg: cfg, metrics: m}, nil
}

// verdict is what River should do with a job after an attempt.
type verdict int

const (
	// verdictDone completes the job.
	verdictDone verdict = iota
	// verdictRetry fails the job, to be tried again after delay.
	verdictRetry
	// verdictCancel ends the job for good.
	verdictCancel
	// verdictWait puts the job off by delay without counting an attempt.
	verdictWait
)

type result struct {
	verdict verdict
	err     error
	delay   time.Duration
}

// job is what the sender needs of a River job.
type job struct {
	args        SendArgs
	attempt     int // River's attempt number, from 1
	maxAttempts int
}

// deliver makes one attempt of a delivery job, logs it in the store, and
// says what River should do next.
func (s *Sender) deliver(ctx context.Context, j job) result {
	st, cfg := s.cfg.Store, s.cfg
	log := cfg.Logger.With("delivery_id", j.args.DeliveryID, "incident_id", j.args.IncidentID,
		"channel_id", j.args.ChannelID, "event", j.args.Event)

	d, err := st.DeliveryGet(ctx, j.args.ProjectID, j.args.DeliveryID)
	if errors.Is(err, monitors.ErrNotFound) {
		// Its incident, monitor or channel was deleted.
		log.Info("delivery is gone; nothing to send")
		return result{verdict: verdictCancel, err: err}
	}
	if err != nil {
		return result{verdict: verdictRetry, err: err, delay: cfg.Backoff.Delay(j.attempt, rand.Float64())}
	}
	switch d.State {
	case monitors.DeliverySent:
		return result{verdict: verdictDone} // never twice
	case monitors.DeliveryFailed:
		return result{verdict: verdictCancel, err: errors.New("the delivery failed already")}
	}
	now := cfg.NowFunc()
	// A delivery of a group waits for the group's time; then the group's
	// lowest delivery sends it, and the others wait for that one below.
	if d.GroupAt != nil && d.Event == monitors.EventOpened && now.Before(*d.GroupAt) {
		return result{verdict: verdictWait, delay: min(d.GroupAt.Sub(now), cfg.groupPoll)}
	}
	// Wait for an earlier delivery to the same channel (or for the one
	// that sends this delivery's group), but no longer than
	// this one's own retry window: the earlier one's ends first, so past
	// it, the earlier one can only be stuck (say, its job was cancelled by
	// hand), and this one must not wait for ever.
	if d.WaitsFor != 0 && now.Before(d.CreatedAt.Add(cfg.RetryWindow)) {
		wait := cfg.Backoff.Base
		if d.WaitsForNextAttemptAt != nil {
			wait = max(d.WaitsForNextAttemptAt.Sub(now), wait)
		}
		log.Debug("delivery waits for an earlier one to the same channel", "waits_for", d.WaitsFor)
		return result{verdict: verdictWait, delay: min(wait, waitMax)}
	}

	ch, err := st.ChannelGet(ctx, d.ProjectID, d.ChannelID)
	if errors.Is(err, monitors.ErrNotFound) {
		log.Info("channel is gone; nothing to send")
		return result{verdict: verdictCancel, err: err}
	}
	if err != nil {
		return result{verdict: verdictRetry, err: err, delay: cfg.Backoff.Delay(j.attempt, rand.Float64())}
	}
	if d.Event.IsReport() {
		return s.deliverReport(ctx, j, d, ch, now)
	}
	if d.Event.IsMonitorEvent() {
		m, err := st.MonitorGet(ctx, d.ProjectID, d.MonitorID)
		if err == nil {
			return s.attempt(ctx, j, d, ch, NewMonitorNotification(d, m, now, cfg.BaseURL))
		}
		if errors.Is(err, monitors.ErrNotFound) {
			log.Info("monitor is gone; nothing to send")
			return result{verdict: verdictCancel, err: err}
		}
		return result{verdict: verdictRetry, err: err, delay: cfg.Backoff.Delay(j.attempt, rand.Float64())}
	}
	if d.GroupAt != nil && d.Event == monitors.EventOpened {
		if res, ok := s.deliverGroup(ctx, j, d, ch, now); ok {
			return res
		}
	}
	in, err := st.IncidentGet(ctx, d.ProjectID, d.IncidentID)
	if err == nil {
		var m *monitors.Monitor
		if m, err = st.MonitorGet(ctx, d.ProjectID, d.MonitorID); err == nil {
			var facts IncidentFacts
			if facts, err = s.incidentFacts(ctx, in); err == nil {
				n := NewNotification(d, in, m, facts, now, cfg.BaseURL)
				n.SnoozeURL = SnoozeURL(cfg.Signer, cfg.BaseURL, d, in, now)
				return s.attempt(ctx, j, d, ch, n)
			}
		}
	}
	if errors.Is(err, monitors.ErrNotFound) {
		log.Info("incident is gone; nothing to send")
		return result{verdict: verdictCancel, err: err}
	}
	return result{verdict: verdictRetry, err: err, delay: cfg.Backoff.Delay(j.attempt, rand.Float64())}
}

// deliverReport makes one attempt of a report's delivery: the report as
// it was claimed, so every attempt sends the same. A channel whose kind
// carries no reports (its report field was set before it could not be,
// or its kind changed) fails for good, logged like any attempt.
func (s *Sender) deliverReport(ctx context.Context, j job, d *monitors.Delivery, ch *monitors.Channel, now time.Time) result {
	r, err := s.cfg.Store.ReportGet(ctx, d.ProjectID, d.ReportID)
	if errors.Is(err, monitors.ErrNotFound) {
		s.cfg.Logger.Info("report is gone; nothing to send", "delivery_id", d.ID, "report_id", d.ReportID)
		return result{verdict: verdictCancel, err: err}
	}
	if err != nil {
		return result{verdict: verdictRetry, err: err, delay: s.cfg.Backoff.Delay(j.attempt, rand.Float64())}
	}
	return s.attempt(ctx, j, d, ch, NewReportNotification(d, r, now, s.cfg.BaseURL))
}

// incidentFacts loads the run and the ping that incident in names. Either
// may have been pruned from the history: the notification then goes
// without it.
func (s *Sender) incidentFacts(ctx context.Context, in *monitors.Incident) (IncidentFacts, error) {
	var f IncidentFacts
	if in.PingID > 0 {
		ps, err := s.cfg.Store.PingList(ctx, &monitors.HistoryListParams{ProjectID: in.ProjectID, MonitorID: in.MonitorID,
			Limit: 1, Before: in.PingID + 1})
		if err != nil {
			return f, fmt.Errorf("load the ping of incident %s: %w", in.ID, err)
		}
		if len(ps) == 1 && ps[0].ID == in.PingID {
			f.Ping = ps[0]
		}
	}
	if in.RunSeq > 0 {
		rs, err := s.cfg.Store.RunList(ctx, &monitors.HistoryListParams{ProjectID: in.ProjectID, MonitorID: in.MonitorID,
			Limit: 1, Before: in.RunSeq + 1})
		if err != nil {
			return f, fmt.Errorf("load the run of incident %s: %w", in.ID, err)
		}
		if len(rs) == 1 && rs[0].Seq == in.RunSeq {
			f.Run = rs[0]
		}
	}
	return f, nil
}

// groupMax bounds the incidents of one incidents.grouped message; the
// rest of a larger group go out in further messages of up to as many.
const groupMax = 100

// deliverGroup sends the group of d, which no earlier delivery of the
// group waits before, as one incidents.grouped message, and logs the
// attempt on every delivery of it. It reports false when the group is d
// alone (or only d's incident is still there): d then goes out as an
// incident.opened of its own.
func (s *Sender) deliverGroup(ctx context.Context, j job, d *monitors.Delivery, ch *monitors.Channel, now time.Time) (result, bool) {
	st, cfg := s.cfg.Store, s.cfg
	retry := func(err error) (result, bool) {
		return result{verdict: verdictRetry, err: err, delay: cfg.Backoff.Delay(j.attempt, rand.Float64())}, true
	}
	members, err := st.DeliveryGroup(ctx, d.ProjectID, d.ChannelID, *d.GroupAt, groupMax)
	if err != nil {
		return retry(err)
	}
	var (
		items []*notifiers.Notification
		also  []int64
	)
	for _, md := range members {
		in, err := st.IncidentGet(ctx, md.ProjectID, md.IncidentID)
		if errors.Is(err, monitors.ErrNotFound) {
			continue // deleted meanwhile: its delivery goes with it
		}
		if err != nil {
			return retry(err)
		}
		m, err := st.MonitorGet(ctx, md.ProjectID, md.MonitorID)
		if errors.Is(err, monitors.ErrNotFound) {
			continue
		}
		if err != nil {
			return retry(err)
		}
		items = append(items, NewNotification(md, in, m, IncidentFacts{}, now, cfg.BaseURL))
		if md.ID != d.ID {
			also = append(also, md.ID)
		}
	}
	if len(items) < 2 {
		return result{}, false
	}
	n := NewGroupNotification(d, items, now, cfg.BaseURL)
	return s.attemptAlso(ctx, j, d, ch, n, also), true
}

// attempt sends n to ch once and logs the attempt.
func (s *Sender) attempt(ctx context.Context, j job, d *monitors.Delivery, ch *monitors.Channel, n *notifiers.Notification) result {
	return s.attemptAlso(ctx, j, d, ch, n, nil)
}

// attemptAlso is attempt for a message that also carries the deliveries
// also (the rest of its group), which share its outcome.
func (s *Sender) attemptAlso(ctx context.Context, j job, d *monitors.Delivery, ch *monitors.Channel, n *notifiers.Notification, also []int64) result {
	cfg := s.cfg
	started := cfg.NowFunc()
	err := s.send(ctx, ch, n)
	finished := cfg.NowFunc()
	if err != nil && ctx.Err() != nil && !errors.Is(err, notifiers.ErrAttemptTimeout) {
		// The job was cancelled (Vigil is stopping): not an attempt that
		// failed. River makes the job available again.
		return result{verdict: verdictRetry, err: ctx.Err()}
	}

	p := &monitors.DeliveryAttemptRecordParams{ProjectID: d.ProjectID, DeliveryID: d.ID, StartedAt: started,
		FinishedAt: finished, Outcome: monitors.AttemptSuccess, Also: also}
	res := result{verdict: verdictDone}
	if err != nil {
		p.Error = s.redact(ch, err.Error())
		var status *notifiers.HTTPStatusError
		if errors.As(err, &status) {
			p.StatusCode = status.StatusCode
		}
		res = s.decide(j, d, err, finished, p)
	}
	s.metrics.observe(ch.Kind, p.Outcome, finished.Sub(started))

	_, rerr := cfg.Store.DeliveryAttemptRecord(context.WithoutCancel(ctx), p)
	switch {
	case errors.Is(rerr, monitors.ErrConflict):
		// Another run of the job recorded an outcome first.
		return result{verdict: verdictDone}
	case errors.Is(rerr, monitors.ErrNotFound):
		return result{verdict: verdictCancel, err: rerr}
	case rerr != nil:
		// The attempt's outcome is lost. Retrying may send again: receivers
		// that deduplicate by incident id (PagerDuty) take it once.
		cfg.Logger.Error("cannot log a delivery attempt", "delivery_id", d.ID, "outcome", p.Outcome, "err", rerr)
		return result{verdict: verdictRetry, err: rerr, delay: cfg.Backoff.Delay(j.attempt, rand.Float64())}
	}

	log := cfg.Logger.With("delivery_id", d.ID, "incident_id", d.IncidentID, "channel_id", ch.ID, "kind", ch.Kind,
		"event", string(d.Event), "attempt", d.Attempts+1)
	switch p.Outcome {
	case monitors.AttemptSuccess:
		log.Debug("notification delivered")
	case monitors.AttemptRetry:
		log.Warn("notification not delivered; will retry", "status_code", p.StatusCode, "err", p.Error,
			"next_attempt_at", p.NextAttemptAt)
	default:
		log.Error("notification not delivered; giving up", "status_code", p.StatusCode, "err", p.Error)
	}
	return res
}

// decide classifies a failed attempt: permanent, or retried after the
// receiver's wait or the backoff, unless that falls after the retry window.
// It fills p's outcome and next attempt time.
func (s *Sender) decide(j job, d *monitors.Delivery, err error, now time.Time, p *monitors.DeliveryAttemptRecordParams) result {
	cfg := s.cfg
	fail := func(msg string) result {
		p.Outcome = monitors.AttemptFailed
		if msg != "" {
			p.Error += " (" + msg + ")"
		}
		return result{verdict: verdictCancel, err: errors.New(p.Error)}
	}
	if notifiers.IsPermanent(err) {
		return fail("")
	}
	after, _ := notifiers.RetryAfter(err)
	next := cfg.Backoff.NextAttemptAt(now, d.Attempts+1, after, rand.Float64())
	if deadline := d.CreatedAt.Add(cfg.RetryWindow); next.After(deadline) {
		return fail(fmt.Sprintf("gave up: the retry window of %s is over", notifiers.FormatDuration(cfg.RetryWindow)))
	}
	if j.maxAttempts > 0 && j.attempt >= j.maxAttempts {
		return fail(fmt.Sprintf("gave up after %d attempts", j.attempt))
	}
	p.Outcome, p.NextAttemptAt = monitors.AttemptRetry, &next
	return result{verdict: verdictRetry, err: errors.New(p.Error), delay: next.Sub(now)}
}

// send builds ch's notifier and makes one attempt.
func (s *Sender) send(ctx context.Context, ch *monitors.Channel, n *notifiers.Notification) error {
	if n.Event.IsReport() && !monitors.ChannelReports(ch.Kind) {
		return notifiers.Permanent(fmt.Errorf("channel %s: %s channels take no reports (only email, slack and webhook do)", ch.ID, ch.Kind))
	}
	nt, err := s.notifier(ch)
	if err != nil {
		return err
	}
	return nt.Notify(ctx, n)
}

// notifier builds the notifier of ch. A channel whose config no longer
// builds is a permanent error; an email channel without an SMTP server is
// a retryable one, as the operator may configure it and restart.
func (s *Sender) notifier(ch *monitors.Channel) (notifiers.Notifier, error) {
	if ch.Kind == email.Kind && s.cfg.smtp() == nil {
		return nil, ErrKindUnavailable
	}
	nt, err := kinds.New(ch.Kind, ch.Config, kinds.Deps{
		HTTPClient: s.cfg.HTTPClient,
		SMTP:       s.cfg.smtp(),
		Logger:     s.cfg.Logger,
		Timeout:    s.cfg.Timeout,
	})
	if err != nil {
		return nil, notifiers.Permanent(fmt.Errorf("channel %s: %s", ch.ID, s.redact(ch, err.Error())))
	}
	return nt, nil
}

// TestChannel sends a test notification to ch in one attempt, built and
// sent as delivery jobs are, and returns the attempt's error, without
// secrets. It returns an error matching ErrKindUnavailable for an email
// channel on a server without SMTP.
func (s *Sender) TestChannel(ctx context.Context, ch *monitors.Channel) error {
	n := newTestNotification(ch, s.cfg.NowFunc(), s.cfg.BaseURL)
	err := s.send(ctx, ch, n)
	outcome := monitors.AttemptSuccess
	if err != nil {
		outcome = monitors.AttemptFailed
	}
	s.metrics.observeTest(ch.Kind, outcome)
	if errors.Is(err, ErrKindUnavailable) {
		return ErrKindUnavailable
	}
	if err != nil {
		return errors.New(s.redact(ch, err.Error()))
	}
	return nil
}

// redact removes from msg every secret of ch's config and the SMTP
// password. Notifiers redact their own errors already; this is the second
// lock on the door, for text that reaches the API, the log and the store.
func (s *Sender) redact(ch *monitors.Channel, msg string) string {
	var secrets []string
	if k, err := kinds.Lookup(ch.Kind); err == nil {
		var cfg map[string]json.RawMessage
		if json.Unmarshal(ch.Config, &cfg) == nil {
			for _, key := range k.SecretKeys() {
				secrets = append(secrets, secretStrings(cfg[key])...)
			}
		}
	}
	if s.cfg.SMTP.Password != "" {
		secrets = append(secrets, s.cfg.SMTP.Password)
	}
	return notifiers.RedactString(msg, secrets...)
}

// secretStrings returns the strings in a config value: a string, or the
// values of an object of strings (webhook headers).
func secretStrings(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if strings.TrimSpace(one) == "" {
			return nil
		}
		return append([]string{one}, notifiers.URLSecrets(one)[1:]...)
	}
	var many map[string]string
	if json.Unmarshal(raw, &many) == nil {
		out := make([]string, 0, len(many))
		for _, v := range many {
			if strings.TrimSpace(v) != "" {
				out = append(out, v)
			}
		}
		return out
	}
	return nil
}
