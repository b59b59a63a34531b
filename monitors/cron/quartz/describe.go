package quartz

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vigilhq/vigil/monitors/cron"
)

// Describe returns the schedule in plain words, such as "at 02:30 on the
// second Sunday of the month", or "" when the words of package cron
// cannot say it (L-n, W, a year field).
func (e *Expr) Describe() string {
	c := e.Cronie()
	if c == "" {
		return ""
	}
	x, err := cron.Parse(c)
	if err != nil {
		return ""
	}
	return x.Describe()
}

// Cronie returns the same schedule as a six-field expression of package
// cron (where Sunday is 0), or "" when there is none. Only the fire
// times' daylight-saving behaviour differs.
func (e *Expr) Cronie() string {
	if e.years != nil || e.nearestWeekday || e.lastDayOffset != 0 {
		return ""
	}
	f := []string{list(e.second, 0, 59, 0), list(e.minute, 0, 59, 0), list(e.hour, 0, 23, 0), "*",
		list(e.month, 1, 12, 0), "*"}
	switch {
	case e.domNoSpec:
	case e.lastDay:
		f[3] = "L"
	default:
		f[3] = list(e.dom, 1, 31, 0)
	}
	switch {
	case e.dowNoSpec:
	case e.lastDow:
		f[5] = strconv.Itoa(first(e.dow)-1) + "L"
	case e.nthDow != 0:
		f[5] = fmt.Sprintf("%d#%d", first(e.dow)-1, e.nthDow)
	default:
		f[5] = list(e.dow, 1, 7, -1)
	}
	return strings.Join(f, " ")
}

// list writes the values of mask, shifted by shift, or * when all of lo-hi
// are there.
func list(mask uint64, lo, hi, shift int) string {
	var vals []string
	for v := lo; v <= hi; v++ {
		if mask&(1<<v) != 0 {
			vals = append(vals, strconv.Itoa(v+shift))
		}
	}
	if len(vals) == hi-lo+1 {
		return "*"
	}
	return strings.Join(vals, ",")
}
