package oncalendar

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// The years an expression can name, as systemd allows them.
const (
	minYear = 1970
	maxYear = 2199
)

// maxComponents bounds a comma-separated list, as systemd's
// CALENDARSPEC_COMPONENTS_MAX does.
const maxComponents = 240

// allWeekdays is the weekday set of an expression that names none (or all).
const allWeekdays = 127

// component is one item of a list: start, or start..stop, each optionally
// /repeat. stop is -1 when open. Seconds are in microseconds.
type component struct{ start, stop, repeat int }

// Expr is a parsed calendar expression bound to the zone it is evaluated
// in. It is immutable and safe for concurrent use.
type Expr struct {
	src string
	loc *time.Location

	weekdays   int // bits 0-6 = Monday-Sunday, or -1 for every day
	year       []component
	month      []component
	day        []component
	hour       []component
	minute     []component
	usec       []component // the seconds, in microseconds
	endOfMonth bool        // the day counts back from the end of the month (~)

	utc  bool   // " UTC" at the end
	zone string // a zone named at the end, or ""
	dst  int    // -1, or 0/1 when the local zone's standard/daylight abbreviation ends the expression
}

// Error is the error Parse returns: the expression and what is wrong.
type Error struct {
	Expr   string
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("calendar expression %q: %s", e.Expr, e.Reason) }

// ErrNeverElapses is matched (errors.Is) by the error of [Expr.Check] for
// a well-formed expression that matches no time from now on.
var ErrNeverElapses = errors.New("never elapses")

type parser struct {
	src string
	e   *Expr
}

func (p *parser) fail(format string, args ...any) error {
	return &Error{Expr: p.src, Reason: fmt.Sprintf(format, args...)}
}

// Parse parses a calendar expression as systemd.time(7) defines it (and
// systemd 252 reads it), for a machine whose local zone is loc (nil means
// UTC). A zone named at the end of expr (" UTC", " Europe/Berlin") wins
// over loc. Errors are *Error.
func Parse(expr string, loc *time.Location) (*Expr, error) {
	if loc == nil {
		loc = time.UTC
	}
	p := &parser{src: expr, e: &Expr{src: expr, loc: loc, dst: -1}}
	if err := p.parse(expr); err != nil {
		return nil, err
	}
	return p.e, nil
}

func (p *parser) parse(s string) error {
	e := p.e
	if len(s) > 4096 {
		return p.fail("is longer than 4096 characters")
	}
	if strings.ContainsRune(s, 0) {
		return p.fail("contains a NUL character")
	}
	if hasSuffixFold(s, " UTC") {
		e.utc = true
		s = s[:len(s)-4]
	} else if j, rest := localAbbrev(s, e.loc); j >= 0 {
		// systemd reads the local zone's own abbreviations (CET, CEST
		// with TZ=Europe/Berlin) as "standard time" and "daylight time".
		e.dst = j
		s = rest
	} else if i := strings.LastIndexByte(s, ' '); i >= 0 {
		if name := s[i+1:]; zoneNameValid(name) {
			zl, err := time.LoadLocation(name)
			if err == nil {
				e.zone = name
				if name == "UTC" {
					e.utc = true
					e.zone = ""
				} else {
					e.loc = zl
				}
				s = s[:i]
			}
		}
	}
	if e.utc {
		e.loc = time.UTC
	}
	if s == "" {
		return p.fail("is empty")
	}
	if !p.shorthand(s) {
		rest, err := p.weekdayList(s)
		if err != nil {
			return err
		}
		rest, done, err := p.date(rest)
		if err != nil {
			return err
		}
		if !done {
			if err := p.timeOfDay(rest); err != nil {
				return err
			}
		}
	}
	e.normalize()
	return p.validate()
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// localAbbrev looks for loc's standard (0) or daylight (1) abbreviation
// after a space at the end of s, as systemd does with tzname[].
func localAbbrev(s string, loc *time.Location) (int, string) {
	names := zoneAbbrevs(loc)
	for j, name := range names {
		if name == "" || !hasSuffixFold(s, name) {
			continue
		}
		i := len(s) - len(name)
		if i == 0 || s[i-1] != ' ' {
			continue
		}
		return j, s[:i-1]
	}
	return -1, s
}

// zoneAbbrevs returns the abbreviations of loc's standard and daylight
// time under its current rules (glibc's tzname after tzset), or the
// standard one twice when loc has no daylight saving time.
func zoneAbbrevs(loc *time.Location) [2]string {
	if loc == time.UTC {
		return [2]string{"UTC", "UTC"}
	}
	var names [2]string
	year := time.Now().Year()
	for _, m := range []time.Month{time.January, time.July} {
		t := time.Date(year, m, 1, 12, 0, 0, 0, loc)
		name, _ := t.Zone()
		if t.IsDST() {
			names[1] = name
		} else {
			names[0] = name
		}
	}
	if names[1] == "" {
		names[1] = names[0]
	}
	if names[0] == "" {
		names[0] = names[1]
	}
	return names
}

// zoneNameValid is systemd's check of a zone name's form (timezone_is_valid):
// letters, digits and "/-_+" in parts that do not start with a dot.
func zoneNameValid(name string) bool {
	if name == "" || name == "Local" || len(name) > 255 || name[0] == '/' || name[len(name)-1] == '/' {
		return false
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" || part[0] == '.' || part[0] == '-' {
			return false
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/-_+.", r)) {
				return false
			}
		}
	}
	return true
}

