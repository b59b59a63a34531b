package plan

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// EncodeState returns the JSON a store keeps of s, with every instant in
// UTC.
func EncodeState(s monitors.State) ([]byte, error) {
	s.LastPingAt = s.LastPingAt.UTC()
	s.LastSuccessAt = s.LastSuccessAt.UTC()
	s.Expected = s.Expected.UTC()
	s.DeadlineOcc = s.DeadlineOcc.UTC()
	if s.Retry != nil {
		r := *s.Retry
		r.At, r.FailAt = r.At.UTC(), r.FailAt.UTC()
		s.Retry = &r
	}
	if len(s.Runs) > 0 {
		runs := make([]monitors.OpenRun, len(s.Runs))
		for i, r := range s.Runs {
			r.StartedAt = r.StartedAt.UTC()
			runs[i] = r
		}
		s.Runs = runs
	}
	if len(s.Open) > 0 {
		open := make(map[monitors.IncidentKind]time.Time, len(s.Open))
		for k, v := range s.Open {
			open[k] = v.UTC()
		}
		s.Open = open
	}
	if s.Hold != nil {
		h := *s.Hold
		h.OutageEnd, h.Until = h.OutageEnd.UTC(), h.Until.UTC()
		s.Hold = &h
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	return b, nil
}

// DecodeMonitorJSON decodes a monitor's stored state and retry policy
// (nil or empty: none) into m.
func DecodeMonitorJSON(m *monitors.Monitor, state, retry []byte) error {
	if len(retry) > 0 {
		m.RetryPolicy = new(monitors.RetryPolicy)
		if err := json.Unmarshal(retry, m.RetryPolicy); err != nil {
			return fmt.Errorf("decode retry policy of monitor %s: %w", m.ID, err)
		}
	}
	if err := json.Unmarshal(state, &m.State); err != nil {
		return fmt.Errorf("monitor %s: decode state: %w", m.ID, err)
	}
	return nil
}

// EncodeRetryPolicy returns the JSON of p, nil for none.
func EncodeRetryPolicy(p *monitors.RetryPolicy) ([]byte, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode retry policy: %w", err)
	}
	return b, nil
}
