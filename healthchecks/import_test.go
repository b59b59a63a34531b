package healthchecks_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/healthchecks"
	"github.com/vigilhq/vigil/healthchecks/healthcheckstest"
	"github.com/vigilhq/vigil/internal/testdb"
	"github.com/vigilhq/vigil/keys"
	"github.com/vigilhq/vigil/monitors"
)

var t0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// The UUIDs of the documentation's examples, and more.
const (
	fsBackup = "31365bce-8da9-4729-8ff3-aaa71d56b712"
	dbBackup = "803f680d-e89b-492b-82ef-2be7b774a92d"
	monthly  = "7918b17b-a745-4db1-8575-9d2e07c97f79"
	paused   = "f618072a-7bde-4eee-af63-71a77c5723bc"
	twin     = "0c8983c9-9d73-446f-adb5-0641fdacc9d4"

	emailID = "4ec5a071-2d08-4baa-898a-eb4eb3cd6941"
	smsID   = "746a083e-f542-4554-be1a-707ce16d3acc"
	slackID = "1bdea468-03bf-47b8-ab27-29a9dd0e4b94"
	pdID    = "51c6eb2b-2ae1-456b-99fe-6f1e0a36cd3c"
)

// project sets the fake Healthchecks project up as its documentation's
// examples show it.
func project(hc *healthcheckstest.Server) {
	hc.SetChecks(
		hc.Check(fsBackup, map[string]any{"name": "Filesystem Backup", "slug": "filesystem-backup", "tags": "backup fs",
			"desc": "Runs incremental backup every hour", "grace": 600, "n_pings": 1, "status": "up",
			"last_ping": "2020-03-24T14:02:03+00:00", "next_ping": "2020-03-24T15:02:03+00:00",
			"start_kw": "START", "success_kw": "SUCCESS", "failure_kw": "ERROR", "filter_subject": true,
			"channels": emailID + "," + slackID, "timeout": 3600}),
		hc.Check(dbBackup, map[string]any{"name": "Database Backup", "slug": "database-backup", "tags": "production db",
			"desc": "Runs ~/db-backup.sh", "grace": 1200, "n_pings": 7, "status": "down", "manual_resume": true,
			"channels": emailID + "," + smsID + "," + pdID, "schedule": "15 5 * * *", "tz": "UTC"}),
		hc.Check(monthly, map[string]any{"name": "Month end", "slug": "", "grace": 3600, "manual_resume": true,
			"schedule": "*-*~1 12:00", "tz": "Europe/Riga", "methods": "POST"}),
		hc.Check(paused, map[string]any{"name": "Old job", "slug": "old-job", "status": "paused", "manual_resume": true,
			"timeout": 86400, "grace": 60}),
		// Healthchecks allows two checks one slug.
		hc.Check(twin, map[string]any{"name": "Old job", "slug": "old-job", "manual_resume": true, "timeout": 600}),
	)
	hc.SetIntegrations(
		map[string]any{"id": emailID, "name": "My Work Email", "kind": "email"},
		map[string]any{"id": smsID, "name": "My Phone", "kind": "sms"},
		map[string]any{"id": slackID, "name": "Ops", "kind": "slack"},
		map[string]any{"id": pdID, "name": "Pager", "kind": "pd"},
	)
}

type bundle struct {
	store monitors.Store
	prj   *monitors.Project
	hc    *healthcheckstest.Server
}

func setup(t *testing.T, s monitors.Store) *bundle {
	t.Helper()
	prj, err := s.ProjectCreate(context.Background(), &monitors.ProjectCreateParams{ID: keys.NewID(), Name: "Main",
		PingKey: keys.NewProjectPingKey(), Now: t0})
	require.NoError(t, err)
	b := &bundle{store: s, prj: prj, hc: healthcheckstest.New(t)}
	project(b.hc)
	return b
}

