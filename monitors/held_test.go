package monitors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// heldStep is one step of a held-notification table: a ping (kind set) or
// the time, with the parents open then, and the incident changes wanted.
type heldStep struct {
	at      string
	ping    monitors.PingKind // "" for time
	parents bool              // a monitor it depends on has an open incident
	snooze  string            // snooze until this, before the step
	unsnz   bool              // end the snooze at the step's time, instead of the step
	want    []string          // "op kind" or "op kind held" of the changes
}

func heldChanges(tr *monitors.Transition) []string {
	var out []string
	for _, c := range tr.Incidents {
		s := string(c.Op) + " " + string(c.Kind)
		if c.Held {
			s += " held"
		}
		out = append(out, s)
	}
	return out
}

// TestHeldNotificationRules is the table of the one mechanism that holds
// notifications: a snooze, a suppression under a parent's incident, and
// both, each ending by itself (the snooze's time; the parents' recovery)
// with the still open incident released once.
func TestHeldNotificationRules(t *testing.T) {
	t.Parallel()
	parent := []monitors.ParentIncident{{MonitorID: "p", IncidentID: "pi", Kind: monitors.IncidentMissed}}
	cases := []struct {
		name  string
		steps []heldStep
	}{
		{"snoozed: the failure opens held, is released at the snooze's end, once", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T10:59:59Z"},
			{at: "2026-03-02T11:00:00Z", want: []string{"release failed"}},
			{at: "2026-03-02T11:30:00Z"},
		}},
		{"snoozed: recovered while held, it closes without a word", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T10:10:00Z", ping: monitors.PingSuccess, want: []string{"close failed"}},
			{at: "2026-03-02T11:00:00Z"},
		}},
		{"snoozed: a second failure updates held", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T10:10:00Z", ping: monitors.PingFail, want: []string{"update failed held"}},
			{at: "2026-03-02T11:00:00Z", want: []string{"release failed"}},
		}},
		{"a ping after the snooze's end releases before it judges", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T11:05:00Z", ping: monitors.PingFail, want: []string{"release failed", "update failed"}},
		}},
		{"ending the snooze releases at once", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T10:20:00Z", unsnz: true, want: []string{"release failed"}},
			{at: "2026-03-02T11:00:00Z"},
		}},
		{"after the snooze, a failure is notified", []heldStep{
			{at: "2026-03-02T09:00:00Z", ping: monitors.PingSuccess, snooze: "2026-03-02T09:30:00Z"},
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, want: []string{"open failed"}},
		}},
		{"an incident notified before the snooze: its update waits, its recovery goes out", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, want: []string{"open failed"}},
			{at: "2026-03-02T10:05:00Z", ping: monitors.PingFail, snooze: "2026-03-02T11:00:00Z", want: []string{"update failed held"}},
			{at: "2026-03-02T10:10:00Z", ping: monitors.PingSuccess, want: []string{"resolve failed"}},
		}},
		{"suppressed under a parent: held, looked at again, released when the parent recovers", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, parents: true, want: []string{"open failed held"}},
			{at: "2026-03-02T10:01:00Z", parents: true},
			{at: "2026-03-02T10:02:00Z", parents: true},
			{at: "2026-03-02T10:03:00Z", want: []string{"release failed"}},
			{at: "2026-03-02T10:30:00Z"},
		}},
		{"suppressed: recovered before the parent, it closes without a word", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, parents: true, want: []string{"open failed held"}},
			{at: "2026-03-02T10:00:30Z", ping: monitors.PingSuccess, parents: true, want: []string{"close failed"}},
			{at: "2026-03-02T10:05:00Z"},
		}},
		{"suppressed and snoozed: released only when both end", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, parents: true, snooze: "2026-03-02T11:00:00Z", want: []string{"open failed held"}},
			{at: "2026-03-02T10:01:00Z"},
			{at: "2026-03-02T11:00:00Z", want: []string{"release failed"}},
		}},
		{"snoozed while suppressed: the parent's recovery waits for the snooze", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, parents: true, want: []string{"open failed held"}},
			{at: "2026-03-02T10:01:00Z", snooze: "2026-03-02T10:30:00Z"},
			{at: "2026-03-02T10:30:00Z", want: []string{"release failed"}},
		}},
		{"a parent that goes down later suppresses nothing already open", []heldStep{
			{at: "2026-03-02T10:00:00Z", ping: monitors.PingFail, want: []string{"open failed"}},
			{at: "2026-03-02T10:01:00Z", ping: monitors.PingFail, parents: true, want: []string{"update failed"}},
			{at: "2026-03-02T10:02:00Z", ping: monitors.PingSuccess, parents: true, want: []string{"resolve failed"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &monitors.Monitor{ID: "m1", Name: "job", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 86400},
				GraceSeconds: 3600}
			m.ApplyDefaults()
			require.NoError(t, m.Validate())
			for i, st := range tc.steps {
				now := at(st.at)
				m.Parents = nil
				if st.parents {
					m.Parents = parent
				}
				if st.snooze != "" {
					_, err := monitors.Snooze(m, at(st.snooze), now)
					require.NoError(t, err)
				}
				var (
					tr  *monitors.Transition
					err error
				)
				switch {
				case st.unsnz:
					tr, err = monitors.Unsnooze(m, now)
				case st.ping != "":
					tr, err = monitors.ApplyPing(m, &monitors.Ping{Kind: st.ping, At: now})
				default:
					if d := m.NextDeadlineAt; d == nil || now.Before(*d) {
						tr, err = monitors.ApplyTime(m, now, monitors.TimeOptions{})
						require.NoError(t, err)
						require.Empty(t, heldChanges(tr), "step %d: time before the deadline changed something", i)
						continue
					}
					tr, err = monitors.ApplyTime(m, now, monitors.TimeOptions{})
				}
				require.NoError(t, err)
				require.Equal(t, st.want, heldChanges(tr), "step %d at %s", i, st.at)
			}
			require.Empty(t, m.State.Held, "nothing is left held")
		})
	}
}

