// Package oncalendar parses systemd calendar expressions (the OnCalendar=
// of timer units, systemd.time(7)) and computes when they elapse, with the
// daylight-saving behaviour of systemd 252.
//
// A monitor with an oncalendar schedule is late when its job did not
// report by the time its timer elapsed (plus grace), so the elapses have
// to be exactly those of the systemd running the job. The reference is
// systemd-analyze calendar --base-time=… --iterations=N: the tests replay
// vectors generated from it (testdata/systemd252.jsonl, by gen_vectors.go)
// and, where systemd-analyze is installed, compare with it directly.
//
//	loc, _ := time.LoadLocation("Europe/Berlin")
//	e, err := oncalendar.Parse("Mon..Fri 02:30", loc)
//	next := e.Next(now) // first elapse strictly after now of a running timer, in e.Location()
//	prev := e.Prev(now) // its last elapse strictly before now
//	e.SystemdNext(now)  // first elapse strictly after now as systemd-analyze computes it from now
//	e.Describe()        // "at 02:30 on Monday to Friday"
//	e.String()          // "Mon..Fri *-*-* 02:30:00", as systemd normalizes it
//
// # Syntax
//
//	[WEEKDAYS] [[YEAR-]MONTH-DAY] [HOUR:MINUTE[:SECOND]] [ZONE]
//
// Weekdays are Mon…Sun or Monday…Sunday in any case, in lists and ranges
// (Mon..Fri, Sat,Sun, Mon-Wed). Each date and time part is * or a list of
// values, ranges (1..5) and repetitions (0/15: from 0 every 15; 1..10/3).
// MONTH~DAY counts days from the end of the month: *-*~01 is the last
// day, *-02~03 the third last day of February. A missing date is every
// day; a missing time is 00:00:00; seconds may have up to six decimals.
// The shorthands minutely, hourly, daily, weekly, monthly, yearly (or
// annually), quarterly and semiannually mean what systemd says they mean.
// @SECONDS is one instant. Two-digit years are 1970-2069.
//
// A zone at the end wins over the zone given to Parse: " UTC" (any case)
// or an IANA name (" Europe/Berlin"). The abbreviations of the zone given
// to Parse (CET, CEST for Europe/Berlin) select standard or daylight
// saving time, as systemd does with the machine's own zone.
//
// # Daylight saving time
//
// systemd searches field by field and normalizes the wall time through
// glibc's mktime after each step, which this package reproduces (with
// glibc's preference for the daylight-saving reading). The results:
//
//   - A wall time in a spring-forward gap is skipped: Mon..Fri 02:30 in
//     Europe/Berlin does not elapse on 2026-03-29, and 02:30 on Lord Howe
//     Island's 30-minute gap day neither.
//   - A wall time that occurs twice in the autumn elapses once, at its
//     first (daylight-saving) reading; an expression that elapses every
//     few minutes skips the repeated hour too, unless the search starts
//     inside it. A timer searches from its last elapse, so a running
//     timer never starts inside it: Next and Prev follow the chain of
//     elapses (SystemdNext of the one before), and SystemdNext from an
//     instant inside the repeated hour, as systemd-analyze computes it,
//     can name a time the running timer never reaches (01:59:59 EST
//     when 01:59:59 EDT has elapsed).
//   - systemd 252 gives up ("Infinite loop in calendar calculation") on a
//     few expressions crossing a gap at midnight (America/Havana,
//     America/Santiago) or at 02:45 (Pacific/Chatham), and its timer then
//     elapses no more. Next goes on with the elapse that follows instead:
//     a monitor then reports the job that stopped.
//
// An [Expr] is immutable and safe for concurrent use.
package oncalendar