var shorthands = map[string]func(e *Expr){
	"minutely": func(e *Expr) { e.usec = one(0) },
	"hourly":   func(e *Expr) { e.minute, e.usec = one(0), one(0) },
	"daily":    func(e *Expr) { e.hour, e.minute, e.usec = one(0), one(0), one(0) },
	"weekly": func(e *Expr) {
		e.weekdays = 1
		e.hour, e.minute, e.usec = one(0), one(0), one(0)
	},
	"monthly":  func(e *Expr) { e.day, e.hour, e.minute, e.usec = one(1), one(0), one(0), one(0) },
	"yearly":   yearly,
	"annually": yearly,
	"anually":  yearly, // accepted by systemd for compatibility
	"quarterly": func(e *Expr) {
		yearly(e)
		e.month = []component{{1, -1, 0}, {4, -1, 0}, {7, -1, 0}, {10, -1, 0}}
	},
	"semiannually":  semiannually,
	"semi-annually": semiannually,
	"biannually":    semiannually,
	"bi-annually":   semiannually,
}

func one(v int) []component { return []component{{v, -1, 0}} }

func yearly(e *Expr) {
	e.month, e.day, e.hour, e.minute, e.usec = one(1), one(1), one(0), one(0), one(0)
}

func semiannually(e *Expr) {
	yearly(e)
	e.month = []component{{1, -1, 0}, {7, -1, 0}}
}

func (p *parser) shorthand(s string) bool {
	f, ok := shorthands[strings.ToLower(s)]
	if ok {
		f(p.e)
	}
	return ok
}

var weekdayNames = []struct {
	name string
	nr   int
}{
	{"Monday", 0}, {"Mon", 0}, {"Tuesday", 1}, {"Tue", 1}, {"Wednesday", 2}, {"Wed", 2},
	{"Thursday", 3}, {"Thu", 3}, {"Friday", 4}, {"Fri", 4}, {"Saturday", 5}, {"Sat", 5},
	{"Sunday", 6}, {"Sun", 6},
}

