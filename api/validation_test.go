package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/api"
)

// TestValidationErrors sends bad input to every endpoint that takes input
// and checks that the answer names the field and says what is wrong.
func TestValidationErrors(t *testing.T) {
	t.Parallel()
	eachStoreWith(t, options{bodyLimit: 2048}, func(t *testing.T, b *bundle) {
		m := b.createMonitor(map[string]any{"name": "existing"})
		declared := b.do(http.MethodPut, "/api/v1/sources/billing/monitors", b.rw,
			map[string]any{"monitors": []map[string]any{{"slug": "invoices"}}})
		require.Equal(t, http.StatusOK, declared.status, "%s", declared.body)
		var dres api.DeclarationResult
		declared.json(t, &dres)
		ch := b.channel("ops")
		_, otherCh := b.otherChannel()

		type tc struct {
			name, method, path string
			body               any
			status             int
			field              string
			msg                string // a part of the message
		}
		mon := "/api/v1/monitors"
		one := mon + "/" + m.ID
		tests := []tc{
			// Bodies.
			{"empty body", "POST", mon, "", 400, "body", "must be a JSON object"},
			{"not JSON", "POST", mon, "{nope", 400, "body", "not valid JSON"},
			{"not an object", "POST", mon, `[1]`, 400, "body", "must be a JSON object"},
			{"two objects", "POST", mon, `{"name":"a"} {"name":"b"}`, 400, "body", "one JSON object"},
			{"too large", "POST", mon, `{"name":"` + strings.Repeat("x", 3000) + `"}`, 413, "body", "larger than 2048 bytes"},
			{"unknown field", "POST", mon, map[string]any{"name": "a", "grace": 5}, 400, "grace", "unknown field"},
			{"unknown nested field", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "cron", "expr": "@daily", "zone": "UTC"}},
				400, "schedule.zone", "unknown field"},
			{"read-only field", "POST", mon, map[string]any{"name": "a", "status": "up"}, 400, "status", "read-only"},
			{"read-only in PATCH", "PATCH", one, map[string]any{"ping_key": "x"}, 400, "ping_key", "read-only"},
			{"source in POST", "POST", mon, map[string]any{"name": "a", "source": "x"}, 400, "source", "read-only"},
			{"wrong type", "POST", mon, map[string]any{"name": "a", "grace_seconds": "5m"}, 400, "grace_seconds", "must be a whole number"},
			{"fraction", "POST", mon, map[string]any{"name": "a", "grace_seconds": 1.5}, 400, "grace_seconds", "whole number"},
			{"wrong nested type", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "interval", "every_seconds": "60"}},
				400, "schedule.every_seconds", "whole number"},
			{"tags not a list", "POST", mon, map[string]any{"name": "a", "tags": "etl"}, 400, "tags", "list of strings"},
			{"null", "POST", mon, map[string]any{"name": "a", "grace_seconds": nil}, 400, "grace_seconds", "must not be null"},
			// Monitor settings.
			{"no name", "POST", mon, map[string]any{"tags": []string{"x"}}, 400, "name", "required"},
			{"blank name", "POST", mon, map[string]any{"name": "  ", "slug": "ok"}, 400, "name", "must not be empty"},
			{"bad slug", "POST", mon, map[string]any{"name": "a", "slug": "Not OK"}, 400, "slug", "a-z, 0-9"},
			{"slug taken", "POST", mon, map[string]any{"name": "existing"}, 409, "slug", `"existing" is already used`},
			{"bad tag", "POST", mon, map[string]any{"name": "a", "tags": []string{"a b"}}, 400, "tags", "without spaces"},
			{"tag twice", "POST", mon, map[string]any{"name": "a", "tags": []string{"x", "x"}}, 400, "tags", `"x" is listed twice`},
			{"grace", "POST", mon, map[string]any{"name": "a", "grace_seconds": -1}, 400, "grace_seconds", "between 1 and"},
			{"max runtime", "POST", mon, map[string]any{"name": "a", "max_runtime_seconds": -1}, 400, "max_runtime_seconds", "between 0"},
			{"deadline", "POST", mon, map[string]any{"name": "a", "deadline_seconds": 400 * 86400}, 400, "deadline_seconds", "between 0"},
			{"alert_on_failure", "POST", mon, map[string]any{"name": "a", "alert_on_failure": "sometimes"}, 400, "alert_on_failure", `"sometimes" is not one of final, every_attempt, never`},
			{"failure_threshold", "POST", mon, map[string]any{"name": "a", "failure_threshold": 0}, 400, "failure_threshold", "between 1 and 1000"},
			{"recovery_threshold", "POST", mon, map[string]any{"name": "a", "recovery_threshold": 1001}, 400, "recovery_threshold", "between 1 and 1000"},
			{"overlap", "POST", mon, map[string]any{"name": "a", "overlap": "warn"}, 400, "overlap", `"warn" is not one of alert, ignore`},
			{"negative min runtime", "POST", mon, map[string]any{"name": "a", "min_runtime_seconds": -1}, 400, "min_runtime_seconds", "between 0 (off)"},
			{"min runtime not below max runtime", "POST", mon, map[string]any{"name": "a", "min_runtime_seconds": 600, "max_runtime_seconds": 600},
				400, "min_runtime_seconds", "must be less than the max runtime (10m"},
			{"min runtime not below grace", "PATCH", one, map[string]any{"min_runtime_seconds": 300}, 400, "min_runtime_seconds", "must be less than the max runtime (5m"},
			{"early on an interval", "POST", mon, map[string]any{"name": "a", "early_seconds": 60}, 400, "early_seconds", "cron and oncalendar schedules only"},
			{"early on a robfig @every", "POST", mon, map[string]any{"name": "a", "early_seconds": 60,
				"schedule": map[string]any{"kind": "cron", "expr": "@every 1h", "dialect": "robfig"}}, 400, "early_seconds", "cron and oncalendar schedules only"},
			{"negative early", "POST", mon, map[string]any{"name": "a", "early_seconds": -5, "schedule": map[string]any{"kind": "cron", "expr": "@daily"}},
				400, "early_seconds", "between 0 (off)"},
			{"too_often", "POST", mon, map[string]any{"name": "a", "too_often": "yes"}, 400, "too_often", `"yes" is not one of alert, ignore`},
			{"unknown channel", "POST", mon, map[string]any{"name": "a", "channels": []string{"nope"}}, 400, "channels", `no channel "nope" in this project`},
			{"another project's channel", "POST", mon, map[string]any{"name": "a", "channels": []string{otherCh}}, 400, "channels", "no channel"},
			{"channel twice", "POST", mon, map[string]any{"name": "a", "channels": []string{ch.ID, ch.ID}}, 400, "channels", "listed twice"},
			{"retry delays", "POST", mon, map[string]any{"name": "a", "retry_policy": map[string]any{"max_retries": 1, "max_delays_seconds": []int{-5}}},
				400, "retry_policy.max_delays_seconds", "must not be negative"},
			// Schedules.
			{"schedule kind", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "weekly"}}, 400, "schedule.kind", `"weekly" is not one of cron, interval`},
			{"schedule without kind", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"expr": "@daily"}}, 400, "schedule.kind", "not one of cron, interval"},
			{"cron field out of range", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "cron", "expr": "61 * * * *"}},
				400, "schedule.expr", "61"},
			{"cron too few fields", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "cron", "expr": "* * *"}},
				400, "schedule.expr", "fields"},
			{"cron unknown zone", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "cron", "expr": "@daily", "tz": "Mars/Olympus"}},
				400, "schedule.tz", `unknown time zone "Mars/Olympus"`},
			{"interval with expr", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "interval", "every_seconds": 60, "expr": "@daily"}},
				400, "schedule.expr", "only for cron"},
			{"oncalendar hour out of range", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "oncalendar", "expr": "Mon..Fri 25:00"}},
				400, "schedule.expr", "hour 25 is out of range"},
			{"oncalendar bad weekday", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "oncalendar", "expr": "Fri..Mon 02:30"}},
				400, "schedule.expr", "weekday range ends before it starts"},
			{"oncalendar never", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "oncalendar", "expr": "*-02-30 02:30"}},
				400, "schedule.expr", "never elapses"},
			{"oncalendar without expr", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "oncalendar"}},
				400, "schedule.expr", "is required"},
			{"oncalendar unknown zone", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "oncalendar", "expr": "daily", "tz": "Mars/Olympus"}},
				400, "schedule.tz", "unknown time zone"},
			{"interval of zero", "POST", mon, map[string]any{"name": "a", "schedule": map[string]any{"kind": "interval"}}, 400, "schedule.every_seconds", "between 1 and"},
			// PATCH.
			{"patch bad cron", "PATCH", one, map[string]any{"schedule": map[string]any{"kind": "cron", "expr": "0 25 * * *"}}, 400, "schedule.expr", "25"},
			{"patch bad oncalendar", "PATCH", one, map[string]any{"schedule": map[string]any{"kind": "oncalendar", "expr": "*:*/15"}}, 400, "schedule.expr", "not a systemd calendar expression"},
			{"patch person_fields", "PATCH", one, map[string]any{"person_fields": []string{"ping_key"}}, 400, "person_fields", `"ping_key" is not a setting`},
			{"patch source", "PATCH", one, map[string]any{"source": "a/b"}, 400, "source", "without a slash"},
			{"patch declared slug", "PATCH", mon + "/" + dres.Monitors[0].ID, map[string]any{"slug": "renamed"}, 400, "slug", `declared by source "billing"`},
			{"patch missing monitor", "PATCH", mon + "/nope", map[string]any{"grace_seconds": 60}, 404, "", `monitor "nope" not found`},
			// Lists.
			{"list status", "GET", mon + "?status=up,sleeping", nil, 400, "status", `unknown status "sleeping"`},
			{"list limit", "GET", mon + "?limit=0", nil, 400, "limit", "from 1 to 500"},
			{"list limit too big", "GET", mon + "?limit=501", nil, 400, "limit", "from 1 to 500"},
			{"list offset", "GET", mon + "?offset=-1", nil, 400, "offset", "0 or more"},
			{"pings cursor", "GET", one + "/pings?before=x", nil, 400, "before", "cursor"},
			{"pings offset", "GET", one + "/pings?offset=5", nil, 400, "offset", "before"},
			{"runs cursor", "GET", one + "/runs?before=0", nil, 400, "before", "cursor"},
			{"incidents limit", "GET", "/api/v1/incidents?limit=101", nil, 400, "limit", "from 1 to 100"},
			{"incidents open", "GET", "/api/v1/incidents?open=maybe", nil, 400, "open", "true or false"},
			{"incidents since", "GET", "/api/v1/incidents?since=yesterday", nil, 400, "since", "RFC 3339"},
			{"incidents of unknown monitor", "GET", "/api/v1/incidents?monitor=nope", nil, 404, "", `monitor "nope" not found`},
			// Channels.
			{"channel kind", "POST", "/api/v1/channels", map[string]any{"kind": "fax", "name": "x", "config": map[string]any{}}, 400, "kind", `"fax" is not one of slack, email`},
			{"channel without kind", "POST", "/api/v1/channels", map[string]any{"name": "x", "config": map[string]any{}}, 400, "kind", "required"},
			{"channel without name", "POST", "/api/v1/channels", map[string]any{"kind": "email", "config": map[string]any{"to": []string{"a@example.com"}}}, 400, "name", "required"},
			{"channel without config", "POST", "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x"}, 400, "config", "keys: url"},
			{"channel unknown config key", "POST", "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": map[string]any{"url": "https://x.example.com", "urll": "y"}},
				400, "config.urll", "not a config key of webhook"},
			{"channel config type", "POST", "/api/v1/channels", map[string]any{"kind": "email", "name": "x", "config": map[string]any{"to": "a@example.com"}},
				400, "config.to", "list of strings"},
			{"channel config value", "POST", "/api/v1/channels", map[string]any{"kind": "webhook", "name": "x", "config": map[string]any{"url": "ftp://x.example.com"}},
				400, "config.url", ""},
			{"channel name taken", "POST", "/api/v1/channels", webhookBody("ops"), 409, "name", `a channel named "ops" exists`},
			{"channel read-only field", "POST", "/api/v1/channels", map[string]any{"id": "x", "kind": "email", "name": "x"}, 400, "id", "read-only"},
			{"channel patch kind", "PATCH", "/api/v1/channels/" + ch.ID, map[string]any{"kind": "slack"}, 400, "kind", "read-only"},
			{"channel patch config", "PATCH", "/api/v1/channels/" + ch.ID, map[string]any{"config": map[string]any{"url": "not a url"}}, 400, "config.url", ""},
			{"channel patch name", "PATCH", "/api/v1/channels/" + ch.ID, map[string]any{"name": ""}, 400, "name", "must not be empty"},
			// Declarations.
			{"declare without monitors", "PUT", "/api/v1/sources/app/monitors", map[string]any{}, 400, "monitors", "is required"},
			{"declare unknown top field", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []any{}, "prune": true}, 400, "prune", "unknown field"},
			{"declare without slug", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"name": "a"}}}, 400, "monitors[0].slug", "required"},
			{"declare slug twice", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "a"}, {"slug": "a"}}},
				400, "monitors[1].slug", `"a" is declared twice (also monitors[0])`},
			{"declare bad field", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "a"}, {"slug": "b", "grace_seconds": 0.5}}},
				400, "monitors[1].grace_seconds", "whole number"},
			{"declare unknown field", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "a", "paused": true}}},
				400, "monitors[0].paused", "read-only"},
			{"declare bad oncalendar", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "a", "schedule": map[string]any{"kind": "oncalendar", "expr": "Mon..Fri 02:60"}}}},
				400, "monitors[0].schedule.expr", "minute 60 is out of range"},
			{"declare bad cron", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "a", "schedule": map[string]any{"kind": "cron", "expr": "0 0 * * 8"}}}},
				400, "monitors[0].schedule.expr", "8"},
			{"declare unknown channel", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "a"}, {"slug": "b", "channels": []string{"nope"}}}},
				400, "monitors[1].channels", "no channel"},
			{"declare person's slug", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "existing"}}},
				409, "monitors[0].slug", `"existing" is the slug of a monitor a person created`},
			{"declare other source's slug", "PUT", "/api/v1/sources/app/monitors", map[string]any{"monitors": []map[string]any{{"slug": "invoices"}}},
				409, "monitors[0].slug", `declared by source "billing"`},
			{"declare bad source", "PUT", "/api/v1/sources/" + strings.Repeat("s", 101) + "/monitors", map[string]any{"monitors": []any{}}, 400, "source (in the path)", "1 to 100"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				b := b.with(t)
				r := b.do(tt.method, tt.path, b.rw, tt.body)
				require.Equal(t, tt.status, r.status, "%s", r.body)
				e := r.errorBody(t)
				require.Equal(t, tt.field, e.Field, "%s", r.body)
				if tt.field != "" {
					require.True(t, strings.HasPrefix(e.Error, tt.field+": "), "the message starts with the field: %q", e.Error)
				}
				require.Contains(t, e.Error, tt.msg)
			})
		}
		// Nothing was made by the refused requests.
		r := b.do(http.MethodGet, "/api/v1/monitors?limit=500", b.rw, nil)
		var l api.MonitorList
		r.json(t, &l)
		require.Len(t, l.Monitors, 2, "existing and invoices")
	})
}

// otherChannel makes a channel in the other project.
func (b *bundle) otherChannel() (api.Channel, string) {
	b.t.Helper()
	r := b.do(http.MethodPost, "/api/v1/channels", b.otherRW, webhookBody("theirs"))
	require.Equal(b.t, http.StatusCreated, r.status, "%s", r.body)
	var ch api.Channel
	r.json(b.t, &ch)
	return ch, ch.ID
}
