package cron

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

var fullDayNames = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}

var ordinalWords = [...]string{1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}

// Describe returns the schedule in plain English, for example "at 02:30
// every day", "every 5 minutes" or "at 01:01 on the last Friday of the
// month". Unusual expressions get a longer but still exact description
// ("at minutes 0 and 30 past every hour from 9 through 17").
func (e *Expr) Describe() string {
	timePart, specific := e.describeTime()
	datePart := e.describeDate()
	switch {
	case datePart != "":
		return timePart + " " + datePart
	case specific:
		return timePart + " every day"
	}
	return timePart
}

// describeTime describes the seconds, minutes and hours. specific reports
// a plain list of clock times ("at 02:30").
func (e *Expr) describeTime() (string, bool) {
	secs := setValues(e.second, 0, 59)
	mins := setValues(e.minute, 0, 59)
	hours := setValues(e.hour, 0, 23)
	showSeconds := e.hasSeconds && e.second != 1

	// A few clock times.
	if len(secs) == 1 && len(mins) <= 4 && len(hours) <= 4 && len(mins)*len(hours) <= 6 {
		var times []string
		for _, h := range hours {
			for _, m := range mins {
				t := fmt.Sprintf("%02d:%02d", h, m)
				if showSeconds {
					t += fmt.Sprintf(":%02d", secs[0])
				}
				times = append(times, t)
			}
		}
		return "at " + joinWords(times, "and"), true
	}

	allSecs, allMins, allHours := len(secs) == 60, len(mins) == 60, len(hours) == 24
	if showSeconds {
		if allMins && allHours {
			if allSecs {
				return "every second", false
			}
			if k := stepFromZero(secs, 60); k > 0 && 60%k == 0 {
				return fmt.Sprintf("every %d seconds", k), false
			}
		}
		sec := describeUnit(secs, 0, 59, "second", "seconds")
		return sec + " past " + strings.TrimPrefix(e.describeMinutesHours(mins, hours), "at "), false
	}
	return e.describeMinutesHours(mins, hours), false
}

func (e *Expr) describeMinutesHours(mins, hours []int) string {
	allMins, allHours := len(mins) == 60, len(hours) == 24
	if allHours {
		switch {
		case allMins:
			return "every minute"
		case len(mins) == 1 && mins[0] == 0:
			return "every hour"
		}
		if k := stepFromZero(mins, 60); k > 0 && 60%k == 0 {
			return fmt.Sprintf("every %d minutes", k)
		}
	}
	if len(mins) == 1 && mins[0] == 0 {
		if k := stepFromZero(hours, 24); k > 0 && 24%k == 0 {
			return fmt.Sprintf("every %d hours", k)
		}
	}
	minPart := describeUnit(mins, 0, 59, "minute", "minutes")
	if allHours {
		return minPart + " past every hour"
	}
	return minPart + " past " + strings.TrimPrefix(describeUnit(hours, 0, 23, "hour", "hours"), "at ")
}

// describeUnit describes a set of values of one unit crontab.guru style:
// "at every minute", "at every 5th minute", "at minute 7", "at minutes 0
// and 30", "at every minute from 10 through 20", "at every 2nd minute from
// 1 through 59". The phrases read as sets of clock values, never as
// intervals, so "every 7th minute" is minutes 0, 7, ... 56 of each hour.
func describeUnit(vals []int, lo, hi int, one, many string) string {
	n := len(vals)
	switch {
	case n == hi-lo+1:
		return "at every " + one
	case n == 1:
		return fmt.Sprintf("at %s %d", one, vals[0])
	}
	if k := stepOf(vals); k > 0 && n >= 3 {
		first, last := vals[0], vals[n-1]
		covers := last+k > hi // the progression runs to the end of the range
		switch {
		case k == 1:
			return fmt.Sprintf("at every %s from %d through %d", one, first, last)
		case first == lo && covers:
			return fmt.Sprintf("at every %s %s", ordinal(k), one)
		default:
			return fmt.Sprintf("at every %s %s from %d through %d", ordinal(k), one, first, last)
		}
	}
	words := make([]string, n)
	for i, v := range vals {
		words[i] = strconv.Itoa(v)
	}
	return fmt.Sprintf("at %s %s", many, joinWords(words, "and"))
}

// describeDate describes the day and month fields, or returns "" for every
// day of every month.
func (e *Expr) describeDate() string {
	domAll := e.dom == allDays && !e.domLast && !e.domLastWeekday
	dowAll := e.dow == 0x7f && e.dowLast == 0 && !e.hasNth
	monthAll := e.month == allMonths

	// "on January 1"
	if !monthAll && bits.OnesCount16(e.month) == 1 && e.dayAnd && dowAll &&
		bits.OnesCount32(e.dom) == 1 && !e.domLast && !e.domLastWeekday {
		m := bits.TrailingZeros16(e.month)
		return fmt.Sprintf("on %s %d", fullMonthNames[m-1], bits.TrailingZeros32(e.dom))
	}

	var day string
	switch {
	case domAll && dowAll, !e.dayAnd && (domAll || dowAll):
		day = "" // every day (in OR mode, one field alone already covers every day)
	case e.dayAnd && dowAll:
		day = "on " + e.describeDom()
	case e.dayAnd && domAll:
		day = "on " + e.describeDow()
	case e.dayAnd:
		day = "on " + e.describeDom() + ", but only if it is " + e.describeDowCondition()
	default:
		day = "on " + e.describeDom() + " and on " + e.describeDow()
	}

	if monthAll {
		return day
	}
	months := "in " + describeMonths(e.month)
	if day == "" {
		return "every day " + months
	}
	return day + " " + months
}

