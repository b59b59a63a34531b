package cron

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrNeverFires is matched (with errors.Is) by the error Parse returns for an
// expression that is well formed but matches no date at all, such as
// "0 0 30 2 *". The error's own text says why when it can.
var ErrNeverFires = errors.New("expression never fires")

type neverFiresError struct{ reason string }

func (e *neverFiresError) Error() string {
	if e.reason == "" {
		return ErrNeverFires.Error()
	}
	return "never fires: " + e.reason
}

func (e *neverFiresError) Is(target error) bool { return target == ErrNeverFires }

// Expr is a parsed cron expression. It is immutable and safe for concurrent
// use.
type Expr struct {
	src        string
	fields     [6]string // normalized field texts: second (or "" without seconds), minute, hour, dom, month, dow
	descriptor string    // "@daily" etc., or ""
	hasSeconds bool

	second uint64 // bits 0-59
	minute uint64 // bits 0-59
	hour   uint64 // bits 0-23

	dom            uint32   // bits 1-31
	domLast        bool     // L
	domLastWeekday bool     // LW
	month          uint16   // bits 1-12
	dow            uint8    // bits 0-6 (0 = Sunday)
	dowLast        uint8    // bits 0-6: "nL", the last such weekday of the month
	dowNth         [7]uint8 // per weekday, bits 1-5: "n#k", the k-th such weekday
	hasNth         bool

	// dayAnd is the Debian/Vixie rule: when the day-of-month or the
	// day-of-week field starts with * (or ?), a day must match both fields;
	// otherwise matching either is enough.
	dayAnd bool
	// wallClock marks a job "at a specific time": neither the minute nor the
	// hour field starts with *. Such jobs follow the wall clock across
	// daylight-saving changes; the others follow elapsed time.
	wallClock bool

	// dowPattern[w] has bit d set when day d of a month whose first day is
	// weekday w falls on a weekday listed (plainly) in the day-of-week field.
	dowPattern [7]uint32
}

type fieldKind int

const (
	fieldSecond fieldKind = iota
	fieldMinute
	fieldHour
	fieldDom
	fieldMonth
	fieldDow
)

var fieldSpecs = [...]struct {
	name     string
	min, max int
}{
	fieldSecond: {"second", 0, 59},
	fieldMinute: {"minute", 0, 59},
	fieldHour:   {"hour", 0, 23},
	fieldDom:    {"day-of-month", 1, 31},
	fieldMonth:  {"month", 1, 12},
	fieldDow:    {"day-of-week", 0, 7},
}

var monthNames = [...]string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}

var dayNames = [...]string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// fieldSet is the parsed content of one field.
type fieldSet struct {
	bits        uint64
	last        bool     // dom: L
	lastWeekday bool     // dom: LW
	dowLast     uint8    // dow: nL
	dowNth      [7]uint8 // dow: n#k
}

