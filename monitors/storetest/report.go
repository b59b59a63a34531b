package storetest

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// runReports runs the conformance tests of reports: the history a report
// is made of (through monitors.LoadReport), and the claim that sends it
// once.
func runReports(t *testing.T, newStore func(t *testing.T) monitors.Store) {
	t.Run("Report/Week", func(t *testing.T) {
		t.Parallel()
		testReportWeek(t, setup(t, newStore))
	})
	t.Run("Report/ClaimOnce", func(t *testing.T) {
		t.Parallel()
		testReportClaimOnce(t, setup(t, newStore))
	})
}

// ReportWeekStart and ReportWeekEnd are the week of [SeedReportWeek]:
// Monday 2026-11-23 00:00 UTC to Monday 2026-11-30 00:00 UTC.
var (
	ReportWeekStart = time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	ReportWeekEnd   = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
)

// SeedReportWeek plays a week of a project's jobs through pings and the
// evaluator (UTC, grace 5 minutes), for the report of 2026-11-23 to
// 2026-11-30:
//
//	nightly (0 3 * * *), created Sun 22 12:00:
//	  Sun 22 03:00 success: before the week, left out
//	  Mon 03:00:00-03:00:10 success (10s)                    on time
//	  Tue 03:00:00-03:00:05 attempt 1 fails, retry at 03:10;
//	      03:10:00-03:10:30 attempt 2 succeeds (30s)         on time, 1 retry
//	  Wed no run: missed opens 03:05, resolved by Thursday's
//	      start at 03:00 (23h55m)                            missed
//	  Thu 03:00:00-03:00:40 success (40s)                    on time
//	  Fri 03:00:00-03:00:20 success (20s)                    on time
//	  Sat 03:00:00-03:00:05 fails for good: failed opens, resolved
//	      by Sunday's success at 03:01:00 (24h0m55s)         failed
//	  Sun 03:00:00-03:01:00 success (60s)                    on time
//	long (0 20 * * *), created Sat 28 12:00:
//	  Sat 20:00:00-20:02:00 success (2m)                     on time
//	  Sun 20:00:00-20:00:30 fails for good: failed opens 20:00:30,
//	      still open at the week's end (3h59m30s in it)       failed
//	quiet, created Sun 29 12:00: never pinged
//	later, created Mon 30 01:00: after the week, left out
//
// It returns the monitors by slug.
func SeedReportWeek(t *testing.T, s monitors.Store, projectID string) map[string]*monitors.Monitor {
	t.Helper()
	ctx := t.Context()
	at := func(day, h, mi, sec int) time.Time { return time.Date(2026, 11, day, h, mi, sec, 0, time.UTC) }
	mk := func(slug, expr string, created time.Time) *monitors.Monitor {
		return MustMonitor(t, s, projectID, slug, func(m *monitors.Monitor) {
			m.Schedule = monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: expr, TZ: "UTC"}
			m.CreatedAt, m.UpdatedAt = created, created
		})
	}
	ping := func(m *monitors.Monitor, kind monitors.PingKind, ts time.Time, rid string, attempt int, retryAt *time.Time) {
		t.Helper()
		p := Ping(m, kind, ts)
		p.Ping.RID, p.Ping.Attempt, p.Ping.RetryAt = rid, attempt, retryAt
		MustRecord(t, s, p)
	}
	evaluate := func(now time.Time) int {
		t.Helper()
		res, err := s.MonitorEvaluateDue(ctx, &monitors.EvaluateDueParams{Now: now, Limit: 10})
		require.NoError(t, err)
		return len(res.Evaluated)
	}
	nightly := mk("nightly", "0 3 * * *", at(21, 12, 0, 0))
	run := func(m *monitors.Monitor, day, h int, rid string, secs int) {
		t.Helper()
		ping(m, monitors.PingStart, at(day, h, 0, 0), rid, 0, nil)
		ping(m, monitors.PingSuccess, at(day, h, 0, secs), rid, 0, nil)
	}
	run(nightly, 22, 3, "sun-before", 5)
	run(nightly, 23, 3, "mon", 10)
	ping(nightly, monitors.PingStart, at(24, 3, 0, 0), "tue-1", 1, nil)
	ping(nightly, monitors.PingFail, at(24, 3, 0, 5), "tue-1", 1, ptr(at(24, 3, 10, 0)))
	require.Zero(t, evaluate(at(24, 3, 5, 0)), "a retry was announced")
	ping(nightly, monitors.PingStart, at(24, 3, 10, 0), "tue-2", 2, nil)
	ping(nightly, monitors.PingSuccess, at(24, 3, 10, 30), "tue-2", 2, nil)
	require.Equal(t, 1, evaluate(at(25, 3, 5, 0)), "Wednesday is missed")
	run(nightly, 26, 3, "thu", 40)
	run(nightly, 27, 3, "fri", 20)
	ping(nightly, monitors.PingStart, at(28, 3, 0, 0), "sat", 0, nil)
	ping(nightly, monitors.PingFail, at(28, 3, 0, 5), "sat", 0, nil)
	run(nightly, 29, 3, "sun", 60)

	long := mk("long", "0 20 * * *", at(28, 12, 0, 0))
	run(long, 28, 20, "sat", 120)
	ping(long, monitors.PingStart, at(29, 20, 0, 0), "sun", 0, nil)
	ping(long, monitors.PingFail, at(29, 20, 0, 30), "sun", 0, nil)

	quiet := mk("quiet", "0 4 * * *", at(29, 12, 0, 0))
	later := mk("later", "0 4 * * *", time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC))
	return map[string]*monitors.Monitor{"nightly": nightly, "long": long, "quiet": quiet, "later": later}
}

