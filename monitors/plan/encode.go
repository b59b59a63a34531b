package plan

import (
	"encoding/json"
	"fmt"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/vigilhq/vigil/monitors"
)

// EncodeState returns the JSON a store keeps of s, with every instant in
// UTC.
func EncodeState(s monitors.State) ([]byte, error) {
	b, err := monitors.AppendStateJSON(make([]byte, 0, 256), &s)
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
	if err := monitors.DecodeState(state, &m.State); err != nil {
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

// listDecodeCacheSize bounds the decoded states (and retry policies) that
// lists keep: a few MB.
const listDecodeCacheSize = 16384

// listDecoded keeps decoded states and retry policies by their JSON, for
// lists of monitors: a dashboard refreshes the list of a project every few
// seconds, and most of its monitors' states have not changed since (a
// state's JSON changes with every ping). Decoding JSON was most of the
// cost of a list of thousands of monitors.
var listDecoded struct {
	states   *lru.Cache[string, monitors.State]
	policies *lru.Cache[string, monitors.RetryPolicy]
}

func init() {
	var err error
	if listDecoded.states, err = lru.New[string, monitors.State](listDecodeCacheSize); err != nil {
		panic(err) // only for a size below one
	}
	if listDecoded.policies, err = lru.New[string, monitors.RetryPolicy](listDecodeCacheSize); err != nil {
		panic(err)
	}
}

// decodeListed is DecodeMonitorJSON through the list cache. What it
// puts in m is a copy of what the cache keeps (State.Clone), so that a
// caller changing m changes nothing else.
func decodeListed(m *monitors.Monitor, state, retry []byte) error {
	if len(retry) > 0 {
		if p, ok := listDecoded.policies.Get(string(retry)); ok {
			p.MaxDelaysSeconds = slices.Clone(p.MaxDelaysSeconds)
			m.RetryPolicy = &p
		} else {
			m.RetryPolicy = new(monitors.RetryPolicy)
			if err := json.Unmarshal(retry, m.RetryPolicy); err != nil {
				return fmt.Errorf("decode retry policy of monitor %s: %w", m.ID, err)
			}
			kept := *m.RetryPolicy
			kept.MaxDelaysSeconds = slices.Clone(kept.MaxDelaysSeconds)
			listDecoded.policies.Add(string(retry), kept)
		}
	}
	if s, ok := listDecoded.states.Get(string(state)); ok {
		m.State = s.Clone()
		return nil
	}
	if err := monitors.DecodeState(state, &m.State); err != nil {
		return fmt.Errorf("monitor %s: decode state: %w", m.ID, err)
	}
	listDecoded.states.Add(string(state), m.State.Clone())
	return nil
}
