package riverwrap

import (
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"
)

func TestOccurrenceOfPeriodicJob(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 3, 3, 1, 59, 59, 910_000_000, time.UTC) // inserted within the enqueuer's 100 ms margin
	periodic := &rivertype.JobRow{Attempt: 1, CreatedAt: created, ScheduledAt: time.Date(2026, 3, 3, 2, 0, 0, 0, time.UTC),
		Metadata: []byte(`{"river:periodic_job_id":"nightly","periodic":true}`)}
	require.Equal(t, time.Date(2026, 3, 3, 2, 0, 0, 0, time.UTC), occurrence(periodic))

	// A retry: River moved scheduled_at to the retry; the occurrence stays.
	retried := *periodic
	retried.Attempt, retried.ScheduledAt = 4, time.Date(2026, 3, 3, 2, 3, 17, 0, time.UTC)
	require.Equal(t, occurrence(periodic), occurrence(&retried))

	adhoc := &rivertype.JobRow{Attempt: 1, CreatedAt: created, ScheduledAt: created, Metadata: []byte(`{}`)}
	require.True(t, occurrence(adhoc).IsZero(), "a job no periodic job inserted names no occurrence")
}