// weekdayList reads an optional list of weekdays ("Mon..Fri", "Sat,Sun",
// "Mon-Wed") and returns what follows it.
func (p *parser) weekdayList(s string) (string, error) {
	e := p.e
	from := -1 // the start of an open range
	first := true
	for {
		nr := -1
		for _, w := range weekdayNames {
			if len(s) < len(w.name) || !strings.EqualFold(s[:len(w.name)], w.name) {
				continue
			}
			if len(s) > len(w.name) && !strings.ContainsRune("-., ", rune(s[len(w.name)])) {
				return "", p.fail("%q is not a weekday (use Mon, Tue, … or Monday, …)", wordAt(s))
			}
			nr = w.nr
			e.weekdays |= 1 << nr
			if from >= 0 {
				if from > nr {
					return "", p.fail("weekday range ends before it starts (write Mon..Fri, not Fri..Mon)")
				}
				for j := from + 1; j < nr; j++ {
					e.weekdays |= 1 << j
				}
			}
			s = s[len(w.name):]
			break
		}
		if nr < 0 {
			if first {
				return s, nil
			}
			return "", p.fail("%q is not a weekday", wordAt(s))
		}
		if s == "" {
			return s, nil
		}
		if s[0] == ' ' {
			return strings.TrimLeft(s, " "), nil
		}
		switch s[0] {
		case '.':
			if from >= 0 {
				return "", p.fail("a weekday range has one start and one end")
			}
			if len(s) < 2 || s[1] != '.' {
				return "", p.fail("weekday ranges are written with two dots: Mon..Fri")
			}
			from = nr
			s = s[2:]
		case '-':
			if from >= 0 {
				return "", p.fail("a weekday range has one start and one end")
			}
			from = nr
			s = s[1:]
		case ',':
			from = -1
			s = s[1:]
		}
		if s == "" || s[0] == ' ' {
			if from >= 0 {
				return "", p.fail("weekday range has no end")
			}
			return strings.TrimLeft(s, " "), nil
		}
		first = false
	}
}

func wordAt(s string) string {
	if i := strings.IndexAny(s, " ,.-"); i > 0 {
		return s[:i]
	}
	return s
}

// date reads an optional date: year-month-day or month-day, with ~ for
// days counted from the end of the month, or @SECONDS. done reports that
// the expression is complete (@SECONDS carries its own time).
func (p *parser) date(s string) (rest string, done bool, err error) {
	e := p.e
	if s == "" {
		return s, false, nil
	}
	if s[0] == '@' {
		return p.timestamp(s[1:])
	}
	first, t, err := p.chain(s, false, "date")
	if err != nil {
		return "", false, err
	}
	if t == "" || t[0] == ':' {
		return s, false, nil // a time, not a date
	}
	switch t[0] {
	case '~':
		e.endOfMonth = true
	case '-':
	default:
		return "", false, p.fail("unexpected %q in the date (dates are written YYYY-MM-DD, MM-DD, or with ~ for days before the end of the month)", t[:1])
	}
	second, t, err := p.chain(t[1:], false, "date")
	if err != nil {
		return "", false, err
	}
	if t == "" || t[0] == ' ' {
		e.month, e.day = first, second
		return strings.TrimLeft(t, " "), false, nil
	}
	if e.endOfMonth {
		return "", false, p.fail("~ separates the month and the day: *-02~03 is the third last day of February")
	}
	switch t[0] {
	case '~':
		e.endOfMonth = true
	case '-':
	default:
		return "", false, p.fail("unexpected %q in the date", t[:1])
	}
	third, t, err := p.chain(t[1:], false, "date")
	if err != nil {
		return "", false, err
	}
	if t != "" && t[0] != ' ' {
		return "", false, p.fail("unexpected %q after the date", t[:1])
	}
	e.year, e.month, e.day = first, second, third
	return strings.TrimLeft(t, " "), false, nil
}

func (p *parser) timestamp(s string) (string, bool, error) {
	n, rest, ok := digits(s)
	if !ok {
		return "", false, p.fail("@ is followed by seconds since the epoch")
	}
	if n > 1<<40 {
		return "", false, p.fail("@%d is out of range", n)
	}
	if rest != "" {
		return "", false, p.fail("nothing may follow @SECONDS but a time zone")
	}
	t := time.Unix(n, 0).UTC()
	e := p.e
	e.year, e.month, e.day = one(t.Year()), one(int(t.Month())), one(t.Day())
	e.hour, e.minute, e.usec = one(t.Hour()), one(t.Minute()), one(t.Second()*usecPerSec)
	e.utc, e.zone, e.dst, e.loc = true, "", -1, time.UTC
	return "", true, nil
}