// run reads the fake Healthchecks with key and imports what it read.
func (b *bundle) run(t *testing.T, key string, dry bool) (*healthchecks.Report, error) {
	t.Helper()
	ctx := context.Background()
	c, err := healthchecks.NewClient(b.hc.URL, key, nil)
	require.NoError(t, err)
	checks, err := c.Checks(ctx)
	if err != nil {
		return nil, err
	}
	ins, insErr := c.Integrations(ctx)
	return healthchecks.Import(ctx, b.store, &healthchecks.ImportParams{ProjectID: b.prj.ID, Checks: checks,
		Integrations: ins, IntegrationsErr: insErr, DryRun: dry, Now: t0})
}

func (b *bundle) monitors(t *testing.T) map[string]*monitors.Monitor {
	t.Helper()
	ms, err := b.store.MonitorList(context.Background(), &monitors.MonitorListParams{ProjectID: b.prj.ID, Now: t0})
	require.NoError(t, err)
	out := map[string]*monitors.Monitor{}
	for _, m := range ms {
		out[m.PingKey] = m
	}
	return out
}

func (b *bundle) channel(t *testing.T, kind, name string, config any) *monitors.Channel {
	t.Helper()
	raw, err := json.Marshal(config)
	require.NoError(t, err)
	ch, err := b.store.ChannelCreate(context.Background(), &monitors.ChannelCreateParams{ID: keys.NewID(), ProjectID: b.prj.ID,
		Kind: kind, Name: name, Config: raw, Now: t0})
	require.NoError(t, err)
	return ch
}

func uuids(items []healthchecks.Item) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.UUID)
	}
	return out
}