// testReportWeek checks the report of SeedReportWeek's week against the
// numbers worked out by hand there.
func testReportWeek(t *testing.T, b *bundle) {
	ms := SeedReportWeek(t, b.s, b.prj.ID)
	now := time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)
	start, end := monitors.ReportPeriodAt(monitors.ReportWeekly, now)
	require.Equal(t, ReportWeekStart, start)
	require.Equal(t, ReportWeekEnd, end)

	r, err := monitors.LoadReport(b.ctx, b.s, b.prj.ID, monitors.ReportWeekly, start, end, now)
	require.NoError(t, err)
	s, h := time.Second, time.Hour
	nightlyIncidents := map[monitors.IncidentKind]monitors.IncidentTally{
		monitors.IncidentMissed: {Count: 1, Duration: 23*h + 55*time.Minute},
		monitors.IncidentFailed: {Count: 1, Duration: 24*h + 55*s},
	}
	longIncidents := map[monitors.IncidentKind]monitors.IncidentTally{
		monitors.IncidentFailed: {Count: 1, Duration: 3*h + 59*time.Minute + 30*s},
	}
	nightly := monitors.ReportMonitor{ID: ms["nightly"].ID, Name: "nightly", Slug: "nightly", CreatedAt: ms["nightly"].CreatedAt,
		Occurrences: 7, OnTime: 5, Incidents: nightlyIncidents, Runs: 5, RunP50: 30 * s, RunP95: 60 * s, Retries: 1}
	long := monitors.ReportMonitor{ID: ms["long"].ID, Name: "long", Slug: "long", CreatedAt: ms["long"].CreatedAt,
		Occurrences: 2, OnTime: 1, Incidents: longIncidents, Runs: 1, RunP50: 2 * time.Minute, RunP95: 2 * time.Minute}
	quiet := monitors.ReportMonitor{ID: ms["quiet"].ID, Name: "quiet", Slug: "quiet", CreatedAt: ms["quiet"].CreatedAt,
		Incidents: map[monitors.IncidentKind]monitors.IncidentTally{}}
	want := &monitors.Report{ProjectID: b.prj.ID, ProjectName: b.prj.Name, Period: monitors.ReportWeekly,
		Start: start, End: end, CreatedAt: now, Monitors: 3, Occurrences: 9, OnTime: 6,
		Incidents: map[monitors.IncidentKind]monitors.IncidentTally{
			monitors.IncidentMissed: {Count: 1, Duration: 23*h + 55*time.Minute},
			monitors.IncidentFailed: {Count: 2, Duration: 28*h + 25*s},
		},
		WithIncidents: []monitors.ReportMonitor{nightly, long}, WithIncidentsTotal: 2,
		Slowest:     []monitors.ReportMonitor{long, nightly},
		MostRetried: []monitors.ReportMonitor{nightly},
		NeverPinged: []monitors.ReportMonitor{quiet}, NeverPingedTotal: 1,
	}
	require.Equal(t, want, r)
	ratio, ok := r.Ratio()
	require.True(t, ok)
	require.InDelta(t, 6.0/9, ratio, 1e-9)
}