// Parse parses a cron expression: five fields (minute, hour, day of month,
// month, day of week), six fields with seconds first, or one of the
// descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight and
// @hourly. See the package documentation for the syntax.
//
// Errors are sentences that name the field and the problem, for example
// `minute field "61": value 61 out of range 0-59`. An expression that can
// never fire is rejected with an error matching [ErrNeverFires].
func Parse(expr string) (*Expr, error) {
	parts := strings.Fields(expr)
	if len(parts) == 0 {
		return nil, errors.New("empty expression: expected 5 or 6 fields or a descriptor such as @daily")
	}
	first := strings.ToUpper(parts[0])
	if strings.HasPrefix(first, "CRON_TZ=") || strings.HasPrefix(first, "TZ=") {
		return nil, fmt.Errorf("time zone prefix %q is not part of a cron expression: set the schedule's time zone instead", parts[0])
	}

	e := &Expr{}
	if strings.HasPrefix(parts[0], "@") {
		d := strings.ToLower(parts[0])
		std, ok := descriptors[d]
		if !ok {
			return nil, fmt.Errorf("unknown descriptor %q: expected one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly", parts[0])
		}
		if len(parts) != 1 {
			return nil, fmt.Errorf("descriptor %s takes no fields, got %d more", parts[0], len(parts)-1)
		}
		e.descriptor = d
		parts = strings.Fields(std)
	}

	var raw, fields [6]string // as written, and upper-cased
	switch len(parts) {
	case 5:
		copy(raw[1:], parts)
	case 6:
		copy(raw[:], parts)
		e.hasSeconds = true
	default:
		return nil, fmt.Errorf("expected 5 or 6 fields, got %d", len(parts))
	}
	for i := range raw {
		fields[i] = strings.ToUpper(raw[i])
	}
	e.fields = fields

	sets := [6]fieldSet{}
	for k := fieldSecond; k <= fieldDow; k++ {
		if k == fieldSecond && !e.hasSeconds {
			sets[k] = fieldSet{bits: 1} // second 0
			continue
		}
		fs, err := parseField(k, fields[k])
		if err != nil {
			return nil, fmt.Errorf("%s field %q: %w", fieldSpecs[k].name, raw[k], err)
		}
		sets[k] = fs
	}

	e.second = sets[fieldSecond].bits
	e.minute = sets[fieldMinute].bits
	e.hour = sets[fieldHour].bits
	e.dom = uint32(sets[fieldDom].bits)
	e.domLast = sets[fieldDom].last
	e.domLastWeekday = sets[fieldDom].lastWeekday
	e.month = uint16(sets[fieldMonth].bits)
	e.dow = uint8(sets[fieldDow].bits)
	e.dowLast = sets[fieldDow].dowLast
	e.dowNth = sets[fieldDow].dowNth
	for _, n := range e.dowNth {
		if n != 0 {
			e.hasNth = true
		}
	}
	e.dayAnd = startsWithStar(fields[fieldDom]) || startsWithStar(fields[fieldDow])
	e.wallClock = !startsWithStar(fields[fieldMinute]) && !startsWithStar(fields[fieldHour])
	for w := range 7 {
		var p uint32
		for d := 1; d <= 31; d++ {
			if e.dow&(1<<((w+d-1)%7)) != 0 {
				p |= 1 << d
			}
		}
		e.dowPattern[w] = p
	}

	switch {
	case e.descriptor != "":
		e.src = e.descriptor
	case e.hasSeconds:
		e.src = strings.Join(fields[:], " ")
	default:
		e.src = strings.Join(fields[1:], " ")
	}

	if err := e.checkFires(); err != nil {
		return nil, err
	}
	return e, nil
}

func startsWithStar(field string) bool {
	return strings.HasPrefix(field, "*") || strings.HasPrefix(field, "?")
}

// parseField parses one field; its error is the problem alone, which the
// caller prefixes with the field's name and text.
func parseField(k fieldKind, text string) (fieldSet, error) {
	var fs fieldSet
	if strings.Contains(text, "?") {
		if k != fieldDom && k != fieldDow {
			return fs, errors.New(`"?" is only allowed in the day-of-month and day-of-week fields`)
		}
		if text != "?" {
			return fs, errors.New(`"?" must be the whole field`)
		}
		text = "*"
	}
	for item := range strings.SplitSeq(text, ",") {
		if err := parseItem(k, item, &fs); err != nil {
			if item != text && item != "" {
				return fs, fmt.Errorf("item %q: %w", item, err)
			}
			return fs, err
		}
	}
	return fs, nil
}

func parseItem(k fieldKind, item string, fs *fieldSet) error {
	spec := fieldSpecs[k]
	if item == "" {
		return errors.New("empty item in list")
	}
	if strings.Contains(item, "L") || strings.Contains(item, "W") || strings.Contains(item, "#") {
		if handled, err := parseSpecialItem(k, item, fs); handled || err != nil {
			return err
		}
	}

	base, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		if stepText == "" {
			return fmt.Errorf("step is missing after / in %q", item)
		}
		n, err := parseDigits(stepText)
		if err != nil {
			return fmt.Errorf("step %q is not a number", stepText)
		}
		if n < 1 {
			return errors.New("step must be at least 1")
		}
		step = n
	}

	var lo, hi int
	switch {
	case base == "*":
		lo, hi = spec.min, spec.max
	case strings.Count(base, "-") > 1:
		return fmt.Errorf("range %q has more than one -", base)
	case strings.Contains(base, "-"):
		a, b, _ := strings.Cut(base, "-")
		if a == "" {
			return fmt.Errorf("range %q has no start", base)
		}
		if b == "" {
			return fmt.Errorf("range %q has no end", base)
		}
		var err error
		if lo, err = parseValue(k, a); err != nil {
			return err
		}
		if hi, err = parseValue(k, b); err != nil {
			return err
		}
		if k == fieldDow && hi == 0 && lo > 0 && b == "SUN" {
			hi = 7 // FRI-SUN: Sunday as the end of the week
		}
		if lo > hi {
			return fmt.Errorf("range %s-%s goes backwards (%d is after %d)", a, b, lo, hi)
		}
	default:
		v, err := parseValue(k, base)
		if err != nil {
			return err
		}
		lo, hi = v, v
		if hasStep {
			hi = spec.max // a/n means a-max/n
		}
	}
	for v := lo; v <= hi; v += step {
		if k == fieldDow {
			fs.bits |= 1 << (v % 7)
		} else {
			fs.bits |= 1 << v
		}
	}
	return nil
}

