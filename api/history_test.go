package api_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
	"github.com/vigilhq/vigil/monitors"
)

func TestHistoryPages(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "job"})
		exit := 3
		dur := int64(1500)
		retry := t0.Add(10 * time.Minute)
		scheduled := t0.Add(-time.Hour)
		var pings []*monitors.PingRecordParams
		for i := range 5 {
			at := t0.Add(time.Duration(i) * time.Minute)
			pings = append(pings,
				&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingStart, At: at, RID: "r" + itoa(i)}},
				&monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: at.Add(30 * time.Second), RID: "r" + itoa(i),
					Body: "done", RemoteAddr: "192.0.2.1", UserAgent: "curl/8"}})
		}
		pings = append(pings, &monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: monitors.PingFail,
			At: t0.Add(6 * time.Minute), Attempt: 2, RetryAt: &retry, ScheduledAt: &scheduled,
			ExitCode: &exit, DurationMS: &dur}})
		res, err := b.store.PingRecordBatch(context.Background(), &monitors.PingRecordBatchParams{Pings: pings})
		require.NoError(t, err)
		for _, r := range res {
			require.NoError(t, r.Err)
		}

		// Pings, newest first, four to a page, by cursor.
		var got []api.Ping
		next := "/api/v1/monitors/" + m.ID + "/pings?limit=4"
		for next != "" {
			r := b.do(http.MethodGet, next, b.ro, nil)
			require.Equal(t, http.StatusOK, r.status, "%s", r.body)
			var l api.PingList
			r.json(t, &l)
			got = append(got, l.Pings...)
			next = ""
			if l.Next != nil {
				require.NotNil(t, l.NextCursor)
				require.Contains(t, *l.Next, "before="+*l.NextCursor)
				next = *l.Next
			}
		}
		require.Len(t, got, 11)
		for i := 1; i < len(got); i++ {
			require.Greater(t, got[i-1].ID, got[i].ID, "newest first")
		}
		fail := got[0]
		require.Equal(t, "fail", fail.Kind)
		require.Equal(t, 2, fail.Attempt)
		require.Equal(t, retry, *fail.RetryAt)
		require.NotNil(t, fail.ScheduledAt, "the occurrence the attempt belongs to")
		require.Equal(t, scheduled, *fail.ScheduledAt)
		require.Nil(t, got[1].ScheduledAt, "a ping that named no occurrence")
		require.Equal(t, 3, *fail.ExitCode)
		require.EqualValues(t, 1500, *fail.DurationMS)
		require.Equal(t, "success", got[1].Kind)
		require.Equal(t, "r4", got[1].RID)
		require.Equal(t, "done", got[1].Body)
		require.Equal(t, "192.0.2.1", got[1].RemoteAddr)
		require.Equal(t, "curl/8", got[1].UserAgent)

		// Runs likewise.
		r := b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/runs?limit=2", b.rw, nil)
		require.Equal(t, http.StatusOK, r.status)
		var runs api.RunList
		r.json(t, &runs)
		require.Len(t, runs.Runs, 2)
		require.Equal(t, "fail", *runs.Runs[0].Outcome)
		require.True(t, runs.Runs[0].WillRetry)
		require.Equal(t, "success", *runs.Runs[1].Outcome)
		require.Equal(t, "r4", runs.Runs[1].RID)
		require.EqualValues(t, 30000, *runs.Runs[1].DurationMS)
		require.NotNil(t, runs.NextCursor)
		var rest api.RunList
		r = b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/runs?before="+*runs.NextCursor, b.rw, nil)
		r.json(t, &rest)
		require.Len(t, rest.Runs, 4)
		require.Nil(t, rest.Next)
		require.Equal(t, "r0", rest.Runs[3].RID)

		// An open run has no outcome.
		b.ping(m.PingKey, monitors.PingStart, t0.Add(7*time.Minute))
		r = b.do(http.MethodGet, "/api/v1/monitors/"+m.ID+"/runs?limit=1", b.rw, nil)
		r.json(t, &runs)
		require.Nil(t, runs.Runs[0].Outcome)
		require.Nil(t, runs.Runs[0].FinishedAt)
	})
}

func itoa(i int) string { return string(rune('0' + i)) }
