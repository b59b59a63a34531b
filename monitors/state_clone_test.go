package monitors

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStateCloneSharesNothing fills every field of a State, clones it, and
// checks that the clone is equal and that none of its slices, maps or
// pointers is the original's: a field added to State that Clone does not
// copy fails here.
func TestStateCloneSharesNothing(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	s := State{Status: StatusUp, LastPingAt: at, LastPingKind: PingSuccess, LastSuccessAt: at, Expected: at,
		DeadlineOcc: at, DeadlineDone: []time.Time{at}, Retries: []RetryWait{{At: at, Attempt: 2, FailAt: at}},
		Missed: &MissedOcc{Occ: at}, Runs: []OpenRun{{Seq: 1, StartedAt: at}}, RunSeq: 1, Failures: 1, Successes: 1,
		Open: map[IncidentKind]time.Time{IncidentMissed: at}, Hold: &Hold{OutageEnd: at, Until: at}, Ran: []RanOcc{{At: at, Runs: 2}},
		Held:       map[IncidentKind]HeldNotice{IncidentMissed: {Snooze: true}},
		Undeclared: true, Notified: true, LateOcc: at, Resolves: []time.Time{at}, Flapping: at, FlapLast: at}
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "the test sets every field: %s", v.Type().Field(i).Name)
	}
	c := s.Clone()
	require.Equal(t, s, c)
	cv := reflect.ValueOf(c)
	for i := range v.NumField() {
		switch v.Field(i).Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer:
			require.NotEqual(t, v.Field(i).Pointer(), cv.Field(i).Pointer(), "Clone copies %s", v.Type().Field(i).Name)
		case reflect.Interface, reflect.Chan, reflect.Func:
			t.Fatalf("field %s: teach Clone and this test about it", v.Type().Field(i).Name)
		}
	}
}
