// Package api is Vigil's management API: JSON over HTTP under /api/v1
// (PROTOCOL.md §2 and §4), the badges under /badge, and the metrics
// collectors of monitors and incidents. [New] builds the handler; [Handler.Mount]
// adds its routes to an echo server. Every route is a row of one table
// (routes.go), which the OpenAPI document ([Handler.OpenAPI], served at
// /api/v1/openapi.json) and the tests read too, so a route cannot be added
// without being documented and tested.
//
// # Keys
//
// Every route but the OpenAPI document and the badges needs an API key,
// as "Authorization: Bearer <key>" or "X-Api-Key: <key>". The key is
// looked up by its hash. A key belongs to one project: every store call
// takes the key's project, and the store answers ErrNotFound for rows of
// another project, so another project's monitor is a 404 exactly like a
// monitor that does not exist. Read-only keys may call the routes that
// change nothing; the others answer 403.
//
// # Input and errors
//
// Bodies are decoded strictly into the request types of types.go: an
// unknown field is an error that names it (with its path, such as
// schedule.zone or monitors[2].paused), a field the server sets is called
// read-only, and a value of the wrong type says what it must be. Settings
// are then validated by package monitors, whose errors name the field. An
// error is answered as {"error": "<field>: <what is wrong>", "field":
// "<field>"}.
//
// # Declarations
//
// PUT /api/v1/sources/{source}/monitors applies a source's complete set of
// monitors in one transaction ([manage.Service.Declare], through
// [monitors.Store.MonitorSync]); the rules are those of manage's
// planDeclaration. A person and a source may both set a monitor's
// settings: the settings a person set with a PATCH are remembered as the
// monitor's person fields, and a declaration does not overwrite them; it
// reports them in overridden_fields when it declared another value. A
// monitor a person paused stays paused when its source declares it again. A
// source never takes over a monitor that a person made: a declared slug that
// such a monitor has is a 409, until a person hands the monitor to the
// source (PATCH {"source": ...}).
//
// Declarations of one source take turns on PostgreSQL (an advisory lock),
// so replicas of one application declaring at start-up neither fail nor
// make a monitor twice; a slug created meanwhile by a person makes the
// declaration start over and answer 409.
//
// # Advice
//
// A monitor with a retry policy shows the longest time its retries can
// take ([monitors.RetryChain]), and every monitor the warnings its
// settings call for ([monitors.Adviser.Advise]), such as retries longer
// than the shortest gap between two runs of its schedule
// ([monitors.ScheduleGap]), or a grace so long that a missed run goes
// unreported. The rules are written once, in monitors; the dashboard, the
// SDK and vigil run show the same.
//
// # Badges
//
// A badge key is "{project-id}.{target}.{signature}": target is
// "m-{monitor-id}", "t-{tag}" or "*" (all the project's monitors), and the
// signature is an HMAC of the project ID and target with a secret of the
// project that the store makes on first use and that never leaves the
// server. Badges need no key; a key that does not verify is a 404.
package api