// digits reads a decimal number as strtoul would after systemd checked
// that it starts with a digit.
func digits(s string) (int64, string, bool) {
	i := 0
	var n int64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		if n > (math.MaxInt64-9)/10 {
			n = math.MaxInt64 // saturate: reported as out of range
		} else {
			n = n*10 + int64(s[i]-'0')
		}
		i++
	}
	return n, s[i:], i > 0
}

// timeOfDay reads hour:minute[:second]; an empty s is 00:00:00.
func (p *parser) timeOfDay(s string) error {
	e := p.e
	if s == "" {
		e.hour, e.minute, e.usec = one(0), one(0), one(0)
		return nil
	}
	h, t, err := p.chain(s, false, "hour")
	if err != nil {
		return err
	}
	if t == "" || t[0] != ':' {
		return p.fail("the time is written HH:MM or HH:MM:SS (got %q)", s)
	}
	m, t, err := p.chain(t[1:], false, "minute")
	if err != nil {
		return err
	}
	e.hour, e.minute = h, m
	if t == "" {
		e.usec = one(0)
		return nil
	}
	if t[0] != ':' {
		return p.fail("unexpected %q after the minutes", t[:1])
	}
	sec, t, err := p.chain(t[1:], true, "second")
	if err != nil {
		return err
	}
	if t != "" {
		return p.fail("unexpected %q after the time", t)
	}
	e.usec = sec
	return nil
}

// chain reads "*" or a comma-separated list of components and returns it
// (nil for *) with what follows.
func (p *parser) chain(s string, usec bool, what string) ([]component, string, error) {
	if s != "" && s[0] == '*' {
		if len(s) > 1 && s[1] == '/' {
			return nil, "", p.fail("* takes no repetition in the %s: write 0/15 (or 00/15) for every 15th from 0", what)
		}
		if usec {
			return []component{{0, -1, usecPerSec}}, s[1:], nil
		}
		return nil, s[1:], nil
	}
	var out []component
	for {
		if len(out) > maxComponents {
			return nil, "", p.fail("a list has more than %d items", maxComponents)
		}
		c, rest, err := p.component(s, usec, what)
		if err != nil {
			return nil, "", err
		}
		out = append(out, c)
		if rest == "" || rest[0] != ',' {
			return out, rest, nil
		}
		s = rest[1:]
	}
}

func (p *parser) component(s string, usec bool, what string) (component, string, error) {
	start, s, err := p.decimal(s, usec, what)
	if err != nil {
		return component{}, "", err
	}
	c := component{start: start, stop: -1}
	if strings.HasPrefix(s, "..") {
		c.stop, s, err = p.decimal(s[2:], usec, what)
		if err != nil {
			return component{}, "", err
		}
		c.repeat = 1
		if usec {
			c.repeat = usecPerSec
		}
	}
	if s != "" && s[0] == '/' {
		c.repeat, s, err = p.decimal(s[1:], usec, what)
		if err != nil {
			return component{}, "", err
		}
		if c.repeat == 0 {
			return component{}, "", p.fail("a repetition of 0 never repeats (in the %s)", what)
		}
	} else if usec && c.stop >= 0 && c.start+c.repeat > c.stop {
		return component{}, "", p.fail("a range of seconds must span at least one second (or give a repetition)")
	}
	if s != "" && !strings.ContainsRune(" ,-~:", rune(s[0])) {
		return component{}, "", p.fail("unexpected %q in the %s", s[:1], what)
	}
	return c, s, nil
}

