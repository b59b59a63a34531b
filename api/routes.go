package api

import (
	"net/http"
	"net/url"
)

// table lists every route of the API, with what the OpenAPI document says
// of it. Mount, the OpenAPI document and the tests all read it.
func (h *Handler) table() []route {
	paging := []queryParam{
		{"limit", "integer", "page size (default 50)"},
		{"offset", "integer", "rows to skip: the next link carries it"},
	}
	history := []queryParam{
		{"limit", "integer", "page size (default 50)"},
		{"before", "integer", "a cursor: rows older than it (next_cursor of the previous page)"},
	}
	return []route{
		{method: http.MethodGet, path: "/api/v1/openapi.json", access: public, fn: h.openAPI,
			summary: "this document", doc: routeDoc{response: map[string]any{}}},
		{method: http.MethodGet, path: "/api/v1/project", access: read, fn: h.getProject,
			summary: "the project of the API key, with its badge URLs", doc: routeDoc{response: Project{}}},

		{method: http.MethodPost, path: "/api/v1/project/rotate-ping-key", access: write, fn: h.rotateProjectPingKey,
			summary: "give the project a new project ping key; pings by slug with the old one answer 404 at once", doc: routeDoc{response: Project{}}},

		{method: http.MethodGet, path: "/api/v1/monitors", access: read, fn: h.listMonitors,
			summary: "list monitors by name", doc: routeDoc{response: MonitorList{}, query: append([]queryParam{
				{"tag", "string", "only monitors with this tag"},
				{"status", "string", "only monitors with one of these statuses (new, up, running, late, retrying, down, paused, undeclared), comma-separated"},
				{"source", "string", "only monitors declared by this source"},
			}, paging...)}},
		{method: http.MethodPost, path: "/api/v1/monitors", access: write, fn: h.createMonitor,
			summary: "create a monitor", doc: routeDoc{body: MonitorCreate{}, response: Monitor{}, status: http.StatusCreated}},
		{method: http.MethodGet, path: "/api/v1/monitors/:id", access: read, fn: h.getMonitor,
			summary: "one monitor, with its status, ping URLs and next expected time", doc: routeDoc{response: Monitor{}}},
		{method: http.MethodPatch, path: "/api/v1/monitors/:id", access: write, fn: h.patchMonitor,
			summary: "change a monitor's settings; the fields set are remembered as a person's", doc: routeDoc{body: MonitorUpdate{}, response: Monitor{}}},
		{method: http.MethodDelete, path: "/api/v1/monitors/:id", access: write, fn: h.deleteMonitor,
			summary: "delete a monitor and its history", doc: routeDoc{status: http.StatusNoContent}},
		{method: http.MethodPost, path: "/api/v1/monitors/:id/pause", access: write, fn: h.pauseMonitor,
			summary: "pause: resolve open incidents and judge nothing until resumed", doc: routeDoc{response: Monitor{}}},
		{method: http.MethodPost, path: "/api/v1/monitors/:id/resume", access: write, fn: h.resumeMonitor,
			summary: "resume: start afresh, as new", doc: routeDoc{response: Monitor{}}},
		{method: http.MethodPost, path: "/api/v1/monitors/:id/snooze", access: write, fn: h.snoozeMonitor,
			summary: "snooze: its incidents open and are shown, but nothing is sent until the snooze ends (seconds or until); one still open then is notified then",
			doc:     routeDoc{body: MonitorSnooze{}, response: Monitor{}}},
		{method: http.MethodDelete, path: "/api/v1/monitors/:id/snooze", access: write, fn: h.unsnoozeMonitor,
			summary: "end the snooze now: an incident it held that is still open is notified now", doc: routeDoc{response: Monitor{}}},
		{method: http.MethodPost, path: "/api/v1/monitors/:id/rotate-ping-key", access: write, fn: h.rotateMonitorPingKey,
			summary: "give the monitor a new ping key; pings with the old one answer 404 at once", doc: routeDoc{response: Monitor{}}},
		{method: http.MethodGet, path: "/api/v1/monitors/:id/pings", access: read, fn: h.listPings,
			summary: "the monitor's pings, newest first", doc: routeDoc{response: PingList{}, query: history}},
		{method: http.MethodGet, path: "/api/v1/monitors/:id/runs", access: read, fn: h.listRuns,
			summary: "the monitor's runs, newest first", doc: routeDoc{response: RunList{}, query: history}},
		{method: http.MethodGet, path: "/api/v1/monitors/:id/incidents", access: read, fn: h.listMonitorIncidents,
			summary: "the monitor's incidents, newest first", doc: routeDoc{response: IncidentList{}, query: paging}},
		{method: http.MethodGet, path: "/api/v1/monitors/:id/uptime", access: read, fn: h.getUptime,
			summary: "the monitor's uptime per local day and over 7, 30 and 90 days, from its runs and incidents",
			doc:     routeDoc{response: Uptime{}, query: []queryParam{{"days", "integer", "days to list, today included: 1 to 90 (default 90)"}}}},

		{method: http.MethodGet, path: "/api/v1/channels", access: read, fn: h.listChannels,
			summary: "list alert channels by name", doc: routeDoc{response: ChannelList{}, query: paging}},
		{method: http.MethodPost, path: "/api/v1/channels", access: write, fn: h.createChannel,
			summary: "create an alert channel", doc: routeDoc{body: ChannelCreate{}, response: Channel{}, status: http.StatusCreated}},
		{method: http.MethodGet, path: "/api/v1/channels/:id", access: read, fn: h.getChannel,
			summary: "one alert channel, without its secrets", doc: routeDoc{response: Channel{}}},
		{method: http.MethodPatch, path: "/api/v1/channels/:id", access: write, fn: h.patchChannel,
			summary: "change an alert channel; secrets left out are kept, unless the config sends somewhere else", doc: routeDoc{body: ChannelUpdate{}, response: Channel{}}},
		{method: http.MethodDelete, path: "/api/v1/channels/:id", access: write, fn: h.deleteChannel,
			summary: "delete an alert channel that no monitor names", doc: routeDoc{status: http.StatusNoContent}},
		{method: http.MethodPost, path: "/api/v1/channels/:id/test", access: write, fn: h.testChannel,
			summary: "send a test notification", doc: routeDoc{response: ChannelTestResult{}, extra: []int{http.StatusBadGateway, http.StatusNotImplemented}}},

		{method: http.MethodGet, path: "/api/v1/maintenance-windows", access: read, fn: h.listWindows,
			summary: "list maintenance windows", doc: routeDoc{response: MaintenanceWindowList{}}},
		{method: http.MethodPost, path: "/api/v1/maintenance-windows", access: write, fn: h.createWindow,
			summary: "create a maintenance window: one period (starts_at, ends_at) or a recurring one (schedule, tz, duration_seconds), over monitors, tags or all", doc: routeDoc{body: MaintenanceWindowFields{}, response: MaintenanceWindow{}, status: http.StatusCreated}},
		{method: http.MethodGet, path: "/api/v1/maintenance-windows/:id", access: read, fn: h.getWindow,
			summary: "one maintenance window", doc: routeDoc{response: MaintenanceWindow{}}},
		{method: http.MethodPatch, path: "/api/v1/maintenance-windows/:id", access: write, fn: h.patchWindow,
			summary: "change a maintenance window", doc: routeDoc{body: MaintenanceWindowFields{}, response: MaintenanceWindow{}}},
		{method: http.MethodDelete, path: "/api/v1/maintenance-windows/:id", access: write, fn: h.deleteWindow,
			summary: "delete a maintenance window", doc: routeDoc{status: http.StatusNoContent}},
		{method: http.MethodPost, path: "/api/v1/maintenance-windows/:id/end", access: write, fn: h.endWindow,
			summary: "end a maintenance window now (a recurring one's current occurrence)", doc: routeDoc{response: MaintenanceWindow{}}},

		{method: http.MethodGet, path: "/api/v1/incidents", access: read, fn: h.listIncidents,
			summary: "open and recent incidents, newest first", doc: routeDoc{response: IncidentList{}, query: append([]queryParam{
				{"open", "boolean", "only open incidents"},
				{"since", "string", "only incidents open at or after this RFC 3339 time"},
				{"monitor", "string", "only this monitor's incidents (its ID)"},
			}, paging...), extra: []int{http.StatusNotFound}}},
		{method: http.MethodGet, path: "/api/v1/incidents/:id", access: read, fn: h.getIncident,
			summary: "one incident, with its events and delivery attempts", doc: routeDoc{response: Incident{}}},

		{method: http.MethodGet, path: "/api/v1/incidents/:id/notes", access: read, fn: h.listIncidentNotes,
			summary: "the notes people attached to an incident, oldest first", doc: routeDoc{response: IncidentNoteList{}}},
		{method: http.MethodPost, path: "/api/v1/incidents/:id/notes", access: write, fn: h.createIncidentNote,
			summary: "attach a short public note to an incident: the status pages showing its monitor, and their feeds, show it", doc: routeDoc{body: IncidentNoteCreate{}, response: IncidentNote{}, status: http.StatusCreated}},
		{method: http.MethodDelete, path: "/api/v1/incidents/:id/notes/:note", access: write, fn: h.deleteIncidentNote,
			summary: "delete a note of an incident", doc: routeDoc{status: http.StatusNoContent}},

		{method: http.MethodGet, path: "/api/v1/status-pages", access: read, fn: h.listStatusPages,
			summary: "list the project's status pages, by slug", doc: routeDoc{response: StatusPageList{}}},
		{method: http.MethodPost, path: "/api/v1/status-pages", access: write, fn: h.createStatusPage,
			summary: "create a status page (unpublished unless published is true): monitors and tags shown at /status/{slug} with public names", doc: routeDoc{body: StatusPageFields{}, response: StatusPage{}, status: http.StatusCreated}},
		{method: http.MethodGet, path: "/api/v1/status-pages/:id", access: read, fn: h.getStatusPage,
			summary: "one status page", doc: routeDoc{response: StatusPage{}}},
		{method: http.MethodPatch, path: "/api/v1/status-pages/:id", access: write, fn: h.patchStatusPage,
			summary: "change, publish or unpublish a status page", doc: routeDoc{body: StatusPageFields{}, response: StatusPage{}}},
		{method: http.MethodDelete, path: "/api/v1/status-pages/:id", access: write, fn: h.deleteStatusPage,
			summary: "delete a status page", doc: routeDoc{status: http.StatusNoContent}},

		{method: http.MethodPut, path: "/api/v1/sources/:source/monitors", access: write, fn: h.declare,
			summary: "declare the complete set of monitors of a source (PROTOCOL.md §4)",
			doc: routeDoc{body: Declaration{}, response: DeclarationResult{}, query: []queryParam{
				{"allow_mass_undeclare", "boolean", "undeclare more than half, or all, of the source's declared monitors at once; without it such a declaration is refused with 409"},
			}, extra: []int{http.StatusConflict}}},

		{method: http.MethodGet, path: "/badge/:file", access: public, fn: h.badge,
			summary: "a badge: /badge/{badge-key}.svg or .json (shields.io endpoint)"},
		{method: http.MethodGet, path: "/metrics/project/:key", access: public, fn: h.projectMetrics,
			summary: "Prometheus gauges of every monitor of the project of a read-only API key (up, started, grace, paused, last ping age)"},
	}
}

// unescapePath is url.PathUnescape.
func unescapePath(s string) (string, error) { return url.PathUnescape(s) }
