package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

// The rules of what a person changes are the same through the dashboard as
// through the API (api/person_rules_test.go tests the same three there).

// TestPausedByAPersonIsRecorded: pausing from the dashboard records the
// paused person field, so that the monitor's source declaring it again
// does not resume what a person paused; resuming clears it.
func TestPausedByAPersonIsRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	c := b.signIn(t, "ada@example.com", b.project.ID)
	m := b.monitor(t, b.project.ID, "nightly")

	require.Equal(t, http.StatusSeeOther, c.postForm("/monitors/"+m.ID+"/pause", nil).status)
	fields, err := b.store.MonitorPersonFields(ctx, b.project.ID, []string{m.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"paused"}, fields[m.ID])

	require.Equal(t, http.StatusSeeOther, c.postForm("/monitors/"+m.ID+"/resume", nil).status)
	fields, err = b.store.MonitorPersonFields(ctx, b.project.ID, []string{m.ID})
	require.NoError(t, err)
	require.Empty(t, fields[m.ID])
	got, err := b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.False(t, got.Paused)
}

// TestSourceMonitorSlugIsTheSources: the slug of a monitor a source
// declares is the source's, so the next declaration does not make a
// duplicate; the dashboard refuses to change it and says where to.
func TestSourceMonitorSlugIsTheSources(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	c := b.signIn(t, "ada@example.com", b.project.ID)
	now := b.clock.now()
	m := &monitors.Monitor{ID: keys.NewID(), ProjectID: b.project.ID, Name: "Billing", Slug: "billing",
		PingKey: keys.NewPingKey(), Source: "app", Discovered: true, CreatedAt: now, UpdatedAt: now,
		Schedule: monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "0 * * * *", TZ: "UTC"}}
	m.ApplyDefaults()
	require.NoError(t, b.store.MonitorInsert(ctx, m))

	form := url.Values{"name": {"Billing"}, "slug": {"billing-renamed"}, "schedule_kind": {"cron"}, "expr": {"0 * * * *"},
		"tz": {"UTC"}, "grace": {"5m"}, "alert_on_failure": {"final"}, "overlap": {"alert"},
		"failure_threshold": {"1"}, "recovery_threshold": {"1"}}
	r := c.postForm("/monitors/"+m.ID, form)
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.body)
	require.Contains(t, r.body, "declared by source &#34;app&#34; is the source&#39;s")
	got, err := b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.Equal(t, "billing", got.Slug)

	// Other changes are the person's, and the slug may stay as it is.
	form.Set("slug", "billing")
	form.Set("name", "Billing run")
	require.Equal(t, http.StatusSeeOther, c.postForm("/monitors/"+m.ID, form).status)
	got, err = b.store.MonitorGet(ctx, b.project.ID, m.ID)
	require.NoError(t, err)
	require.Equal(t, "Billing run", got.Name)
	require.Equal(t, "app", got.Source)
}

// TestChannelNameIsCapped: a channel's name is at most 200 characters,
// through the dashboard as through the API.
func TestChannelNameIsCapped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	c := b.signIn(t, "ada@example.com", b.project.ID)
	long := strings.Repeat("n", 201)

	r := c.postForm("/channels", url.Values{"kind": {"webhook"}, "name": {long}, "url": {"https://hooks.example.com/vigil"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.body)
	require.Contains(t, r.body, "Name: must be at most 200 characters")
	list, err := b.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.project.ID})
	require.NoError(t, err)
	require.Empty(t, list, "nothing is stored")

	r = c.postForm("/channels", url.Values{"kind": {"webhook"}, "name": {long[:200]}, "url": {"https://hooks.example.com/vigil"}})
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	list, err = b.store.ChannelList(ctx, &monitors.ChannelListParams{ProjectID: b.project.ID})
	require.NoError(t, err)
	require.Len(t, list, 1)

	r = c.postForm("/channels/"+list[0].ID, url.Values{"name": {long}, "url": {"https://hooks.example.com/vigil"}})
	require.Equal(t, http.StatusUnprocessableEntity, r.status, r.body)
	require.Contains(t, r.body, "Name: must be at most 200 characters")
}
