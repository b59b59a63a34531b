package plan

import (
	"encoding/json"
	"fmt"

	"github.com/vigilhq/vigil/monitors"
)

// EncodeState returns the JSON a store keeps of s, with every instant in
// UTC.
func EncodeState(s monitors.State) ([]byte, error) {
	b, err := json.Marshal(s.UTC())
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
