package monitors_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
	"github.com/vigilhq/vigil/monitors/storetest"
)

// The cases of the Hangfire articles in /work/shared/reference: each
// occurrence of a recurring job is its own background job with its own
// retry chain, and the recurring scheduler starts the next occurrence
// without waiting for the previous one's retries.

func scheduledAt(t time.Time) pingOpt { return func(p *monitors.Ping) { p.ScheduledAt = &t } }

const (
	endSuccess = storetest.ChainSucceeds
	endFinal   = storetest.ChainFails
	endSilent  = storetest.ChainGoesSilent
)

func chain(occ time.Time, last int, end storetest.ChainEnd, keyed bool) []monitors.Ping {
	return storetest.HangfireChain(occ, last, end, keyed)
}

func pings(kind monitors.PingKind, at time.Time, opts ...pingOpt) []monitors.Ping {
	p := monitors.Ping{Kind: kind, At: at}
	for _, o := range opts {
		o(&p)
	}
	return []monitors.Ping{p}
}

// play applies the pings in time order, applying every deadline that
// falls before each, then every deadline before until. At each of the
// probes' times (before the pings of that instant), probe is called.
func (s *scenario) play(until time.Time, ps []monitors.Ping, probes map[time.Time]func()) {
	s.t.Helper()
	slices.SortStableFunc(ps, func(a, b monitors.Ping) int { return a.At.Compare(b.At) })
	var times []time.Time
	for t := range probes {
		times = append(times, t)
	}
	slices.SortFunc(times, time.Time.Compare)
	probe := func(before time.Time) {
		for len(times) > 0 && !times[0].After(before) {
			s.advance(times[0])
			probes[times[0]]()
			times = times[1:]
		}
	}
	for _, p := range ps {
		probe(p.At)
		s.advance(p.At)
		tr, err := monitors.ApplyPing(s.m, &p)
		require.NoError(s.t, err)
		s.record(tr)
	}
	probe(until)
	s.advance(until)
}