// parseSpecialItem handles L, LW, nL and n#k. It reports handled=false for
// items it does not recognise, which then fail as ordinary values.
func parseSpecialItem(k fieldKind, item string, fs *fieldSet) (bool, error) {
	switch k {
	case fieldDom:
		switch {
		case item == "L":
			fs.last = true
			return true, nil
		case item == "LW":
			fs.lastWeekday = true
			return true, nil
		case strings.HasPrefix(item, "L-"):
			return true, errors.New("L-n (days before the end of the month) is not supported; L and LW are")
		case strings.HasSuffix(item, "W") && len(item) > 1:
			return true, errors.New("nW (nearest weekday) is not supported; LW (last weekday of the month) is")
		case strings.Contains(item, "#"):
			return true, errors.New("# is only allowed in the day-of-week field")
		}
		return false, nil
	case fieldDow:
		if isName(item) {
			return false, nil
		}
		if day, nth, ok := strings.Cut(item, "#"); ok {
			wd, err := parseValue(k, day)
			if err != nil {
				return true, err
			}
			n, err := parseDigits(nth)
			if err != nil {
				return true, fmt.Errorf("week %q after # is not a number", nth)
			}
			if n < 1 || n > 5 {
				return true, fmt.Errorf("week %d after # out of range 1-5", n)
			}
			fs.dowNth[wd%7] |= 1 << n
			return true, nil
		}
		if item == "L" {
			return true, errors.New(`"L" needs a weekday before it, e.g. 5L for the last Friday of the month`)
		}
		if strings.HasSuffix(item, "L") {
			day := item[:len(item)-1]
			wd, err := parseValue(k, day)
			if err != nil {
				return true, err
			}
			fs.dowLast |= 1 << (wd % 7)
			return true, nil
		}
		return false, nil
	default:
		if strings.Contains(item, "#") {
			return true, errors.New("# is only allowed in the day-of-week field")
		}
		if core := strings.TrimLeft(item, "0123456789"); core == "L" || core == "W" || core == "LW" || strings.HasPrefix(item, "L-") {
			return true, errors.New("L and W are only allowed in the day-of-month and day-of-week fields")
		}
		return false, nil
	}
}

func isName(s string) bool {
	for _, n := range monthNames {
		if s == n {
			return true
		}
	}
	for _, n := range dayNames {
		if s == n {
			return true
		}
	}
	return false
}

// parseDigits parses a non-empty run of ASCII digits.
func parseDigits(s string) (int, error) {
	if s == "" {
		return 0, errors.New("empty number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New("not a number")
		}
	}
	if len(s) > 9 {
		s = strings.TrimLeft(s, "0")
		if len(s) > 9 {
			return 1 << 30, nil // too large for any field; reported as out of range
		}
	}
	return strconv.Atoi(s)
}

func parseValue(k fieldKind, s string) (int, error) {
	spec := fieldSpecs[k]
	switch k {
	case fieldMonth:
		for i, n := range monthNames {
			if s == n {
				return i + 1, nil
			}
		}
	case fieldDow:
		for i, n := range dayNames {
			if s == n {
				return i, nil
			}
		}
	}
	if s == "" {
		return 0, errors.New("missing value")
	}
	v, err := parseDigits(s)
	if err != nil {
		switch {
		case k == fieldMonth && isName(s):
			return 0, fmt.Errorf("%q is a day name, not a month", s)
		case k == fieldDow && isName(s):
			return 0, fmt.Errorf("%q is a month name, not a day", s)
		case k == fieldMonth:
			return 0, fmt.Errorf("invalid value %q: expected 1-12 or JAN-DEC", s)
		case k == fieldDow:
			return 0, fmt.Errorf("invalid value %q: expected 0-7 or SUN-SAT", s)
		}
		return 0, fmt.Errorf("invalid value %q: expected a number %d-%d", s, spec.min, spec.max)
	}
	if v < spec.min || v > spec.max {
		if v >= 1<<30 {
			return 0, fmt.Errorf("value %s out of range %d-%d", s, spec.min, spec.max)
		}
		return 0, fmt.Errorf("value %d out of range %d-%d", v, spec.min, spec.max)
	}
	return v, nil
}

