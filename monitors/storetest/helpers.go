package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/monitors"
)

// T0 is the suite's reference instant; tests move time from it by hand.
var T0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// RandomID returns a random hex ID with a prefix, unique enough for tests.
func RandomID(prefix string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return prefix + hex.EncodeToString(b)
}

// MustProject creates a project with random ID and ping key.
func MustProject(tb testing.TB, s monitors.Store) *monitors.Project {
	tb.Helper()
	p, err := s.ProjectCreate(context.Background(), &monitors.ProjectCreateParams{
		ID: RandomID("prj_"), Name: "project", PingKey: RandomID("pk_"), Now: T0})
	require.NoError(tb, err)
	return p
}

// NewMonitor returns a new monitor of the project, ready to insert: an
// hourly interval with 5 minutes of grace, with defaults applied. fn, when
// not nil, changes it before defaults are applied.
func NewMonitor(projectID, slug string, fn func(m *monitors.Monitor)) *monitors.Monitor {
	m := &monitors.Monitor{
		ID:           RandomID("mon_"),
		ProjectID:    projectID,
		Name:         slug,
		Slug:         slug,
		Schedule:     monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600},
		GraceSeconds: 300,
		PingKey:      RandomID("key_"),
		CreatedAt:    T0,
		UpdatedAt:    T0,
	}
	if fn != nil {
		fn(m)
	}
	m.ApplyDefaults()
	return m
}

// MustMonitor inserts NewMonitor(projectID, slug, fn).
func MustMonitor(tb testing.TB, s monitors.Store, projectID, slug string, fn func(m *monitors.Monitor)) *monitors.Monitor {
	tb.Helper()
	m := NewMonitor(projectID, slug, fn)
	require.NoError(tb, m.Validate())
	require.NoError(tb, s.MonitorInsert(context.Background(), m))
	return m
}

// Ping returns the params of a ping of kind at at, by ping key.
func Ping(m *monitors.Monitor, kind monitors.PingKind, at time.Time) *monitors.PingRecordParams {
	return &monitors.PingRecordParams{PingKey: m.PingKey, Ping: monitors.Ping{Kind: kind, At: at}}
}

// MustRecord records pings in one batch and requires every one to succeed.
func MustRecord(tb testing.TB, s monitors.Store, pings ...*monitors.PingRecordParams) []monitors.PingRecordResult {
	tb.Helper()
	res, err := s.PingRecordBatch(context.Background(), &monitors.PingRecordBatchParams{Pings: pings})
	require.NoError(tb, err)
	require.Len(tb, res, len(pings))
	for i, r := range res {
		require.NoError(tb, r.Err, "ping %d", i)
	}
	return res
}

// stateJSON compares states as stored: the JSON form treats an empty list
// like a missing one.
func stateJSON(tb testing.TB, s monitors.State) string {
	tb.Helper()
	b, err := json.Marshal(s)
	require.NoError(tb, err)
	return string(b)
}

func ptr[T any](v T) *T { return &v }
