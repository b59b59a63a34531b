package quartz

import (
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
)

// Field order of a Quartz expression.
const (
	second = iota
	minute
	hour
	dayOfMonth
	month
	dayOfWeek
	year
)

var fieldNames = [...]string{"second", "minute", "hour", "day-of-month", "month", "day-of-week", "year"}

// fieldMin and fieldMax bound each field; fieldWrap is what a range whose
// end is before its start wraps around (Quartz's "max").
var (
	fieldMin  = [...]int{0, 0, 0, 1, 1, 1, 1970}
	fieldMax  = [...]int{59, 59, 23, 31, 12, 7, MaxYear}
	fieldWrap = [...]int{60, 60, 24, 31, 12, 7, 0}
)

// MaxYear is the last year an expression can fire in. Quartz 2.3.2 uses
// the current year plus 100; a fixed year keeps Next a pure function.
const MaxYear = 2199

var monthNames = map[string]int{"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8,
	"SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}

var dayNames = map[string]int{"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}

// Expr is a parsed Quartz cron expression. It is immutable and safe for
// concurrent use.
type Expr struct {
	src    string
	fields []string

	second, minute, hour uint64 // bits 0-59, 0-59, 0-23
	dom                  uint64 // bits 1-31
	month                uint64 // bits 1-12
	dow                  uint64 // bits 1-7, 1 = Sunday
	years                []int  // sorted; nil: every year from 1970 to MaxYear

	domNoSpec, dowNoSpec bool // ?
	domAll, dowAll       bool // a plain *
	lastDay              bool // L in day-of-month
	lastDayOffset        int  // L-n
	nearestWeekday       bool // W
	lastDow              bool // nL in day-of-week
	nthDow               int  // n#k: k
}

// Parse parses a Quartz CronExpression: six or seven fields, seconds first
// and an optional year last. Letters may be in any case. Errors name the
// field and, where Quartz has one, use Quartz's own message.
func Parse(expr string) (*Expr, error) {
	fields := strings.Fields(strings.ToUpper(expr))
	switch {
	case len(fields) == 0:
		return nil, errors.New("empty expression: Quartz expects 6 or 7 fields, seconds first")
	case len(fields) < 6:
		return nil, fmt.Errorf("%d fields: a Quartz expression has 6 or 7 fields (second minute hour "+
			"day-of-month month day-of-week [year]), seconds first", len(fields))
	case len(fields) > 7:
		return nil, fmt.Errorf("%d fields: a Quartz expression has 6 or 7 fields (second minute hour "+
			"day-of-month month day-of-week [year])", len(fields))
	}
	e := &Expr{src: expr, fields: fields}
	for k, text := range fields {
		if err := e.parseField(k, text); err != nil {
			return nil, fmt.Errorf("%s field %q: %w", fieldNames[k], text, err)
		}
	}
	if e.domNoSpec == e.dowNoSpec {
		if e.domNoSpec {
			return nil, errors.New("'?' can only be specified for Day-of-Month -OR- Day-of-Week")
		}
		return nil, errors.New("Support for specifying both a day-of-week AND a day-of-month parameter is not " +
			"implemented: write ? in one of them")
	}
	if len(e.years) == 0 && len(fields) == 7 && fields[year] != "*" {
		return nil, errors.New("year field: no year from 1970 to " + strconv.Itoa(MaxYear))
	}
	return e, nil
}

func (e *Expr) parseField(k int, text string) error {
	if k == dayOfMonth && strings.Contains(text, "L") && len(text) > 1 && strings.Contains(text, ",") {
		return errors.New("Support for specifying 'L' and 'LW' with other days of the month is not implemented")
	}
	if k == dayOfWeek && strings.Contains(text, "L") && len(text) > 1 && strings.Contains(text, ",") {
		return errors.New("Support for specifying 'L' with other days of the week is not implemented")
	}
	if k == dayOfWeek && strings.Count(text, "#") > 1 {
		return errors.New("Support for specifying multiple \"nth\" days is not implemented")
	}
	if text == "?" {
		if k != dayOfMonth && k != dayOfWeek {
			return errors.New("'?' can only be specified for Day-of-Month or Day-of-Week")
		}
		if k == dayOfMonth {
			e.domNoSpec = true
		} else {
			e.dowNoSpec = true
		}
		return nil
	}
	if text == "*" {
		switch k {
		case dayOfMonth:
			e.domAll = true
		case dayOfWeek:
			e.dowAll = true
		}
	}
	var yearSet map[int]bool
	if k == year {
		if text == "*" {
			return nil
		}
		yearSet = map[int]bool{}
	}
	for _, item := range strings.Split(text, ",") {
		if item == "" {
			return errors.New("empty item between commas")
		}
		if err := e.parseItem(k, item, yearSet); err != nil {
			return err
		}
	}
	for y := range yearSet {
		e.years = append(e.years, y)
	}
	sort.Ints(e.years)
	return nil
}

func (e *Expr) parseItem(k int, item string, yearSet map[int]bool) error {
	if item == "?" {
		return errors.New("'?' must be the whole field")
	}
	if ok, err := e.parseSpecial(k, item); ok || err != nil {
		return err
	}
	rangePart, stepPart, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, err := strconv.Atoi(stepPart)
		if err != nil || n < 1 {
			return errors.New("'/' must be followed by a positive integer")
		}
		if n > fieldMax[k] && k != year {
			return fmt.Errorf("Increment > %d : %d", fieldMax[k]+1, n)
		}
		step = n
	}
	lo, hi := fieldMin[k], fieldMax[k]
	switch {
	case rangePart == "*" || rangePart == "":
		if rangePart == "" && !hasStep {
			return errors.New("empty item")
		}
	default:
		a, b, isRange := strings.Cut(rangePart, "-")
		v, err := e.value(k, a)
		if err != nil {
			return err
		}
		lo = v
		if isRange {
			if hi, err = e.value(k, b); err != nil {
				return err
			}
		} else if !hasStep {
			hi = v
		}
	}
	if k == year && hi < lo {
		return errors.New("Start year must be less than stop year")
	}
	wrap := 0
	if hi < lo {
		wrap = fieldWrap[k]
		hi += wrap
	}
	for i := lo; i <= hi; i += step {
		v := i
		if wrap > 0 {
			v = i % wrap
			if v == 0 && fieldMin[k] == 1 {
				v = wrap
			}
		}
		e.add(k, v, yearSet)
	}
	return nil
}

// parseSpecial reads the items with L, W and #.
func (e *Expr) parseSpecial(k int, item string) (bool, error) {
	switch k {
	case dayOfMonth:
		if !strings.HasPrefix(item, "L") && !strings.HasSuffix(item, "W") {
			return false, nil
		}
		if rest, ok := strings.CutPrefix(item, "L"); ok {
			e.lastDay = true
			rest, e.nearestWeekday = strings.CutSuffix(rest, "W")
			if rest == "" {
				return true, nil
			}
			n, err := strconv.Atoi(strings.TrimPrefix(rest, "-"))
			if !strings.HasPrefix(rest, "-") || err != nil || n < 0 {
				return true, fmt.Errorf("%q: L is followed by -n (days before the last) and W only", item)
			}
			if n > 30 {
				return true, errors.New("Offset from last day must be <= 30")
			}
			e.lastDayOffset = n
			return true, nil
		}
		n, err := strconv.Atoi(strings.TrimSuffix(item, "W"))
		if err != nil {
			return true, fmt.Errorf("%q: W follows a day of the month, as in 15W", item)
		}
		if n > 31 {
			return true, errors.New("The 'W' option does not make sense with values larger than 31 (max number of days in a month)")
		}
		if n < 1 {
			return true, errors.New("Day of month values must be between 1 and 31")
		}
		e.nearestWeekday = true
		e.add(k, n, nil)
		return true, nil
	case dayOfWeek:
		if item == "L" {
			e.add(k, 7, nil) // Quartz: L alone is the last day of the week, Saturday
			return true, nil
		}
		if day, ok := strings.CutSuffix(item, "L"); ok {
			v, err := e.value(k, day)
			if err != nil {
				return true, err
			}
			e.lastDow = true
			e.add(k, v, nil)
			return true, nil
		}
		if day, nth, ok := strings.Cut(item, "#"); ok {
			v, err := e.value(k, day)
			if err != nil {
				return true, err
			}
			n, err := strconv.Atoi(nth)
			if err != nil || n < 1 || n > 5 {
				return true, errors.New("A numeric value between 1 and 5 must follow the '#' option")
			}
			e.nthDow = n
			e.add(k, v, nil)
			return true, nil
		}
	}
	return false, nil
}

// value reads one number or name of field k.
func (e *Expr) value(k int, s string) (int, error) {
	if k == month {
		if v, ok := monthNames[s]; ok {
			return v, nil
		}
	}
	if k == dayOfWeek {
		if v, ok := dayNames[s]; ok {
			return v, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || strings.HasPrefix(s, "+") {
		switch k {
		case month:
			return 0, fmt.Errorf("Invalid Month value: '%s'", s)
		case dayOfWeek:
			return 0, fmt.Errorf("Invalid Day-of-Week value: '%s'", s)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	if v < fieldMin[k] || v > fieldMax[k] {
		switch k {
		case second, minute:
			return 0, errors.New("Minute and Second values must be between 0 and 59")
		case hour:
			return 0, errors.New("Hour values must be between 0 and 23")
		case dayOfMonth:
			return 0, errors.New("Day of month values must be between 1 and 31")
		case month:
			return 0, errors.New("Month values must be between 1 and 12")
		case dayOfWeek:
			return 0, errors.New("Day-of-Week values must be between 1 and 7")
		}
		return 0, fmt.Errorf("year %d is not between %d and %d", v, fieldMin[k], fieldMax[k])
	}
	return v, nil
}

func (e *Expr) add(k, v int, yearSet map[int]bool) {
	switch k {
	case second:
		e.second |= 1 << v
	case minute:
		e.minute |= 1 << v
	case hour:
		e.hour |= 1 << v
	case dayOfMonth:
		e.dom |= 1 << v
	case month:
		e.month |= 1 << v
	case dayOfWeek:
		e.dow |= 1 << v
	case year:
		yearSet[v] = true
	}
}

// String returns the expression as given.
func (e *Expr) String() string { return e.src }

// next returns the lowest value in mask at or above from, or -1.
func next(mask uint64, from int) int {
	if from > 63 {
		return -1
	}
	m := mask >> from << from
	if m == 0 {
		return -1
	}
	return bits.TrailingZeros64(m)
}

func first(mask uint64) int { return next(mask, 0) }
