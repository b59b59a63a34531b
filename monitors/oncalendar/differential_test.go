package oncalendar_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors/oncalendar"
	"github.com/vigilhq/vigil/monitors/oncalendar/internal/oracle"
)

// differentialCount is how many random expressions the differential test
// asks systemd-analyze about; VIGIL_ONCALENDAR_SEED picks other ones.
const differentialCount = 120

// TestDifferentialSystemd compares Parse, String and SystemdNext with
// systemd-analyze itself, on random expressions from the grammar of
// systemd.time(7), in every zone of the vectors and from base times
// around their transitions. It needs systemd-analyze and is skipped
// without it; the committed vectors cover CI.
func TestDifferentialSystemd(t *testing.T) {
	t.Parallel()
	if !oracle.Available() {
		t.Skip("systemd-analyze is not installed; the vectors in testdata cover the reference")
	}
	seed := uint64(12)
	if s := os.Getenv("VIGIL_ONCALENDAR_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (set VIGIL_ONCALENDAR_SEED to change)", seed)
	r := rand.New(rand.NewPCG(seed, seed))
	ctx := context.Background()

	var valid []string
	seen := map[string]bool{}
	for len(seen) < differentialCount {
		expr := oracle.Random(r)
		if seen[expr] {
			continue
		}
		seen[expr] = true
		ok, err := oracle.Parses(ctx, "UTC", expr)
		require.NoError(t, err)
		e, perr := oncalendar.Parse(expr, time.UTC)
		if !ok {
			require.Error(t, perr, "systemd refuses %q, Parse accepts it as %v", expr, e)
			continue
		}
		require.NoError(t, perr, "systemd accepts %q", expr)
		valid = append(valid, expr)
	}
	t.Logf("%d of %d expressions valid", len(valid), differentialCount)

	for _, zone := range oracle.Zones {
		loc, err := time.LoadLocation(zone)
		require.NoError(t, err)
		bases := oracle.BaseTimes(loc)
		for range 2 {
			base := bases[r.IntN(len(bases))].Add(time.Duration(r.IntN(7200)-3600) * time.Second)
			res, err := oracle.Calendar(ctx, zone, base.Unix(), 6, valid)
			require.NoError(t, err)
			for _, want := range res {
				e, err := oncalendar.Parse(want.Expr, loc)
				require.NoError(t, err)
				if want.Normalized != "" {
					require.Equal(t, want.Normalized, e.String(), "normalized form of %q", want.Expr)
				}
				got := nextN(e, time.Unix(base.Unix(), 0), 6)
				if want.Stuck {
					// systemd 252 gives up after 1000 steps at some
					// daylight-saving gaps ("Infinite loop in calendar
					// calculation"): its timer elapses no more. Next goes
					// on; compare what systemd found before it gave up.
					t.Logf("systemd gets stuck after %d elapses of %q in %s from %s", len(want.Next), want.Expr, zone, base.UTC().Format(time.RFC3339))
					got = got[:min(len(got), len(want.Next))]
				}
				require.Equal(t, formatAll(want.Next), formatAll(got), "%q in %s from %s", want.Expr, zone, base.UTC().Format(time.RFC3339))
			}
		}
	}
}

// nextN is what systemd-analyze calendar --base-time=from --iterations=n
// prints: SystemdNext from the base time, then from each elapse.
func nextN(e *oncalendar.Expr, from time.Time, n int) []int64 {
	var out []int64
	for range n {
		from = e.SystemdNext(from)
		if from.IsZero() {
			break
		}
		out = append(out, from.Unix())
	}
	return out
}

func formatAll(us []int64) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = time.Unix(u, 0).UTC().Format(time.RFC3339)
	}
	return out
}