// decimal reads a number; for seconds (usec) it may have a fraction, kept
// to microseconds and rounded as systemd does.
func (p *parser) decimal(s string, usec bool, what string) (int, string, error) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		if s == "" {
			return 0, "", p.fail("a number is missing in the %s", what)
		}
		return 0, "", p.fail("expected a number in the %s, got %q", what, wordAt(s))
	}
	n, rest, _ := digits(s)
	if usec {
		if n > math.MaxInt32/usecPerSec+1 {
			return 0, "", p.fail("%d is out of range in the %s", n, what)
		}
		n *= usecPerSec
		if len(rest) > 0 && rest[0] == '.' && (len(rest) < 2 || rest[1] != '.') {
			rest = rest[1:]
			frac, used := 0, 0
			for ; used < 6 && used < len(rest) && rest[used] >= '0' && rest[used] <= '9'; used++ {
				frac = frac*10 + int(rest[used]-'0')
			}
			if used == 0 {
				return 0, "", p.fail("a decimal point must be followed by digits (in the %s)", what)
			}
			for i := used; i < 6; i++ {
				frac *= 10
			}
			rest = rest[used:]
			if used == 6 && rest != "" && rest[0] >= '5' && rest[0] <= '9' {
				frac++ // rounded to the microsecond
			}
			rest = strings.TrimLeft(rest, "0123456789")
			n += int64(frac)
		}
	}
	if n > math.MaxInt32 {
		return 0, "", p.fail("%s is out of range in the %s", strings.TrimSuffix(s, rest), what)
	}
	return int(n), rest, nil
}

// normalize is systemd's calendar_spec_normalize: two-digit years, every
// weekday meaning any day, ranges trimmed to their last repetition, and
// lists sorted without duplicates.
func (e *Expr) normalize() {
	if e.weekdays <= 0 || e.weekdays >= allWeekdays {
		e.weekdays = -1
	}
	if e.endOfMonth && e.day == nil {
		e.endOfMonth = false
	}
	for i := range e.year {
		c := &e.year[i]
		c.start = fixYear(c.start)
		c.stop = fixYear(c.stop)
	}
	for _, ch := range []*[]component{&e.year, &e.month, &e.day, &e.hour, &e.minute, &e.usec} {
		*ch = normalizeChain(*ch)
	}
}

func fixYear(y int) int {
	switch {
	case y >= 0 && y < 70:
		return y + 2000
	case y >= 70 && y < 100:
		return y + 1900
	}
	return y
}