func (s *scenario) changes(op monitors.IncidentOp, kind monitors.IncidentKind) []monitors.IncidentChange {
	var out []monitors.IncidentChange
	for _, c := range s.log {
		if c.Op == op && c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func hourlyNoOverlap() *monitors.Monitor {
	m := hourly()
	m.Overlap = monitors.OverlapIgnore // runs of different occurrences may well overlap here
	return m
}

func TestRetryChainsPerOccurrence(t *testing.T) {
	t.Parallel()
	h := func(s string) time.Time { return at("2026-01-01T" + s + "Z") }
	// The 00:00 occurrence succeeds, so the monitor is watched from there.
	first := pings(monitors.PingSuccess, h("00:00:00"), scheduledAt(h("00:00:00")))
	ok := func(occ string) []monitors.Ping { return chain(h(occ), 1, endSuccess, true) }

	t.Run("TwoChainsAlive", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, hourlyNoOverlap())
		// 01:00 runs the whole default chain (11 attempts, 4 h 45 m) and
		// gives up; 02:00 fails three times and succeeds on its third retry.
		pings := slices.Concat(first, chain(h("01:00:00"), 11, endFinal, true), chain(h("02:00:00"), 4, endSuccess, true),
			ok("03:00:00"), ok("04:00:00"), ok("05:00:00"), ok("06:00:00"))
		s.play(h("06:30:00"), pings, map[time.Time]func(){
			h("02:00:30"): func() {
				require.Len(t, s.m.State.Retries, 2, "01:00 and 02:00 each await their retry")
				require.Equal(t, monitors.StatusRetrying, s.m.State.Status)
			},
			h("02:10:00"): func() { require.Len(t, s.m.State.Retries, 1, "02:00 succeeded; 01:00 still retrying") },
		})
		require.Equal(t, []monitors.IncidentKind{monitors.IncidentFailed}, s.opened(), "only 01:00's final failure alerts")
		require.Contains(t, s.log[0].Summary, "attempt 11, final")
		require.Empty(t, s.m.State.Retries)
	})

	t.Run("ThreeChainsAlive", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, hourlyNoOverlap())
		// 01:00, 02:00 and 03:00 fail on and on; 01:00 succeeds on its
		// tenth retry, 02:00 and 03:00 on their ninth.
		pings := slices.Concat(first, chain(h("01:00:00"), 11, endSuccess, true), chain(h("02:00:00"), 10, endSuccess, true),
			chain(h("03:00:00"), 10, endSuccess, true), ok("04:00:00"), ok("05:00:00"), ok("06:00:00"), ok("07:00:00"), ok("08:00:00"))
		s.play(h("08:30:00"), pings, map[time.Time]func(){
			h("03:00:30"): func() {
				require.Len(t, s.m.State.Retries, 3, "three occurrences retrying at once")
				occs := []time.Time{}
				for _, r := range s.m.State.Retries {
					occs = append(occs, r.Occ)
				}
				require.ElementsMatch(t, []time.Time{h("01:00:00"), h("02:00:00"), h("03:00:00")}, occs)
			},
		})
		require.Empty(t, s.opened(), "every chain reported each retry it announced, and each ended well")
		require.Empty(t, s.m.State.Retries)
		require.Equal(t, monitors.StatusUp, s.m.State.Status)
	})

	t.Run("OneChainGoesSilent", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, hourlyNoOverlap())
		// 02:00's seventh attempt announces a retry that never comes (its
		// job was deleted, its server died); 01:00 and 03:00 go on.
		silent := chain(h("02:00:00"), 7, endSilent, true)
		awaited := *silent[len(silent)-1].RetryAt
		pings := slices.Concat(first, chain(h("01:00:00"), 11, endSuccess, true), silent,
			chain(h("03:00:00"), 10, endSuccess, true), ok("04:00:00"), ok("05:00:00"), ok("06:00:00"), ok("07:00:00"), ok("08:00:00"))
		s.play(h("08:30:00"), pings, nil)
		opened := s.changes(monitors.IncidentOpen, monitors.IncidentMissed)
		require.Len(t, opened, 1)
		require.Equal(t, awaited.Add(s.m.Grace()), opened[0].At, "opened at its announced retry plus grace")
		require.Contains(t, opened[0].Summary, "retry attempt 8 of the occurrence of 2026-01-01 02:00 UTC, announced for "+fmtUTC(awaited))
		require.Empty(t, s.changes(monitors.IncidentResolve, monitors.IncidentMissed),
			"the other chains' attempts and later occurrences do not end it")
		require.Equal(t, monitors.StatusDown, s.m.State.Status)
		require.Empty(t, s.m.State.Retries, "01:00 and 03:00 were watched to their end")

		// The lost retry turns up after all: that ends it.
		late := h("08:40:00")
		s.ping(monitors.PingSuccess, late, attempt(8), scheduledAt(h("02:00:00")))
		require.Len(t, s.changes(monitors.IncidentResolve, monitors.IncidentMissed), 1)
		require.Equal(t, monitors.StatusUp, s.m.State.Status)
	})

	t.Run("OtherChainGoesSilentWhileOneIsDown", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, hourlyNoOverlap())
		// 01:00 goes silent after attempt 8, 02:00 after attempt 7: the
		// second is reported once the first's incident ends.
		pings := slices.Concat(first, chain(h("01:00:00"), 8, endSilent, true), chain(h("02:00:00"), 7, endSilent, true),
			ok("03:00:00"), ok("04:00:00"))
		s.play(h("04:30:00"), pings, nil)
		require.Len(t, s.changes(monitors.IncidentOpen, monitors.IncidentMissed), 1)
		require.Contains(t, s.log[0].Summary, "of the occurrence of 2026-01-01 01:00 UTC")
		require.Len(t, s.m.State.Retries, 1, "02:00's overdue retry is still remembered")
		s.ping(monitors.PingSuccess, h("04:31:00"), attempt(9), scheduledAt(h("01:00:00")))
		s.tick(*s.m.NextDeadlineAt)
		missed := s.changes(monitors.IncidentOpen, monitors.IncidentMissed)
		require.Len(t, missed, 2)
		require.Contains(t, missed[1].Summary, "of the occurrence of 2026-01-01 02:00 UTC")
	})
}

