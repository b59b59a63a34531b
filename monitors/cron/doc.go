// Package cron parses cron expressions and computes when they fire, in a
// time zone, with the daylight-saving behaviour of cronie, the cron daemon
// most crontabs run under.
//
// A monitor with a cron schedule is late when the job did not report by the
// time its expression last fired (plus grace). Firing times therefore have
// to be exactly those of the cron daemon running the job: a schedule that
// skips a run, or invents one, pages someone for nothing. The package does
// no I/O and keeps no state; an [Expr] is immutable.
//
//	e, err := cron.Parse("30 2 * * *")
//	next := e.Next(now, loc) // first fire strictly after now, in loc
//	prev := e.Prev(now, loc) // last fire strictly before now
//	e.Describe()             // "at 02:30 every day"
//
// # Syntax
//
// An expression has five fields, or six with seconds first:
//
//	[second] minute hour day-of-month month day-of-week
//	 0-59    0-59   0-23 1-31         1-12  0-7 (0 and 7 are Sunday)
//
// Each field is a comma-separated list of items:
//
//	5        one value
//	1-5      a range, inclusive
//	*        every value of the field
//	*/15     every 15th value from the first: minutes 0, 15, 30, 45
//	10-40/10 every 10th value of a range: 10, 20, 30, 40
//	5/20     every 20th value from 5 to the end of the field: 5, 25, 45
//	?        the whole day-of-month or day-of-week field: the same as *
//
// Months may be written JAN-DEC and days SUN-SAT, in any case, also in
// ranges (MON-FRI, JAN-MAR/2). In the day-of-week field SUN as the end of a
// range means the end of the week, so FRI-SUN is Friday, Saturday and
// Sunday; 5/2 runs to 7 and so includes Sunday (as in cronsim and Vixie
// cron, whose day-of-week range is 0-7). A step larger than its range keeps
// just the first value (*/100 in the day-of-month field is day 1).
//
// The descriptors @yearly (or @annually), @monthly, @weekly, @daily (or
// @midnight) and @hourly stand for "0 0 1 1 *", "0 0 1 * *", "0 0 * * 0",
// "0 0 * * *" and "0 * * * *". @reboot and @every have no place in a
// schedule and are rejected, and so is a CRON_TZ= prefix: the time zone is
// a separate setting, passed to Next and Prev.
//
// # Last days and nth weekdays
//
//	L    (day of month) the last day of the month
//	LW   (day of month) the last weekday (Monday to Friday) of the month
//	5L   (day of week) the last Friday of the month; 0L and 7L, the last Sunday
//	5#3  (day of week) the third Friday of the month; k in n#k runs 1-5,
//	     and a month without a fifth Friday has no 5#5
//
// They mix with other items: "0 0 1,L * *" runs on the first and the last
// day of every month, "0 9 * * MON#1,FRI#3" on the first Monday and the
// third Friday. "L-n" (days before the end of the month) and "nW" (nearest
// weekday) are not supported and are rejected.
//
// # Day of month and day of week
//
// When both day fields restrict the days, cron has two readings. This
// package follows Debian and Vixie cron (and cronie and cronsim): if either
// field starts with * or ?, a day must match both fields; otherwise
// matching either is enough.
//
//	0 0 13 * FRI       the 13th of each month, and every Friday
//	0 0 */2 * FRI      odd-numbered days that are Fridays (starts with *)
//	0 0 1-7 * */7      the first seven days that are Sundays: the first Sunday
//	0 0 * * MON        every Monday (the day-of-month * matches every day)
//
// robfig/cron differs when a field is */n: it reads "0 0 */2 * FRI" as odd
// days or Fridays.
//
// # Daylight saving time
//
// Following cronie (cron(8), "Daylight Saving Time and other time
// changes"), the rule depends on the kind of job.
//
// A job at a specific time is one where neither the minute field nor the
// hour field starts with *, such as "30 2 * * *" or "0 9,17 * * MON-FRI"
// (seconds do not matter). It follows the wall clock, once per scheduled
// wall time:
//
//   - a wall time skipped when the clocks go forward fires at the first
//     instant after the gap, the moment of the change; several skipped
//     times, and a skipped time together with the time the clocks jump to,
//     fire once, at that instant;
//   - a wall time repeated when the clocks go back fires once, at its first
//     occurrence.
//
// Every other job ("0 * * * *", "*/5 * * * *", "0 */2 * * *") follows
// elapsed time: it fires at every instant whose local wall time matches.
// When the clocks go back it fires in both copies of the repeated hour;
// when they go forward, wall times inside the gap do not exist and do not
// fire.
//
// In America/New_York, where 2026-03-08 goes 01:59:59 EST -> 03:00 EDT and
// 2026-11-01 goes 01:59:59 EDT -> 01:00 EST:
//
//	30 2 * * *   2026-03-07T02:30-05:00, 2026-03-08T03:00-04:00, 2026-03-09T02:30-04:00
//	30 1 * * *   2026-10-31T01:30-04:00, 2026-11-01T01:30-04:00, 2026-11-02T01:30-05:00
//	0 * * * *    2026-11-01T00:00-04:00, 01:00-04:00, 01:00-05:00, 02:00-05:00
//	0 * * * *    2026-03-08T01:00-05:00, 03:00-04:00 (02:00 does not exist)
//
// robfig/cron's Schedule.Next gets the first two wrong: it skips
// 2026-03-08 entirely and fires 01:30 twice on 2026-11-01. cronsim (behind
// Healthchecks.io) agrees with this package on all its daylight-saving test
// vectors of five-field expressions, but never adjusts six-field ones: here
// "0 30 2 * * *" is a job at a specific time like any other.
//
// Zones that change at midnight (America/Havana, America/Santiago) follow
// the same rule: in Havana on 2026-03-08 "0 0 * * *" fires at 01:00-04:00,
// the first instant of the day. So do changes by 30 minutes
// (Australia/Lord_Howe) and whole skipped days (Pacific/Apia lost
// 2011-12-30: "0 12 * * *" fired at 2011-12-31T00:00+14:00 instead).
//
// Precisely: for a job at a specific time, a scheduled wall time W fires at
// the first instant whose wall-clock reading is W or later. Every job's
// fires are whole seconds; Next and Prev are strictly after and before
// their argument and enumerate the same instants.
//
// # Expressions that never fire
//
// Parse rejects an expression that matches no date, such as "0 0 30 2 *"
// ("never fires: day 30 does not exist in February") or "0 0 */100 * MON#4"
// (day 1 is never a fourth Monday); the error matches [ErrNeverFires]. Day
// matching depends only on the month, its length and the weekday it starts
// on, and every such combination recurs within 40 years (29 February on a
// Monday: 2044, 2072, 2112), so Next and Prev search 50 years and an
// accepted expression is always found. The one exception is a job
// following elapsed time whose every wall time falls into daylight-saving
// gaps, such as "* 2 * 3 SUN#2" in New York (02:xx on the second Sunday of
// March does not exist there): Next then returns the zero Time.
//
// # Performance
//
// Next and Prev jump over months and days that cannot match, using bit
// sets for each field and a per-month bit set of matching days, and look
// the zone's offsets up once per constant-offset stretch. A typical call
// takes well under a microsecond (see BenchmarkNext); the worst case, a
// rare date, scans month by month for up to 50 years.
package cron
