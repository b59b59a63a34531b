package manage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// A snooze link is a signed, single-purpose, expiring URL that snoozes one
// monitor for one duration without a sign-in: notifications carry one
// ("snooze 1 h"). It can do nothing else: its signature covers the
// project, the monitor, the duration and the expiry, under a key of the
// server's key file kept for this purpose only (see secrets.Keyring.Sign).
// Opening it (GET) shows what it would do; only a POST does it, so a link
// preview that fetches it snoozes nothing.

// Signer makes and checks MACs with the server's secret key
// (secrets.Keyring).
type Signer interface {
	Sign(purpose string, msg []byte) string
	Verify(purpose string, msg []byte, sig string) error
}

// Snooze links' defaults: what a notification's link does, and how long it
// stays good.
const (
	SnoozeLinkSeconds = 3600
	SnoozeLinkTTL     = 24 * time.Hour
	// snoozeLinkPurpose names the MAC key of snooze links.
	snoozeLinkPurpose = "snooze-link/v1"
)

// Errors of a snooze link.
var (
	// ErrLinkInvalid is a link that is not one this server signed for
	// this monitor, duration and expiry.
	ErrLinkInvalid = errors.New("this snooze link is not valid: it was changed, or it is not one of this Vigil's")
	// ErrLinkExpired is a link past its expiry.
	ErrLinkExpired = errors.New("this snooze link has expired")
)

// SnoozeLink is what a snooze link says.
type SnoozeLink struct {
	ProjectID, MonitorID string
	Seconds              int64
	Expires              time.Time
	Sig                  string
}

func (l *SnoozeLink) message() []byte {
	return []byte(strings.Join([]string{"snooze", l.ProjectID, l.MonitorID,
		strconv.FormatInt(l.Seconds, 10), strconv.FormatInt(l.Expires.Unix(), 10)}, "\x00"))
}

// NewSnoozeLink signs a link that snoozes a monitor for seconds, good
// until expires (to the second).
func NewSnoozeLink(s Signer, projectID, monitorID string, seconds int64, expires time.Time) *SnoozeLink {
	l := &SnoozeLink{ProjectID: projectID, MonitorID: monitorID, Seconds: seconds, Expires: expires.Truncate(time.Second).UTC()}
	l.Sig = s.Sign(snoozeLinkPurpose, l.message())
	return l
}

// Path is the link's path and query: /snooze/{monitor}?project=&seconds=&expires=&sig=.
func (l *SnoozeLink) Path() string {
	q := url.Values{"project": {l.ProjectID}, "seconds": {strconv.FormatInt(l.Seconds, 10)},
		"expires": {strconv.FormatInt(l.Expires.Unix(), 10)}, "sig": {l.Sig}}
	return "/snooze/" + url.PathEscape(l.MonitorID) + "?" + q.Encode()
}

// ParseSnoozeLink reads a link's monitor (from its path) and query. It
// checks nothing: see Check.
func ParseSnoozeLink(monitorID string, q url.Values) (*SnoozeLink, error) {
	seconds, err1 := strconv.ParseInt(q.Get("seconds"), 10, 64)
	expires, err2 := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err1 != nil || err2 != nil || q.Get("project") == "" || q.Get("sig") == "" || monitorID == "" {
		return nil, ErrLinkInvalid
	}
	return &SnoozeLink{ProjectID: q.Get("project"), MonitorID: monitorID, Seconds: seconds,
		Expires: time.Unix(expires, 0).UTC(), Sig: q.Get("sig")}, nil
}

// Check verifies the link's signature, then its expiry at now.
func (l *SnoozeLink) Check(s Signer, now time.Time) error {
	if s == nil {
		return ErrLinkInvalid
	}
	if err := s.Verify(snoozeLinkPurpose, l.message(), l.Sig); err != nil {
		return ErrLinkInvalid
	}
	if !now.Before(l.Expires) {
		return ErrLinkExpired
	}
	return nil
}

// SnoozeByLink does what a checked snooze link says: snooze its monitor
// for its duration from now. The link is checked again here, so that no
// caller can skip it.
func (s *Service) SnoozeByLink(ctx context.Context, signer Signer, l *SnoozeLink) (*monitors.Monitor, error) {
	if err := l.Check(signer, s.now()); err != nil {
		return nil, err
	}
	m, err := s.MonitorSnooze(ctx, l.ProjectID, l.MonitorID, &Snooze{Seconds: &l.Seconds})
	if err != nil {
		return nil, fmt.Errorf("snooze by link: %w", err)
	}
	return m, nil
}