// TestSuppressedOpensUnderItsParent: a held open names the parent incident
// it is suppressed under.
func TestSuppressedOpensUnderItsParent(t *testing.T) {
	t.Parallel()
	m := &monitors.Monitor{ID: "m1", Name: "job", Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}}
	m.ApplyDefaults()
	m.Parents = []monitors.ParentIncident{{MonitorID: "db", IncidentID: "inc-db", Kind: monitors.IncidentMissed}}
	tr, err := monitors.ApplyPing(m, &monitors.Ping{Kind: monitors.PingFail, At: at("2026-03-02T10:00:00Z")})
	require.NoError(t, err)
	require.Len(t, tr.Incidents, 1)
	require.True(t, tr.Incidents[0].Held)
	require.Equal(t, "inc-db", tr.Incidents[0].SuppressedBy)
	require.Equal(t, at("2026-03-02T10:01:00Z"), *m.NextDeadlineAt, "looked at again a minute later")
}

func TestValidateDependsOn(t *testing.T) {
	t.Parallel()
	project := map[string]monitors.Dependency{
		"a": {ID: "a", Slug: "db", DependsOn: []string{}},
		"b": {ID: "b", Slug: "backup", DependsOn: []string{"a"}},
		"c": {ID: "c", Slug: "report", DependsOn: []string{"b"}},
	}
	check := func(id, slug string, deps ...string) error {
		return monitors.ValidateDependsOn(&monitors.Monitor{ID: id, Slug: slug, DependsOn: deps}, project)
	}
	require.NoError(t, check("c", "report", "b", "a"))
	require.NoError(t, check("new", "new"))
	for _, tc := range []struct {
		err  error
		want string
	}{
		{check("a", "db", "a"), "depends_on: a monitor cannot depend on itself"},
		{check("c", "report", "b", "b"), `depends_on: "b" is listed twice`},
		{check("c", "report", "zzz"), `depends_on: no monitor "zzz" in this project`},
		{check("a", "db", "b"), "depends_on: cycle db → backup → db"},
		{check("a", "db", "c"), "depends_on: cycle db → report → backup → db"},
	} {
		var ve *monitors.ValidationError
		require.ErrorAs(t, tc.err, &ve)
		require.Equal(t, tc.want, tc.err.Error())
	}
}
