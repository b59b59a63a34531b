// Package quartz reads Quartz cron expressions (org.quartz.CronExpression,
// and its port in Quartz.NET) and computes their fire times exactly as
// Quartz 2.3.2 does, daylight saving time included.
//
// # Syntax
//
// Six or seven fields, seconds first and an optional year:
//
//	second minute hour day-of-month month day-of-week [year]
//	0-59   0-59   0-23 1-31         1-12  1-7 (1 = Sunday)  1970-2199
//
// Items are values, ranges (a-b; a range whose end comes before its start
// wraps around: 22-2 in the hour field is 22, 23, 0, 1, 2), increments
// (a/n, */n, a-b/n) and comma lists; months JAN-DEC and days SUN-SAT in
// any case. Exactly one of the two day fields is ?, "no specific value".
//
//	L      (day of month) the last day; L-3 three days before it
//	LW     the last weekday (Monday to Friday) of the month
//	15W    the weekday nearest the 15th, within the month
//	6L     (day of week) the last Friday of the month
//	1#2    the second Sunday of the month
//	L      (day of week, alone) Saturday, the last day of the week
//
// Quartz ignores characters it cannot place in a few spots ("?5" reads as
// "?", an eighth field is dropped); Parse refuses those instead.
//
// # Daylight saving time
//
// Quartz walks a java.util.GregorianCalendar from field to field, and Java
// resolves wall times the way [Expr.TimeAfter] reproduces: a wall time the
// spring change skips moves past the gap, so "0 30 2 * * ?" in New York
// does not fire on 2026-03-08 (and "0 0 * * * ?" fires at 01:00 then
// 03:00), and a repeated wall time fires once, in standard time:
// "0 30 1 * * ?" fires at 2026-11-01T01:30-05:00, the second 01:30.
//
// testdata/vectors.json holds what Java Quartz itself computes, through
// every 2026 transition of ten zones and two years of day rules;
// testdata/QuartzVectors.java writes it, and a test regenerates it where
// Java and Debian's libquartz2-java are installed.
package quartz