func normalizeChain(ch []component) []component {
	if ch == nil {
		return nil
	}
	for i := range ch {
		c := &ch[i]
		if c.stop > c.start && c.repeat > 0 {
			c.stop -= (c.stop - c.start) % c.repeat
		}
		if (c.stop > c.start && c.repeat > 0 && c.start+c.repeat > c.stop) || c.start == c.stop {
			c.repeat, c.stop = 0, -1
		}
	}
	sort.Slice(ch, func(i, j int) bool {
		a, b := ch[i], ch[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.stop != b.stop {
			return a.stop < b.stop
		}
		return a.repeat < b.repeat
	})
	out := ch[:1]
	for _, c := range ch[1:] {
		if c != out[len(out)-1] {
			out = append(out, c)
		}
	}
	return out
}

// validate is systemd's calendar_spec_valid, with the reason spelled out.
func (p *parser) validate() error {
	e := p.e
	checks := []struct {
		chain    []component
		what     string
		from, to int
		eom      bool
	}{
		{e.year, "year", minYear, maxYear, false},
		{e.month, "month", 1, 12, false},
		{e.day, "day", 1, 31, e.endOfMonth},
		{e.hour, "hour", 0, 23, false},
		{e.minute, "minute", 0, 59, false},
		{e.usec, "second", 0, 60*usecPerSec - 1, false},
	}
	for _, k := range checks {
		to := k.to
		scale := 1
		if k.what == "second" {
			scale = usecPerSec
		}
		show := func(v int) string {
			if scale == 1 {
				return fmt.Sprint(v)
			}
			if v%scale == 0 {
				return fmt.Sprint(v / scale)
			}
			return fmt.Sprintf("%d.%06d", v/scale, v%scale)
		}
		for _, c := range k.chain {
			if k.eom {
				// At most 28 days from the end of the month; systemd
				// lowers the limit by 3 more for each further item.
				to -= 3
			}
			rng := fmt.Sprintf("%s to %s", show(k.from), show(to))
			if c.start < k.from || c.start > to {
				return p.fail("%s %s is out of range (%s)", k.what, show(c.start), rng)
			}
			if c.repeat > to-k.from {
				return p.fail("repetition /%s of the %s is larger than its range (%s)", show(c.repeat), k.what, rng)
			}
			if c.stop >= 0 {
				if c.stop < k.from || c.stop > to {
					return p.fail("%s %s is out of range (%s)", k.what, show(c.stop), rng)
				}
				if c.start+c.repeat > c.stop {
					return p.fail("%s range %s..%s ends before it starts", k.what, show(c.start), show(c.stop))
				}
			} else if k.eom && c.start-c.repeat < k.from {
				return p.fail("repetition /%s from day %s before the end of the month goes past the month's start", show(c.repeat), show(c.start))
			} else if !k.eom && c.start+c.repeat > to {
				return p.fail("%s %s/%s never repeats within %s", k.what, show(c.start), show(c.repeat), rng)
			}
		}
	}
	return nil
}

// Location returns the zone the expression is evaluated in: UTC or the
// zone named in it, else the zone given to Parse.
func (e *Expr) Location() *time.Location { return e.loc }

// Source returns the expression as written.
func (e *Expr) Source() string { return e.src }

// String returns the normalized form, as systemd-analyze calendar prints it.
func (e *Expr) String() string {
	var b strings.Builder
	if e.weekdays >= 0 {
		b.WriteString(formatWeekdays(e.weekdays))
		b.WriteByte(' ')
	}
	formatChain(&b, 4, e.year, false)
	b.WriteByte('-')
	formatChain(&b, 2, e.month, false)
	if e.endOfMonth {
		b.WriteByte('~')
	} else {
		b.WriteByte('-')
	}
	formatChain(&b, 2, e.day, false)
	b.WriteByte(' ')
	formatChain(&b, 2, e.hour, false)
	b.WriteByte(':')
	formatChain(&b, 2, e.minute, false)
	b.WriteByte(':')
	formatChain(&b, 2, e.usec, true)
	switch {
	case e.utc:
		b.WriteString(" UTC")
	case e.zone != "":
		b.WriteString(" " + e.zone)
	case e.dst >= 0:
		if n := zoneAbbrevs(e.loc)[e.dst]; n != "" {
			b.WriteString(" " + n)
		}
	}
	return b.String()
}

var dayAbbrevs = [7]string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// weekdayRuns returns the runs of consecutive days in bits, Monday first.
func weekdayRuns(bits int) [][2]int {
	var runs [][2]int
	for x := 0; x < 7; x++ {
		if bits&(1<<x) == 0 {
			continue
		}
		y := x
		for y+1 < 7 && bits&(1<<(y+1)) != 0 {
			y++
		}
		runs = append(runs, [2]int{x, y})
		x = y
	}
	return runs
}

func formatWeekdays(bits int) string {
	var parts []string
	for _, r := range weekdayRuns(bits) {
		switch r[1] - r[0] {
		case 0:
			parts = append(parts, dayAbbrevs[r[0]])
		case 1:
			parts = append(parts, dayAbbrevs[r[0]]+","+dayAbbrevs[r[1]])
		default:
			parts = append(parts, dayAbbrevs[r[0]]+".."+dayAbbrevs[r[1]])
		}
	}
	return strings.Join(parts, ",")
}

func formatChain(b *strings.Builder, width int, ch []component, usec bool) {
	d := 1
	if usec {
		d = usecPerSec
	}
	if ch == nil || usec && len(ch) == 1 && ch[0] == (component{0, -1, usecPerSec}) {
		b.WriteByte('*')
		return
	}
	for i, c := range ch {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, "%0*d", width, c.start/d)
		if c.start%d > 0 {
			fmt.Fprintf(b, ".%06d", c.start%d)
		}
		if c.stop > 0 {
			fmt.Fprintf(b, "..%0*d", width, c.stop/d)
		}
		if c.stop%d > 0 {
			fmt.Fprintf(b, ".%06d", c.stop%d)
		}
		if c.repeat > 0 && !(c.stop > 0 && c.repeat == d) {
			fmt.Fprintf(b, "/%d", c.repeat/d)
		}
		if c.repeat%d > 0 {
			fmt.Fprintf(b, ".%06d", c.repeat%d)
		}
	}
}