func ptr[T any](v T) *T { return &v }

func fmtUTC(t time.Time) string {
	if t.Second() != 0 {
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

func TestRetryOfOldOccurrenceBesideNewOne(t *testing.T) {
	t.Parallel()
	h := func(s string) time.Time { return at("2026-01-01T" + s + "Z") }
	o1, o2 := scheduledAt(h("01:00:00")), scheduledAt(h("02:00:00"))

	t.Run("AttemptOfOneChainDoesNotAnswerAnother", func(t *testing.T) {
		t.Parallel()
		s := newScenario(t, hourly())
		s.ping(monitors.PingSuccess, h("00:00:05"), scheduledAt(h("00:00:00")))
		s.ping(monitors.PingFail, h("01:40:00"), o1, attempt(8), retryAt(h("02:20:00")))
		s.ping(monitors.PingStart, h("02:00:00"), o2, attempt(1), rid("b1"))
		s.ping(monitors.PingFail, h("02:00:20"), o2, attempt(1), rid("b1"), retryAt(h("02:00:50")))
		require.Len(t, s.m.State.Retries, 2)
		// 01:00's ninth attempt does not answer 02:00's retry, though its
		// attempt number is higher: without scheduled_at it would have.
		s.ping(monitors.PingStart, h("02:00:45"), o1, attempt(9), rid("a9"))
		require.Len(t, s.m.State.Retries, 1)
		require.Equal(t, h("02:00:00"), s.m.State.Retries[0].Occ)
		// 02:00's retry runs beside 01:00's: that overlap is real and said.
		s.ping(monitors.PingStart, h("02:00:50"), o2, attempt(2), rid("b2"))
		require.Equal(t, []monitors.IncidentKind{monitors.IncidentOverlap}, s.opened())
		require.Contains(t, s.log[0].Summary, `the oldest, "a9"`)
		s.ping(monitors.PingSuccess, h("02:01:00"), o2, attempt(2), rid("b2"))
		s.ping(monitors.PingSuccess, h("02:05:00"), o1, attempt(9), rid("a9"))
		require.Equal(t, []monitors.IncidentKind{monitors.IncidentOverlap}, s.resolved())
		require.Empty(t, s.m.State.Retries)
		s.advance(h("02:59:00"))
		require.Len(t, s.opened(), 1, "nothing missed")
	})

	t.Run("LateAttemptIsNotTheNewerRun", func(t *testing.T) {
		t.Parallel()
		// 01:00's retry runs at 03:02; 03:00 itself never runs. With
		// scheduled_at that is a missed 03:00; without, the late retry
		// counts as 03:00's run, as it always did.
		for _, keyed := range []bool{true, false} {
			s := newScenario(t, hourly())
			occ := func(t string) []pingOpt {
				if keyed {
					return []pingOpt{scheduledAt(h(t))}
				}
				return nil
			}
			s.ping(monitors.PingSuccess, h("02:00:10"), occ("02:00:00")...)
			s.ping(monitors.PingFail, h("02:30:00"), append(occ("01:00:00"), attempt(9), retryAt(h("03:02:00")))...)
			s.ping(monitors.PingSuccess, h("03:02:10"), append(occ("01:00:00"), attempt(10))...)
			s.advance(h("03:30:00"))
			if keyed {
				require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.opened())
				require.Equal(t, h("03:05:00"), s.log[0].At)
				require.Contains(t, s.log[0].Summary, "did not run at 2026-01-01 03:00 UTC")
				// Another late attempt of 01:00 does not end it either;
				// 04:00's run does.
				s.ping(monitors.PingLog, h("03:40:00"), occ("01:00:00")...)
				s.ping(monitors.PingSkip, h("03:41:00"), occ("02:00:00")...)
				require.Empty(t, s.resolved())
				s.ping(monitors.PingStart, h("04:00:00"), occ("04:00:00")...)
				require.Equal(t, []monitors.IncidentKind{monitors.IncidentMissed}, s.resolved())
			} else {
				require.Empty(t, s.opened())
			}
		}
	})
}

func TestDeadlinePerOccurrence(t *testing.T) {
	t.Parallel()

	t.Run("ExportAt0200DeadlineAt0500", func(t *testing.T) {
		t.Parallel()
		// The article's 02:00 export that a partner collects at 06:00: its
		// first attempt fails at 02:01 and Hangfire's tenth retry would
		// start after 06:19. The 05:00 deadline warns while retries still
		// run; the chain is watched on, and its success ends the incident.
		d := func(s string) time.Time { return at("2026-01-0" + s + "Z") }
		m := &monitors.Monitor{Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 2 * * *"}, DeadlineSeconds: 3 * 3600}
		s := newScenario(t, m)
		s.ping(monitors.PingSuccess, d("1T02:00:40"), scheduledAt(d("1T02:00:00")))
		require.Equal(t, d("2T02:00:00"), s.m.State.DeadlineOcc)
		pings := chain(d("2T02:01:00"), 11, endSuccess, true)
		for i := range pings {
			pings[i].ScheduledAt = ptr(d("2T02:00:00"))
		}
		s.play(d("2T07:00:00"), pings, map[time.Time]func(){
			d("2T05:00:01"): func() {
				require.Equal(t, []monitors.IncidentKind{monitors.IncidentDeadline}, s.opened(), "not failed: retries are pending")
				require.Equal(t, d("2T05:00:00"), s.log[0].At)
				require.Contains(t, s.log[0].Summary, "the occurrence of 2026-01-02 02:00 UTC had no success by 2026-01-02 05:00 UTC (deadline 3h)")
				require.Equal(t, monitors.StatusDown, s.m.State.Status)
				require.Len(t, s.m.State.Retries, 1, "the chain is still watched")
			},
		})
		require.True(t, pings[len(pings)-1].At.After(d("2T06:19:00")))
		require.Equal(t, []monitors.IncidentKind{monitors.IncidentDeadline}, s.opened())
		require.Equal(t, []monitors.IncidentKind{monitors.IncidentDeadline}, s.resolved())
		require.Contains(t, s.log[1].Summary, "the occurrence of 2026-01-02 02:00 UTC succeeded at")
		require.Equal(t, d("3T02:00:00"), s.m.State.DeadlineOcc)
	})

	t.Run("OutOfOrderSuccesses", func(t *testing.T) {
		t.Parallel()
		h := func(s string) time.Time { return at("2026-01-01T" + s + "Z") }
		m := hourlyNoOverlap()
		m.DeadlineSeconds = 2 * 3600
		s := newScenario(t, m)
		s.ping(monitors.PingSuccess, h("00:00:10"), scheduledAt(h("00:00:00")))
		require.Equal(t, h("01:00:00"), s.m.State.DeadlineOcc)
		s.ping(monitors.PingFail, h("01:00:10"), scheduledAt(h("01:00:00")), attempt(1), retryAt(h("01:40:00")))
		s.ping(monitors.PingFail, h("01:40:10"), scheduledAt(h("01:00:00")), attempt(2), retryAt(h("02:50:00")))
		s.ping(monitors.PingSuccess, h("02:00:10"), scheduledAt(h("02:00:00")))
		require.Equal(t, h("01:00:00"), s.m.State.DeadlineOcc, "02:00's success does not settle 01:00")
		require.Equal(t, []time.Time{h("02:00:00")}, s.m.State.DeadlineDone)
		s.ping(monitors.PingSuccess, h("02:50:10"), scheduledAt(h("01:00:00")), attempt(3))
		require.Equal(t, h("03:00:00"), s.m.State.DeadlineOcc, "01:00 and 02:00 settled")
		require.Empty(t, s.m.State.DeadlineDone)
		s.advance(h("03:01:00"))
		require.Empty(t, s.opened())
	})

	t.Run("OlderOccurrenceMissesItsDeadline", func(t *testing.T) {
		t.Parallel()
		h := func(s string) time.Time { return at("2026-01-01T" + s + "Z") }
		m := hourlyNoOverlap()
		m.DeadlineSeconds = 2 * 3600
		s := newScenario(t, m)
		s.ping(monitors.PingSuccess, h("00:00:10"), scheduledAt(h("00:00:00")))
		s.ping(monitors.PingFail, h("01:00:10"), scheduledAt(h("01:00:00")), attempt(1), retryAt(h("02:30:00")))
		s.ping(monitors.PingSuccess, h("02:00:10"), scheduledAt(h("02:00:00")))
		s.ping(monitors.PingFail, h("02:30:10"), scheduledAt(h("01:00:00")), attempt(2), retryAt(h("03:30:00")))
		s.advance(h("03:00:10"))
		opened := s.changes(monitors.IncidentOpen, monitors.IncidentDeadline)
		require.Len(t, opened, 1, "02:00's success does not settle 01:00")
		// Without scheduled_at, 02:00's success settles every occurrence
		// so far, as it always did.
		u := newScenario(t, hourlyNoOverlap())
		u.m.DeadlineSeconds = 2 * 3600
		u.ping(monitors.PingSuccess, h("00:00:10"))
		u.ping(monitors.PingFail, h("01:00:10"), attempt(1), retryAt(h("02:30:00")))
		u.ping(monitors.PingSuccess, h("02:00:10"))
		u.ping(monitors.PingFail, h("02:30:10"), attempt(2), retryAt(h("03:30:00")))
		u.advance(h("03:00:10"))
		require.Empty(t, u.opened())
		require.Equal(t, h("03:00:00"), opened[0].At)
		require.Contains(t, opened[0].Summary, "the occurrence of 2026-01-01 01:00 UTC had no success")
		// A success of that occurrence, or of a later one (the output is
		// fresh again), ends it; 01:00's own late success then changes
		// nothing.
		s.ping(monitors.PingSuccess, h("03:00:20"), scheduledAt(h("03:00:00")))
		resolved := s.changes(monitors.IncidentResolve, monitors.IncidentDeadline)
		require.Len(t, resolved, 1)
		require.Contains(t, resolved[0].Summary, "the occurrence of 2026-01-01 03:00 UTC succeeded")
		require.Equal(t, h("04:00:00"), s.m.State.DeadlineOcc)
		s.ping(monitors.PingSuccess, h("03:30:10"), scheduledAt(h("01:00:00")), attempt(3))
		require.Len(t, s.log, 2)
		require.Equal(t, h("04:00:00"), s.m.State.DeadlineOcc)
	})
}

func TestLegacyStateWithOneRetry(t *testing.T) {
	t.Parallel()
	var st monitors.State
	raw := `{"status":"retrying","retry":{"at":"2026-01-01T01:10:00Z","attempt":3,"fail_at":"2026-01-01T01:05:00Z"}}`
	require.NoError(t, st.UnmarshalJSON([]byte(raw)))
	require.Equal(t, []monitors.RetryWait{{At: at("2026-01-01T01:10:00Z"), Attempt: 3, FailAt: at("2026-01-01T01:05:00Z")}}, st.Retries)
	require.False(t, strings.Contains(fmt.Sprint(st), "retry\":"))
}

func TestScheduledAtFarFromThePingIsIgnored(t *testing.T) {
	t.Parallel()
	h := func(s string) time.Time { return at("2026-01-01T" + s + "Z") }
	for _, sa := range []time.Time{h("03:00:01").Add(time.Hour), at("2000-01-01T01:00:00Z")} {
		s := newScenario(t, hourly())
		s.ping(monitors.PingSuccess, h("01:00:05"), scheduledAt(h("01:00:00")))
		// A host whose clock is far off: judged as a ping without it.
		s.ping(monitors.PingSuccess, h("02:00:05"), scheduledAt(sa))
		require.Equal(t, h("03:00:00"), s.m.State.Expected, "scheduled_at %s", sa)
		s.ping(monitors.PingFail, h("02:30:00"), scheduledAt(sa), retryAt(h("02:31:00")))
		require.False(t, s.m.State.Retries[0].Keyed)
	}
}
