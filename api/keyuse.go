package api

import (
	"context"
	"sync"
	"time"

	"github.com/vigilhq/vigil/monitors"
)

// Recording when API keys are used (last_used_at).
const (
	// KeyUseInterval is the least time between two writes of one key's
	// last use: a busy key costs one write a minute, not one a request.
	KeyUseInterval = time.Minute
	// keyUseWriters bounds the writes in flight; a use that finds them
	// all busy is not recorded (the next one, a minute on, will be).
	keyUseWriters = 4
	keyUseTimeout = 5 * time.Second
)

// keyUse records API key uses off the request's path: the request never
// waits for the write.
type keyUse struct {
	mu   sync.Mutex
	last map[string]time.Time // key ID → the use last recorded
	sem  chan struct{}
}

func newKeyUse() *keyUse {
	return &keyUse{last: make(map[string]time.Time), sem: make(chan struct{}, keyUseWriters)}
}

// due reports whether a use of key at now should be written, and marks it
// written if so.
func (u *keyUse) due(key *monitors.APIKey, now time.Time) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	last, ok := u.last[key.ID]
	if !ok && key.LastUsedAt != nil {
		last, ok = *key.LastUsedAt, true
	}
	if ok && now.Sub(last) < KeyUseInterval {
		return false
	}
	if len(u.last) > 100_000 {
		clear(u.last) // bounded memory; the store ignores an older write
	}
	u.last[key.ID] = now
	return true
}

// touch records, at most once a KeyUseInterval per key, that key was used
// at now, in the background.
func (h *Handler) touch(key *monitors.APIKey) {
	now := h.now()
	if !h.keyUse.due(key, now) {
		return
	}
	select {
	case h.keyUse.sem <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-h.keyUse.sem }()
		ctx, cancel := context.WithTimeout(context.Background(), keyUseTimeout)
		defer cancel()
		if err := h.store.APIKeyTouch(ctx, &monitors.APIKeyTouchParams{ID: key.ID, At: now}); err != nil {
			h.log.Warn("record API key use", "key_prefix", key.Prefix, "err", err)
		}
	}()
}
