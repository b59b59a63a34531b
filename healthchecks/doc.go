// Package healthchecks is what Vigil knows of Healthchecks.io: how its
// checks and integrations translate to Vigil's monitors and channels (used
// both by the Healthchecks-compatible API that package api serves and by
// the import), a client of its management API v3, and the import of a
// Healthchecks project into a Vigil project (vigil import healthchecks).
//
// # The import
//
// [Import] reads every check and, where the key allows, every integration
// of a Healthchecks project, and makes the matching monitors: name, slug,
// tags, description, the schedule (simple checks' timeout as an interval,
// cron and OnCalendar schedules with their zone), grace, whether paused,
// and the check's UUID as the monitor's ping key, so that every
// https://hc-ping.com/<uuid> in a crontab keeps working once that host
// name reaches Vigil. A monitor is matched by its ping key: running the
// import again changes what changed in Healthchecks, and nothing else.
//
// Healthchecks' API lists an integration's kind and name but not its
// settings (its URL, token or address), so an integration is not copied:
// one whose kind Vigil has is mapped to the Vigil channel of the same kind
// and name in the project, and checks that notify it get that channel;
// the report lists the others, with why.
//
// Everything is read before anything is written, and the monitors are
// written in one transaction: an import that fails writes nothing.
package healthchecks
