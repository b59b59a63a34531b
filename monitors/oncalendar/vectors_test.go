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

//go:generate go run gen_vectors.go

// TestVectors replays testdata/systemd252.jsonl, written by gen_vectors.go
// from systemd-analyze calendar (systemd 252): the normalized form and six
// elapses of every expression in every zone from every base time, and
// the expressions systemd refuses.
func TestVectors(t *testing.T) {
	t.Parallel()
	f, err := os.Open("testdata/systemd252.jsonl")
	require.NoError(t, err)
	defer f.Close()
	type vector struct {
		TZ         string  `json:"tz"`
		Base       int64   `json:"base"`
		Expr       string  `json:"expr"`
		Normalized string  `json:"normalized"`
		Next       []int64 `json:"next"`
		Stuck      bool    `json:"stuck"`
		Invalid    bool    `json:"invalid"`
	}
	locs := map[string]*time.Location{}
	sc := bufio.NewScanner(f)
	n, stuck := 0, 0
	for sc.Scan() {
		var v vector
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		n++
		if v.Invalid {
			_, err := oncalendar.Parse(v.Expr, time.UTC)
			require.Error(t, err, "systemd refuses %q", v.Expr)
			continue
		}
		loc := locs[v.TZ]
		if loc == nil {
			loc, err = time.LoadLocation(v.TZ)
			require.NoError(t, err)
			locs[v.TZ] = loc
		}
		e, err := oncalendar.Parse(v.Expr, loc)
		require.NoError(t, err, "systemd accepts %q", v.Expr)
		if v.Normalized != "" {
			require.Equal(t, v.Normalized, e.String(), "normalized form of %q", v.Expr)
		}
		got := nextN(e, time.Unix(v.Base, 0), len(v.Next)+1)
		if v.Stuck {
			// systemd gave up (see TestDifferentialSystemd): compare what
			// it found.
			stuck++
			got = got[:min(len(got), len(v.Next))]
		} else if len(got) > len(v.Next) && len(v.Next) == 6 {
			got = got[:6]
		}
		require.Equal(t, formatAll(v.Next), formatAll(got), "%q in %s from %s", v.Expr, v.TZ, time.Unix(v.Base, 0).UTC().Format(time.RFC3339))
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 10000)
	t.Logf("%d vectors, %d where systemd gets stuck", n, stuck)
}
