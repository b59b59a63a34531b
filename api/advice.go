package api

import (
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// advise returns a monitor's retry chain in seconds (nil when unknown) and
// the warnings its settings call for. The rules are monitors.Adviser's,
// the same for the dashboard, the SDK and vigil run.
func (h *Handler) advise(m *monitors.Monitor, now time.Time) (*int64, []string) {
	var chainSecs *int64
	if chain, ok := monitors.RetryChain(m.RetryPolicy); ok {
		secs := int64(chain / time.Second)
		chainSecs = &secs
	}
	return chainSecs, monitors.AdviceStrings(h.adviser.Advise(m, now))
}
