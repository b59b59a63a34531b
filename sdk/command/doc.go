// Package command is `vigil run`: it wraps any command, such as a crontab
// line, so that Vigil hears when it starts and how it ends.
//
//	vigil run --url https://vigil.example.com --key 5f0b…-… -- /usr/local/bin/backup --full
//
// What it sends (the URL forms are those of Healthchecks.io, so it also
// works against a Healthchecks server):
//
//   - POST /ping/{key}/start?rid={uuid} when the command starts, in the
//     background, so the command does not wait for Vigil;
//   - POST /ping/{key}/{code}?rid={uuid}&duration_ms={ms} when it ends,
//     with the last 10 KB (--tail) of its combined stdout and stderr as the
//     body. Code 0 is a success, any other a failure; a command killed by
//     signal N is reported, and exits, as 128+N, like a shell.
//
// Signals. SIGINT and SIGTERM sent to vigil run are passed on to the
// command (which runs in vigil run's process group, so a terminal's Ctrl-C
// reaches it directly too). When the command then ends with a non-zero
// status or is killed, the run was interrupted by its host (a shutdown, a
// deploy, an operator) rather than failing on its own, so vigil run
// reports /ping/{key}/cancel instead of the exit status: Vigil closes the
// run without an alert. A command that exits 0 after the signal finished
// its work and is reported as a success. (Healthchecks has no cancel: there
// the ping is refused and the run stays open until its grace passes.)
//
// Vigil down. Each request is bounded by --timeout (10 s) and tried
// 1 + --retries (2) times with 0.25 s and 0.5 s between tries, so a Vigil
// that refuses connections costs the finished command under a second and a
// hanging one at most about 31 s; the command itself never waits for the
// start ping. Failures are printed on stderr as warnings, and vigil run
// still exits with the command's code.
//
// Advice. When Vigil's answer to a ping carries advice about the monitor's
// settings (Vigil-Warning: a grace as long as the gap between runs,
// retries that outlast it), vigil run prints each warning on stderr, once
// per run.
//
// Flags and environment: --url (VIGIL_URL); --key (VIGIL_PING_KEY), or
// --project-key (VIGIL_PROJECT_PING_KEY) with --slug (VIGIL_SLUG) and
// --create (VIGIL_CREATE); --timeout (VIGIL_TIMEOUT), --retries
// (VIGIL_RETRIES), --tail (VIGIL_TAIL). Flags win over the environment.
package command