// checkFires rejects an expression that matches no date. Whether a day
// matches depends only on the month's length and the weekday it starts on;
// the 28 years 2000-2027 contain every such combination (all 14 kinds of
// year), so checking them decides it for all time.
func (e *Expr) checkFires() error {
	for y := int64(2000); y < 2028; y++ {
		for m := 1; m <= 12; m++ {
			if e.month&(1<<m) == 0 {
				continue
			}
			if e.dayMaskFor(daysIn(y, m), weekdayOfDays(daysFromCivil(y, m, 1))) != 0 {
				return nil
			}
		}
	}
	return &neverFiresError{reason: e.neverFiresReason()}
}

func (e *Expr) neverFiresReason() string {
	var months []string
	for m := 1; m <= 12; m++ {
		if e.month&(1<<m) != 0 {
			months = append(months, fullMonthNames[m-1])
		}
	}
	plainDow := e.dow == 0x7f && e.dowLast == 0 && !e.hasNth
	if e.dayAnd && plainDow && !e.domLast && !e.domLastWeekday {
		// Only the day numbers matter, and none fits any selected month.
		var days []string
		for d := 1; d <= 31; d++ {
			if e.dom&(1<<d) != 0 {
				days = append(days, strconv.Itoa(d))
			}
		}
		if len(days) == 1 {
			return fmt.Sprintf("day %s does not exist in %s", days[0], joinWords(months, "or"))
		}
		return fmt.Sprintf("days %s do not exist in %s", joinWords(days, "and"), joinWords(months, "or"))
	}
	if e.dayAnd {
		reason := fmt.Sprintf("day-of-month %q and day-of-week %q never fall on the same day", e.fields[fieldDom], e.fields[fieldDow])
		if bits.OnesCount16(e.month) < 12 {
			reason += " in " + joinWords(months, "or")
		}
		return reason + " (when either field starts with * or ?, a day must match both)"
	}
	return ""
}

var fullMonthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// joinWords joins ["a","b","c"] as "a, b or c".
func joinWords(words []string, conj string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " " + conj + " " + words[len(words)-1]
}

// dayMaskFor returns the days (bits 1-31) that match in a month of n days
// whose first day is weekday w1.
func (e *Expr) dayMaskFor(n, w1 int) uint32 {
	valid := uint32(1)<<(n+1) - 2
	dom := e.dom & valid
	if e.domLast {
		dom |= 1 << n
	}
	wn := (w1 + n - 1) % 7 // weekday of the last day
	if e.domLastWeekday {
		switch wn {
		case 6: // Saturday: Friday before
			dom |= 1 << (n - 1)
		case 0: // Sunday: Friday before
			dom |= 1 << (n - 2)
		default:
			dom |= 1 << n
		}
	}
	dow := e.dowPattern[w1] & valid
	if e.dowLast != 0 {
		for l := e.dowLast; l != 0; l &= l - 1 {
			k := bits.TrailingZeros8(l)
			dow |= 1 << (n - (wn-k+7)%7)
		}
	}
	if e.hasNth {
		for k, nth := range e.dowNth {
			if nth == 0 {
				continue
			}
			first := 1 + (k-w1+7)%7
			for ; nth != 0; nth &= nth - 1 {
				d := first + 7*(bits.TrailingZeros8(nth)-1)
				if d <= n {
					dow |= 1 << d
				}
			}
		}
	}
	if e.dayAnd {
		return dom & dow
	}
	return dom | dow
}

// String returns the normalized source text: fields separated by single
// spaces and letters in upper case, or the descriptor in lower case.
func (e *Expr) String() string { return e.src }

// HasSeconds reports whether the expression has a seconds field.
func (e *Expr) HasSeconds() bool { return e.hasSeconds }
