package kinds

import (
	"encoding/json"
	"strings"

	"github.com/vigilhq/vigil/notifiers"
)

// RedactURLs returns a redacted config (see [Kind.Redact]) with every URL
// in it cut to its scheme and host ([notifiers.RedactURL]), for readers
// that may see a channel but not reach or impersonate its receiver: a
// webhook's URL often carries the receiver's token in its path or query.
// Invalid JSON gives {}.
func RedactURLs(raw json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return json.RawMessage(`{}`)
	}
	out, err := json.Marshal(redactURLValue(v))
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}

func redactURLValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = redactURLValue(e)
		}
	case []any:
		for i, e := range v {
			v[i] = redactURLValue(e)
		}
	case string:
		if strings.Contains(v, "://") {
			return notifiers.RedactURL(v)
		}
	}
	return v
}
