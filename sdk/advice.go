package sdk

import "sync"

// WarningHeader is the header of a ping's answer in which Vigil sends, one
// per header line, its advice about the monitor's settings: the same
// strings as the "warnings" of a declared monitor.
const WarningHeader = "Vigil-Warning"

// adviceLog remembers which warnings of which monitor were logged, so each
// is logged once per process however often it comes back (every
// declaration and every ping repeat it).
type adviceLog struct {
	mu   sync.Mutex
	seen map[[2]string]bool // {monitor's address, warning}
}

// warn logs each of warnings about the monitor at addr (named name in the
// log) that was not logged before.
func (c *Client) warn(addr, name string, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	l := &c.advice
	l.mu.Lock()
	var fresh []string
	for _, w := range warnings {
		k := [2]string{addr, w}
		if !l.seen[k] {
			if l.seen == nil {
				l.seen = map[[2]string]bool{}
			}
			l.seen[k] = true
			fresh = append(fresh, w)
		}
	}
	l.mu.Unlock()
	for _, w := range fresh {
		c.logger.Warn("vigil: the monitor's settings call for a change", "monitor", name, "warning", w)
	}
}

// address is m's identity for adviceLog: the part of its ping URL that
// names it.
func (m Monitor) address() string {
	switch {
	case m.pingURL != "":
		return "url " + m.pingURL
	case m.key != "":
		return "key " + m.key
	}
	return "slug " + m.projectKey + "/" + m.slug
}