func TestImport(t *testing.T) {
	t.Parallel()
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, open(t))
			email := b.channel(t, "email", "My Work Email", map[string]any{"to": []string{"ops@example.com"}})

			// A dry run reports and writes nothing.
			r, err := b.run(t, b.hc.RWKey, true)
			require.NoError(t, err)
			require.True(t, r.DryRun)
			require.ElementsMatch(t, []string{fsBackup, dbBackup, monthly, paused, twin}, uuids(r.Made))
			require.Empty(t, b.monitors(t))

			r, err = b.run(t, b.hc.RWKey, false)
			require.NoError(t, err)
			require.Len(t, r.Made, 5)
			require.Empty(t, r.Changed)
			require.Empty(t, r.Skipped)
			ms := b.monitors(t)
			require.Len(t, ms, 5, "each check is a monitor whose ping key is its UUID")

			fs := ms[fsBackup]
			require.Equal(t, "Filesystem Backup", fs.Name)
			require.Equal(t, "filesystem-backup", fs.Slug)
			require.Equal(t, []string{"backup", "fs"}, fs.Tags)
			require.Equal(t, "Runs incremental backup every hour", fs.Description)
			require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleInterval, EverySeconds: 3600}, fs.Schedule)
			require.EqualValues(t, 600, fs.GraceSeconds)
			require.Equal(t, []string{email.ID}, fs.Channels, "the email integration maps to the channel of its kind and name")
			require.False(t, fs.Paused)
			require.Equal(t, monitors.StatusNew, fs.State.Status)

			db := ms[dbBackup]
			require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleCron, Expr: "15 5 * * *", TZ: "UTC",
				Dialect: monitors.DialectCronie}, db.Schedule)
			require.EqualValues(t, 1200, db.GraceSeconds)
			require.Equal(t, []string{email.ID}, db.Channels)

			mo := ms[monthly]
			require.Equal(t, monitors.ScheduleSpec{Kind: monitors.ScheduleOnCalendar, Expr: "*-*~1 12:00", TZ: "Europe/Riga"}, mo.Schedule)
			require.Equal(t, "month-end", mo.Slug, "a check without a slug gets one from its name")
			require.Empty(t, mo.Channels)

			require.True(t, ms[paused].Paused)
			require.Equal(t, monitors.StatusPaused, ms[paused].State.Status)
			require.Equal(t, "old-job", ms[paused].Slug)
			require.Equal(t, "old-job-0c8983c9", ms[twin].Slug, "a slug another check has gets the UUID's start")

			// What was not kept is said.
			notes := map[string][]string{}
			for _, it := range r.Made {
				notes[it.UUID] = it.Notes
			}
			require.Contains(t, notes[fsBackup], "keyword filters not kept: Vigil does not classify pings by keywords")
			require.Contains(t, notes[fsBackup], "email settings not kept: Vigil takes no pings by email")
			require.Contains(t, notes[monthly], "methods POST not kept: Vigil takes pings by HEAD, GET and POST")
			require.Contains(t, notes[dbBackup], "integration "+smsID+" not mapped (see the integrations below)")

			ins := map[string]healthchecks.IntegrationItem{}
			for _, in := range r.Integrations {
				ins[in.ID] = in
			}
			require.Equal(t, email.ID, ins[emailID].ChannelID)
			require.Equal(t, "Vigil has no sms channels", ins[smsID].Reason)
			require.Contains(t, ins[slackID].Reason, `create a slack channel named "Ops" in Vigil`)
			require.Contains(t, ins[pdID].Reason, `create a pagerduty channel named "Pager" in Vigil`)

			// The ping URLs keep working: a ping by the UUID finds the monitor.
			res, err := b.store.PingRecordBatch(context.Background(), &monitors.PingRecordBatchParams{Pings: []*monitors.PingRecordParams{
				{PingKey: fsBackup, Ping: monitors.Ping{Kind: monitors.PingSuccess, At: t0}}}})
			require.NoError(t, err)
			require.NoError(t, res[0].Err)
			require.Equal(t, fs.ID, res[0].MonitorID)

			// Again: nothing to do.
			r, err = b.run(t, b.hc.RWKey, false)
			require.NoError(t, err)
			require.Empty(t, r.Made)
			require.Empty(t, r.Changed)
			require.Len(t, r.Unchanged, 5)
			require.Equal(t, ms[fsBackup].UpdatedAt, b.monitors(t)[fsBackup].UpdatedAt)

			// Changes in Healthchecks, and the Slack channel made in Vigil.
			slack := b.channel(t, "slack", "Ops", map[string]any{"webhook_url": "https://hooks.slack.com/services/T0/B0/x"})
			project(b.hc)
			checks := []map[string]any{
				b.hc.Check(fsBackup, map[string]any{"name": "Filesystem Backup", "slug": "filesystem-backup", "tags": "backup fs",
					"desc": "Runs incremental backup every hour", "grace": 900, "channels": emailID + "," + slackID, "timeout": 3600,
					"manual_resume": true}),
				b.hc.Check(dbBackup, map[string]any{"name": "Database Backup", "slug": "database-backup", "tags": "production db",
					"desc": "Runs ~/db-backup.sh", "grace": 1200, "status": "paused", "manual_resume": true,
					"channels": emailID + "," + smsID + "," + pdID, "schedule": "15 5 * * *", "tz": "UTC"}),
				b.hc.Check(monthly, map[string]any{"name": "Month end", "slug": "", "grace": 3600, "manual_resume": true,
					"schedule": "*-*~1 12:00", "tz": "Europe/Riga", "methods": "POST"}),
				b.hc.Check(paused, map[string]any{"name": "Old job", "slug": "old-job", "status": "paused", "manual_resume": true,
					"timeout": 86400, "grace": 60}),
				b.hc.Check(twin, map[string]any{"name": "Old job", "slug": "old-job", "manual_resume": true, "timeout": 600}),
				b.hc.Check("5c5e3b1b-5b9b-4a55-8f0b-0f5f7f0f0f0f", map[string]any{"name": "bad", "schedule": "61 * * * *"}),
				b.hc.Check("not-a-uuid", map[string]any{"name": "broken"}),
			}
			b.hc.SetChecks(checks...)
			r, err = b.run(t, b.hc.RWKey, false)
			require.NoError(t, err)
			require.Empty(t, r.Made)
			changed := map[string][]string{}
			for _, it := range r.Changed {
				changed[it.UUID] = it.Fields
			}
			require.Equal(t, map[string][]string{
				fsBackup: {"grace_seconds", "channels"},
				dbBackup: {"paused"},
			}, changed)
			require.Len(t, r.Skipped, 2)
			require.Contains(t, r.Skipped[0].Reason, "Vigil cannot take it: schedule.expr")
			require.Contains(t, r.Skipped[1].Reason, `is not a UUID`)
			ms = b.monitors(t)
			require.Equal(t, []string{email.ID, slack.ID}, ms[fsBackup].Channels)
			require.EqualValues(t, 900, ms[fsBackup].GraceSeconds)
			require.True(t, ms[dbBackup].Paused)
			require.Len(t, ms, 5)
		})
	}
}

