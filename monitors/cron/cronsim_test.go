package cron

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// cronsimVector is one entry of testdata/cronsim_vectors.json, extracted
// from cronsim 2.7, the engine behind Healthchecks.io (see the file's
// "source" and "conventions" blocks).
type cronsimVector struct {
	ID           string   `json:"id"`
	Expression   string   `json:"expression"`
	Timezone     *string  `json:"timezone"`
	Start        string   `json:"start"`
	Reverse      bool     `json:"reverse"`
	ExpectedNext []string `json:"expected_next"`
}

// cronsimDifferences lists the vectors where Vigil intentionally differs
// from cronsim, with the values Vigil produces instead.
//
// cronsim never applies its daylight-saving fix-up to six-field (seconds)
// expressions: a wall time skipped by the spring change is simply dropped.
// Vigil applies the cronie rule whatever the seconds field says: the
// minute (30) and hour (1-4 or 1-10) fields do not start with *, so these are
// jobs at a specific time, and their wall times inside the skipped hour
// (03:30:xx on 2021-03-28 in Europe/Riga) fire once, at the first instant
// after the gap, 04:00:00+03:00.
var cronsimDifferences = map[string][]string{
	"TestDstTransitions.test_no_tz_fixup_for_subminute_granularity": {
		"2021-03-28T02:30:11+02:00",
		"2021-03-28T02:30:22+02:00",
		"2021-03-28T04:00:00+03:00", // cronsim: 04:30:11+03:00 (03:30:11 and 03:30:22 dropped)
		"2021-03-28T04:30:11+03:00", // cronsim: 04:30:22+03:00
	},
	"TestDstTransitions.test_no_tz_fixup_with_nonzero_seconds_field": {
		"2021-03-28T02:30:33+02:00",
		"2021-03-28T04:00:00+03:00", // cronsim: 04:30:33+03:00 (03:30:33 dropped)
		"2021-03-28T04:30:33+03:00", // cronsim: 05:30:33+03:00
	},
	"TestDstTransitions.test_no_tz_fixup_with_zero_seconds_field": {
		"2021-03-28T02:30:00+02:00",
		"2021-03-28T04:00:00+03:00", // cronsim: 04:30:00+03:00 (03:30:00 dropped)
		"2021-03-28T04:30:00+03:00", // cronsim: 05:30:00+03:00
	},
}

// cronsimRejected lists the vectors where cronsim accepts an expression that
// can never fire and only gives up (StopIteration) after searching 50 years.
// Vigil's Parse rejects these expressions outright, with ErrNeverFires.
var cronsimRejected = map[string]bool{
	"TestIterator.test_it_handles_no_matches": true, // 1 1 */100 * MON#4: day 1 is never a fourth Monday
	"README.stopiteration_50_years":           true, // * * */20 * 1L: days 1 and 21 are never a last Monday
	"TestReverse.test_it_handles_no_matches":  true, // 1 1 */100 * MON#4, backwards
}

func TestCronsimVectors(t *testing.T) {
	t.Parallel()

	raw, err := os.ReadFile("testdata/cronsim_vectors.json")
	require.NoError(t, err)
	var file struct {
		Counts struct {
			Vectors int `json:"vectors"`
		} `json:"counts"`
		Vectors []cronsimVector `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.Len(t, file.Vectors, 51)
	require.Equal(t, file.Counts.Vectors, len(file.Vectors))

	seenDiff, seenRejected := 0, 0
	for _, v := range file.Vectors {
		t.Run(v.ID, func(t *testing.T) {
			e, err := Parse(v.Expression)
			if cronsimRejected[v.ID] {
				seenRejected++
				require.Equal(t, []string{"StopIteration"}, v.ExpectedNext)
				require.ErrorIs(t, err, ErrNeverFires)
				return
			}
			require.NoError(t, err)

			loc, layout := time.UTC, "2006-01-02T15:04:05" // naive vectors: plain wall-clock arithmetic
			var start time.Time
			if v.Timezone != nil {
				loc, err = time.LoadLocation(*v.Timezone)
				require.NoError(t, err)
				layout = time.RFC3339
				start, err = time.Parse(time.RFC3339, v.Start)
			} else {
				start, err = time.ParseInLocation(layout, v.Start, time.UTC)
			}
			require.NoError(t, err)

			want := v.ExpectedNext
			if diff, ok := cronsimDifferences[v.ID]; ok {
				seenDiff++
				require.Len(t, diff, len(want), "a difference keeps the vector's length")
				require.NotEqual(t, want, diff)
				want = diff
			}

			var got []string
			cur := start
			for range want {
				if v.Reverse {
					cur = e.Prev(cur, loc)
				} else {
					cur = e.Next(cur, loc)
				}
				require.False(t, cur.IsZero(), "no fire after %v", got)
				got = append(got, cur.Format(layout))
			}
			require.Equal(t, want, got)
		})
	}
	require.Equal(t, len(cronsimDifferences), seenDiff, "every listed difference names a vector")
	require.Equal(t, len(cronsimRejected), seenRejected, "every listed rejection names a vector")
}