// testReportClaimOnce claims a report from many callers at once: one
// claim wins, with its delivery; the others are ErrConflict.
func testReportClaimOnce(t *testing.T, b *bundle) {
	// Nanoseconds, which the stores do not keep.
	now := time.Date(2026, 11, 30, 0, 0, 30, 123456789, time.UTC)
	ch, err := b.s.ChannelCreate(b.ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: b.prj.ID,
		Kind: "webhook", Name: "reports", Config: json.RawMessage(`{"url":"https://example.com/hook"}`),
		Report: monitors.ReportWeekly, Now: T0})
	require.NoError(t, err)
	require.Equal(t, monitors.ReportWeekly, ch.Report)
	_, err = b.s.ChannelCreate(b.ctx, &monitors.ChannelCreateParams{ID: RandomID("ch_"), ProjectID: b.prj.ID,
		Kind: "webhook", Name: "no reports", Config: json.RawMessage(`{"url":"https://example.com/hook"}`), Now: T0})
	require.NoError(t, err)

	chs, err := b.s.ReportChannels(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []monitors.ReportChannel{{ID: ch.ID, ProjectID: b.prj.ID, Report: monitors.ReportWeekly}}, chs)
	due := monitors.ReportsDue(chs, now)
	require.Len(t, due, 1)

	r, err := monitors.LoadReport(b.ctx, b.s, b.prj.ID, monitors.ReportWeekly, due[0].Start, due[0].End, now)
	require.NoError(t, err)
	r.ID, r.ChannelID = monitors.ReportID(ch.ID, monitors.ReportWeekly, due[0].Start), ch.ID
	require.Equal(t, ch.ID+".weekly.2026-11-23", r.ID)

	const callers = 8
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		won       []*monitors.Delivery
		conflicts int
	)
	for range callers {
		wg.Go(func() {
			d, err := b.s.ReportClaim(b.ctx, &monitors.ReportClaimParams{Report: r, Now: now})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won = append(won, d)
			case errors.Is(err, monitors.ErrConflict):
				conflicts++
			default:
				t.Errorf("claim: %v", err)
			}
		})
	}
	wg.Wait()
	require.Len(t, won, 1)
	require.Equal(t, callers-1, conflicts)
	d := won[0]
	require.Equal(t, r.ID, d.ReportID)
	require.Equal(t, monitors.EventReportWeekly, d.Event)
	require.Equal(t, ch.ID, d.ChannelID)
	require.Empty(t, d.IncidentID)
	require.Empty(t, d.MonitorID)
	require.Zero(t, d.EventID)
	require.Equal(t, monitors.DeliveryPending, d.State)

	got, err := b.s.DeliveryGet(b.ctx, b.prj.ID, d.ID)
	require.NoError(t, err)
	// The claim returns the delivery as stored.
	stamped := *got
	stamped.EventAt, stamped.Summary, stamped.WaitsFor, stamped.WaitsForNextAttemptAt = d.EventAt, d.Summary, d.WaitsFor, d.WaitsForNextAttemptAt
	require.Equal(t, &stamped, d)
	require.Equal(t, r.ID, got.ReportID)
	require.True(t, got.EventAt.Equal(now.Truncate(time.Microsecond)), "a report's delivery is stamped when it was claimed")
	require.Zero(t, got.WaitsFor)

	stored, err := b.s.ReportGet(b.ctx, b.prj.ID, r.ID)
	require.NoError(t, err)
	require.Equal(t, r, stored)
	_, err = b.s.ReportGet(b.ctx, MustProject(t, b.s).ID, r.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound, "another project's report")

	chs, err = b.s.ReportChannels(b.ctx)
	require.NoError(t, err)
	require.Len(t, chs, 1)
	require.NotNil(t, chs[0].LastStart)
	require.True(t, chs[0].LastStart.Equal(due[0].Start))
	require.Empty(t, monitors.ReportsDue(chs, now), "claimed: not due any more")

	_, err = b.s.DeliveryAttemptRecord(b.ctx, &monitors.DeliveryAttemptRecordParams{ProjectID: b.prj.ID, DeliveryID: d.ID,
		StartedAt: now, FinishedAt: now.Add(time.Second), Outcome: monitors.AttemptSuccess})
	require.NoError(t, err)
	got, err = b.s.DeliveryGet(b.ctx, b.prj.ID, d.ID)
	require.NoError(t, err)
	require.Equal(t, monitors.DeliverySent, got.State)

	require.NoError(t, b.s.ChannelDelete(b.ctx, b.prj.ID, ch.ID))
	_, err = b.s.ReportGet(b.ctx, b.prj.ID, r.ID)
	require.ErrorIs(t, err, monitors.ErrNotFound, "a channel's reports go with it")
	next := *r
	next.ID = monitors.ReportID(ch.ID, monitors.ReportWeekly, ReportWeekEnd)
	_, err = b.s.ReportClaim(b.ctx, &monitors.ReportClaimParams{Report: &next, Now: now})
	require.ErrorIs(t, err, monitors.ErrNotFound, "a deleted channel")
}