// TestImportReadOnlyAndOtherProject checks what the import refuses: a
// read-only key, whose checks have no UUIDs, and a UUID that is a ping
// key of another project.
func TestImportReadOnlyAndOtherProject(t *testing.T) {
	t.Parallel()
	for name, open := range testdb.Stores() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, open(t))
			_, err := b.run(t, b.hc.ROKey, false)
			require.ErrorIs(t, err, healthchecks.ErrReadOnlyKey)
			require.Empty(t, b.monitors(t))

			other, err := b.store.ProjectCreate(context.Background(), &monitors.ProjectCreateParams{ID: keys.NewID(),
				Name: "Other", PingKey: keys.NewProjectPingKey(), Now: t0})
			require.NoError(t, err)
			m := &monitors.Monitor{ID: keys.NewID(), ProjectID: other.ID, Name: "taken", PingKey: dbBackup, CreatedAt: t0, UpdatedAt: t0}
			m.ApplyDefaults()
			require.NoError(t, b.store.MonitorInsert(context.Background(), m))
			r, err := b.run(t, b.hc.RWKey, false)
			require.NoError(t, err)
			require.Len(t, r.Made, 4)
			require.Len(t, r.Skipped, 1)
			require.Equal(t, dbBackup, r.Skipped[0].UUID)
			require.Contains(t, r.Skipped[0].Reason, "ping key of a monitor of another Vigil project")
		})
	}
}

// TestClientErrors checks the client's answers to a Healthchecks that
// cannot be reached, refuses the key, or fails.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hc := healthcheckstest.New(t)
	project(hc)

	c, err := healthchecks.NewClient(hc.URL, "wrong", nil)
	require.NoError(t, err)
	_, err = c.Checks(ctx)
	var apiErr *healthchecks.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusUnauthorized, apiErr.Status)
	require.Equal(t, "wrong api key", apiErr.Message)
	require.Contains(t, err.Error(), "401 Unauthorized: wrong api key (is --api-key an API key of the project")

	hc.Fail("/api/v3/checks/", http.StatusInternalServerError)
	c, err = healthchecks.NewClient(hc.URL+"/api/v3/", hc.RWKey, nil)
	require.NoError(t, err)
	require.Equal(t, hc.URL, c.BaseURL())
	_, err = c.Checks(ctx)
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, http.StatusInternalServerError, apiErr.Status)
	require.Contains(t, err.Error(), "a fault on Healthchecks' side")

	ro, err := healthchecks.NewClient(hc.URL, hc.ROKey, nil)
	require.NoError(t, err)
	_, err = ro.Integrations(ctx)
	require.ErrorAs(t, err, &apiErr, "read-only keys cannot list integrations")
	require.Equal(t, http.StatusUnauthorized, apiErr.Status)

	gone := healthcheckstest.New(t)
	gone.Close()
	c, err = healthchecks.NewClient(gone.URL, "k", nil)
	require.NoError(t, err)
	_, err = c.Checks(ctx)
	require.ErrorContains(t, err, "reach Healthchecks at "+gone.URL)
	require.False(t, errors.As(err, &apiErr))

	for _, bad := range []string{"", "healthchecks.io", "ftp://x", "https://"} {
		_, err := healthchecks.NewClient(bad, "k", nil)
		require.Error(t, err, bad)
	}
	_, err = healthchecks.NewClient(hc.URL, " ", nil)
	require.ErrorContains(t, err, "API key")
}
