package oncalendar_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors/oncalendar"
)

// Chain is one line of testdata/chains252.jsonl (see gen_vectors.go): the
// elapses systemd 252 computed for expr in tz, each from the one before,
// for a timer started at base, well before the transition at tr.
type Chain struct {
	TZ    string  `json:"tz"`
	Tr    int64   `json:"tr"`
	Base  int64   `json:"base"`
	Expr  string  `json:"expr"`
	Next  []int64 `json:"next"`
	Stuck bool    `json:"stuck"`
}

func readChains(t *testing.T) []Chain {
	t.Helper()
	f, err := os.Open("testdata/chains252.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out []Chain
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c Chain
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		out = append(out, c)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestChains checks that Next and Prev follow the elapses of a running
// timer, as systemd 252 chained them through every 2026 transition of the
// vectors' zones: from each elapse, from instants between two, and from
// just before the next, Next is the next elapse of the chain and Prev the
// one before.
func TestChains(t *testing.T) {
	t.Parallel()
	chains := readChains(t)
	require.Greater(t, len(chains), 1000)
	locs := map[string]*time.Location{}
	for _, c := range chains {
		loc := locs[c.TZ]
		if loc == nil {
			var err error
			loc, err = time.LoadLocation(c.TZ)
			require.NoError(t, err)
			locs[c.TZ] = loc
		}
		e, err := oncalendar.Parse(c.Expr, loc)
		require.NoError(t, err)
		at := func(u int64) time.Time { return time.Unix(u, 0) }
		for i := 0; i+1 < len(c.Next); i++ {
			f, g := at(c.Next[i]), at(c.Next[i+1])
			for _, from := range []time.Time{f, f.Add(time.Second), f.Add(g.Sub(f) / 2), g.Add(-time.Second)} {
				if from.Before(f) || !from.Before(g) {
					continue
				}
				require.Equal(t, g.UTC(), e.Next(from).UTC(), "Next(%s) of %q in %s", from.In(loc), c.Expr, c.TZ)
			}
			for _, before := range []time.Time{g, g.Add(-time.Second), f.Add(g.Sub(f) / 2), f.Add(time.Second)} {
				if !before.After(f) || before.After(g) {
					continue
				}
				require.Equal(t, f.UTC(), e.Prev(before).UTC(), "Prev(%s) of %q in %s", before.In(loc), c.Expr, c.TZ)
			}
		}
	}
}

// TestNextFollowsTheTimer pins the cases where systemd's next elapse from
// an arbitrary instant is not the running timer's, as systemd-analyze
// calendar --base-time=… --iterations=N shows them.
func TestNextFollowsTheTimer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		expr, tz string
		from     string // an instant inside the repeated hour
		systemd  string // SystemdNext(from): systemd-analyze from that base
		timer    string // Next(from): the running timer's next elapse
		prev     string // Prev(from)
	}{
		// systemd-analyze from 05:59:59Z (01:59:59 EDT) goes on to 11-02;
		// from 06:00:00Z (01:00 EST) it names 01:59:59 EST on 11-01.
		{"*-*-* 01:59:59", "America/New_York", "2026-11-01T01:00:00-05:00",
			"2026-11-01T01:59:59-05:00", "2026-11-02T01:59:59-05:00", "2026-11-01T01:59:59-04:00"},
		{"*-*-* 01:30", "America/New_York", "2026-11-01T01:10:00-05:00",
			"2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00", "2026-11-01T01:30:00-04:00"},
		// From 00:00 CEST the chain is 02:00, 02:15, 02:30, 02:45 CEST,
		// then 02:00 CET the next day; from 02:20 CET systemd names 02:30
		// CET.
		{"*-03,04,09,10-* 02:00/15", "Europe/Berlin", "2026-10-25T02:20:00+01:00",
			"2026-10-25T02:30:00+01:00", "2026-10-26T02:00:00+01:00", "2026-10-25T02:45:00+02:00"},
		// Every 20 minutes: the chain goes from 02:40 CEST to 03:00 CET.
		{"*:0/20", "Europe/Berlin", "2026-10-25T02:20:00+01:00",
			"2026-10-25T02:40:00+01:00", "2026-10-25T03:00:00+01:00", "2026-10-25T02:40:00+02:00"},
	} {
		loc, err := time.LoadLocation(tc.tz)
		require.NoError(t, err)
		e, err := oncalendar.Parse(tc.expr, loc)
		require.NoError(t, err)
		from, err := time.Parse(time.RFC3339, tc.from)
		require.NoError(t, err)
		require.Equal(t, tc.systemd, e.SystemdNext(from).Format(time.RFC3339), "SystemdNext %q from %s", tc.expr, tc.from)
		require.Equal(t, tc.timer, e.Next(from).Format(time.RFC3339), "Next %q from %s", tc.expr, tc.from)
		require.Equal(t, tc.prev, e.Prev(from).Format(time.RFC3339), "Prev %q from %s", tc.expr, tc.from)
	}
}
