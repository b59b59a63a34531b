package quartz

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vectors is testdata/vectors.json, written by Java Quartz 2.3.2 (see
// testdata/QuartzVectors.java).
type vectors struct {
	Quartz string `json:"quartz"`
	Syntax []struct {
		Expr  string `json:"expr"`
		Valid bool   `json:"valid"`
		Error string `json:"error"`
	} `json:"syntax"`
	Series []series `json:"series"`
}

type series struct {
	Expr string   `json:"expr"`
	TZ   string   `json:"tz"`
	From string   `json:"from"`
	Next []string `json:"next"`
}

func loadVectors(t *testing.T) *vectors {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors.json")
	require.NoError(t, err)
	var v vectors
	require.NoError(t, json.Unmarshal(b, &v))
	require.NotEmpty(t, v.Series)
	return &v
}

// stricter are expressions Java Quartz accepts by ignoring what follows a
// value it has read; Parse refuses them, naming the problem.
var stricter = map[string]bool{
	"0 0 12 * * ? 2026 1": true, // an eighth field
	"0 0 12 ?5 * *":       true, // a character after ?
	"0 0 12 ? * L-2":      true, // L alone is Saturday; Quartz drops the -2
	"0 0 12 * * ? 2200":   true, // after the last year, MaxYear: never fires
}

func TestSyntaxVectors(t *testing.T) {
	t.Parallel()
	for _, c := range loadVectors(t).Syntax {
		_, err := Parse(c.Expr)
		switch {
		case stricter[c.Expr]:
			assert.Error(t, err, c.Expr)
		case c.Valid:
			assert.NoError(t, err, c.Expr)
		default:
			assert.Error(t, err, "%s: Quartz says %s", c.Expr, c.Error)
		}
	}
}

// TestSeriesVectors checks every fire time Java Quartz computed, around each
// 2026 daylight-saving transition of ten zones and through two years of
// day and month rules: TimeAfter of each fire time is the next, as in a
// running trigger, and so is Next.
func TestSeriesVectors(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, s := range loadVectors(t).Series {
		loc, err := time.LoadLocation(s.TZ)
		require.NoError(t, err)
		e, err := Parse(s.Expr)
		require.NoError(t, err, s.Expr)
		at, err := time.Parse(time.RFC3339, s.From)
		require.NoError(t, err)
		var got []string
		for cur, i := at, 0; i < len(s.Next)+1; i++ {
			cur = e.TimeAfter(cur, loc)
			if cur.IsZero() {
				break
			}
			got = append(got, cur.In(loc).Format(time.RFC3339))
		}
		want := s.Next
		if len(got) > len(want) {
			got = got[:len(want)]
		}
		assert.Equal(t, want, got, "%s in %s from %s", s.Expr, s.TZ, s.From)
		checked += len(want)
	}
	t.Logf("%d fire times", checked)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for expr, msg := range map[string]string{
		"0 2 * * *":        "a Quartz expression has 6 or 7 fields",
		"0 0 2 * * *":      "write ? in one of them",
		"0 0 2 ? * 0":      "Day-of-Week values must be between 1 and 7",
		"0 0 2 ? * 1#2 X":  "year",
		"0 0 2 L-3X * ?":   "day-of-month",
		"0 0 2 ? * 5#3,4L": "day-of-week",
	} {
		_, err := Parse(expr)
		require.Error(t, err, expr)
		require.Contains(t, err.Error(), msg, expr)
		require.False(t, strings.Contains(err.Error(), "\n"), expr)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]string{
		"0 30 2 ? * 1#2":     "at 02:30 on the second Sunday of the month",
		"0 0 2 * * ?":        "at 02:00 every day",
		"0 0 12 ? * MON-FRI": "at 12:00 on weekdays (Monday through Friday)",
		"0 0 12 L * ?":       "at 12:00 on the last day of the month",
		"0 15 10 ? * 6L":     "at 10:15 on the last Friday of the month",
		"0 0 12 15W * ?":     "",
		"0 0 12 * * ? 2027":  "",
		"0 0/15 * * * ?":     "every 15 minutes",
		"0 0 12 ? * 1,7":     "at 12:00 on Saturday and Sunday",
	} {
		e, err := Parse(expr)
		require.NoError(t, err, expr)
		require.Equal(t, want, e.Describe(), expr)
	}
}