const (
	allDays   = uint32(0xfffffffe) // bits 1-31
	allMonths = uint16(0x1ffe)     // bits 1-12
)

func (e *Expr) describeDom() string {
	var parts []string
	vals := setValues(uint64(e.dom), 1, 31)
	switch n := len(vals); {
	case n == 31:
		parts = append(parts, "every day")
	case n == 1:
		parts = append(parts, fmt.Sprintf("day %d", vals[0]))
	case n > 1:
		desc := strings.TrimPrefix(describeUnit(vals, 1, 31, "day", "days"), "at ")
		parts = append(parts, desc)
	}
	if e.domLast {
		parts = append(parts, "the last day")
	}
	if e.domLastWeekday {
		parts = append(parts, "the last weekday")
	}
	return joinWords(parts, "and") + " of the month"
}

// describeDow describes the day-of-week field as days the job runs on.
func (e *Expr) describeDow() string {
	var parts []string
	if plain := e.plainWeekdays(); plain != "" {
		parts = append(parts, plain)
	}
	monthly := e.monthlyWeekdays()
	if len(monthly) > 0 {
		parts = append(parts, joinWords(monthly, "and")+" of the month")
	}
	return joinWords(parts, "and")
}

// describeDowCondition describes the day-of-week field as a condition on a
// day: "a Monday", "a Monday or a Friday", "the last Friday of the month".
func (e *Expr) describeDowCondition() string {
	var parts []string
	if e.dow == 0x7f {
		parts = append(parts, "any day of the week")
	} else {
		for w := range 7 {
			if e.dow&(1<<w) != 0 {
				parts = append(parts, "a "+fullDayNames[w])
			}
		}
	}
	for _, m := range e.monthlyWeekdays() {
		parts = append(parts, m+" of the month")
	}
	return joinWords(parts, "or")
}

// plainWeekdays describes the weekdays listed without L or #.
func (e *Expr) plainWeekdays() string {
	switch e.dow {
	case 0:
		return ""
	case 0x7f:
		return "every day"
	case 0x3e:
		return "weekdays (Monday through Friday)"
	case 0x41:
		return "Saturday and Sunday"
	}
	// Monday-first order reads naturally ("Monday through Sunday").
	order := [7]int{1, 2, 3, 4, 5, 6, 0}
	var names []string
	var idx []int
	for i, w := range order {
		if e.dow&(1<<w) != 0 {
			names = append(names, fullDayNames[w])
			idx = append(idx, i)
		}
	}
	if len(idx) >= 3 && idx[len(idx)-1]-idx[0] == len(idx)-1 {
		return names[0] + " through " + names[len(names)-1]
	}
	return joinWords(names, "and")
}

// monthlyWeekdays lists "the last Friday", "the third Monday", ...
func (e *Expr) monthlyWeekdays() []string {
	var out []string
	for w := range 7 {
		for k := 1; k <= 5; k++ {
			if e.dowNth[w]&(1<<k) != 0 {
				out = append(out, "the "+ordinalWords[k]+" "+fullDayNames[w])
			}
		}
		if e.dowLast&(1<<w) != 0 {
			out = append(out, "the last "+fullDayNames[w])
		}
	}
	return out
}

func describeMonths(mask uint16) string {
	vals := setValues(uint64(mask), 1, 12)
	if len(vals) >= 3 && vals[len(vals)-1]-vals[0] == len(vals)-1 {
		return fullMonthNames[vals[0]-1] + " through " + fullMonthNames[vals[len(vals)-1]-1]
	}
	names := make([]string, len(vals))
	for i, v := range vals {
		names[i] = fullMonthNames[v-1]
	}
	return joinWords(names, "and")
}

func setValues(mask uint64, lo, hi int) []int {
	var out []int
	for v := lo; v <= hi; v++ {
		if mask&(1<<v) != 0 {
			out = append(out, v)
		}
	}
	return out
}

// stepOf returns k when vals is an arithmetic progression with step k
// (sorted, at least two values), else 0.
func stepOf(vals []int) int {
	if len(vals) < 2 {
		return 0
	}
	k := vals[1] - vals[0]
	for i := 2; i < len(vals); i++ {
		if vals[i]-vals[i-1] != k {
			return 0
		}
	}
	return k
}

// stepFromZero returns k when vals is exactly 0, k, 2k, ... up to the last
// multiple of k below size, with k >= 2; else 0.
func stepFromZero(vals []int, size int) int {
	k := stepOf(vals)
	if k < 2 || vals[0] != 0 || vals[len(vals)-1]+k < size {
		return 0
	}
	return k
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return strconv.Itoa(n) + suffix
}
