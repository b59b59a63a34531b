package oncalendar

import (
	"fmt"
	"strings"
)

var dayNamesLong = [7]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

var monthNames = [13]string{"", "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

// Describe returns the expression in plain words, such as "at 02:30 on
// Monday to Friday" or "every 15 minutes", with the zone it names, if any.
func (e *Expr) Describe() string {
	parts := []string{e.describeTime()}
	if e.weekdays >= 0 {
		parts = append(parts, "on "+describeWeekdays(e.weekdays))
	}
	if d := e.describeDay(); d != "" {
		parts = append(parts, d)
	}
	if e.month != nil {
		parts = append(parts, "in "+describeChain(e.month, func(v int) string { return monthNames[v] }))
	}
	if e.year != nil {
		parts = append(parts, "in "+describeChain(e.year, func(v int) string { return fmt.Sprint(v) }))
	}
	if e.weekdays < 0 && e.day == nil && e.month == nil && e.year == nil && strings.HasPrefix(parts[0], "at ") && !strings.Contains(parts[0], "every") {
		parts = append(parts, "every day")
	}
	switch {
	case e.utc:
		parts = append(parts, "(UTC)")
	case e.zone != "":
		parts = append(parts, "("+e.zone+")")
	}
	return strings.Join(parts, " ")
}

func single(ch []component) (int, bool) {
	if len(ch) == 1 && ch[0].stop < 0 && ch[0].repeat == 0 {
		return ch[0].start, true
	}
	return 0, false
}

func (e *Expr) describeTime() string {
	sec, secOK := single(e.usec)
	min, minOK := single(e.minute)
	hour, hourOK := single(e.hour)
	clock := func(h, m int) string {
		s := fmt.Sprintf("%02d:%02d", h, m)
		if sec != 0 {
			s += ":" + formatSeconds(sec)
		}
		return s
	}
	if secOK && minOK && hourOK {
		return "at " + clock(hour, min)
	}
	if secOK && minOK && e.hour != nil && len(e.hour) <= 4 && allSingle(e.hour) {
		var times []string
		for _, c := range e.hour {
			times = append(times, clock(c.start, min))
		}
		return "at " + joinAnd(times)
	}
	if secOK && sec == 0 && minOK && e.hour != nil {
		return fmt.Sprintf("at minute %d of hour %s", min, describeChain(e.hour, func(v int) string { return fmt.Sprint(v) }))
	}
	if secOK && sec == 0 && e.hour == nil {
		if e.minute == nil {
			return "every minute"
		}
		if minOK {
			return fmt.Sprintf("at minute %d of every hour", min)
		}
		if len(e.minute) == 1 && e.minute[0].stop < 0 && e.minute[0].repeat > 0 && 60%e.minute[0].repeat == 0 && e.minute[0].start < e.minute[0].repeat {
			s := fmt.Sprintf("every %d minutes", e.minute[0].repeat)
			if e.minute[0].start > 0 {
				s += fmt.Sprintf(" from minute %d", e.minute[0].start)
			}
			return s
		}
	}
	if e.hour == nil && e.minute == nil && len(e.usec) == 1 && e.usec[0] == (component{0, -1, usecPerSec}) {
		return "every second"
	}
	var out []string
	out = append(out, "at second "+describeChain(e.usec, formatSeconds))
	if e.minute != nil {
		out = append(out, "of minute "+describeChain(e.minute, func(v int) string { return fmt.Sprint(v) }))
	} else {
		out = append(out, "of every minute")
	}
	if e.hour != nil {
		out = append(out, "of hour "+describeChain(e.hour, func(v int) string { return fmt.Sprint(v) }))
	} else {
		out = append(out, "of every hour")
	}
	return strings.Join(out, " ")
}

func allSingle(ch []component) bool {
	for _, c := range ch {
		if c.stop >= 0 || c.repeat != 0 {
			return false
		}
	}
	return true
}

func formatSeconds(us int) string {
	if us%usecPerSec == 0 {
		return fmt.Sprintf("%02d", us/usecPerSec)
	}
	return strings.TrimRight(fmt.Sprintf("%02d.%06d", us/usecPerSec, us%usecPerSec), "0")
}

func (e *Expr) describeDay() string {
	if e.day == nil {
		return ""
	}
	if e.endOfMonth {
		if v, ok := single(e.day); ok {
			if v == 1 {
				return "on the last day of the month"
			}
			return fmt.Sprintf("on the %s last day of the month", ordinal(v))
		}
		return "on days " + describeChain(e.day, func(v int) string { return fmt.Sprint(v) }) + " counted from the end of the month"
	}
	if v, ok := single(e.day); ok {
		return fmt.Sprintf("on the %s of the month", ordinal(v))
	}
	return "on days " + describeChain(e.day, func(v int) string { return fmt.Sprint(v) }) + " of the month"
}

func describeWeekdays(bits int) string {
	var parts []string
	for _, r := range weekdayRuns(bits) {
		switch r[1] - r[0] {
		case 0:
			parts = append(parts, dayNamesLong[r[0]])
		case 1:
			parts = append(parts, dayNamesLong[r[0]], dayNamesLong[r[1]])
		default:
			parts = append(parts, dayNamesLong[r[0]]+" to "+dayNamesLong[r[1]])
		}
	}
	return joinAnd(parts)
}

// describeChain renders a list: "5", "1 to 5", "every 15 from 0", "every 2
// from 1 to 11".
func describeChain(ch []component, name func(int) string) string {
	var parts []string
	for _, c := range ch {
		switch {
		case c.stop < 0 && c.repeat == 0:
			parts = append(parts, name(c.start))
		case c.stop >= 0 && (c.repeat == 1 || c.repeat == usecPerSec && name(usecPerSec) == formatSeconds(usecPerSec)):
			parts = append(parts, name(c.start)+" to "+name(c.stop))
		case c.stop >= 0:
			parts = append(parts, fmt.Sprintf("every %s from %s to %s", step(c.repeat, name), name(c.start), name(c.stop)))
		default:
			parts = append(parts, fmt.Sprintf("every %s from %s", step(c.repeat, name), name(c.start)))
		}
	}
	return joinAnd(parts)
}

func step(repeat int, name func(int) string) string {
	if name(usecPerSec) == formatSeconds(usecPerSec) { // seconds
		return strings.TrimLeft(formatSeconds(repeat), "0")
	}
	return fmt.Sprint(repeat)
}

func joinAnd(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
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
	return fmt.Sprintf("%d%s", n, suffix)
}
