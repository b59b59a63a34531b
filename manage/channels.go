package manage

import (
	"encoding/json"
	"fmt"

	"github.com/vigilhq/vigil/notifiers/kinds"
)

// ConfigError is a channel config, given by a person, that its kind does
// not accept.
type ConfigError struct {
	// Err names the key at fault, "key: message", one per line.
	Err error
	// Forgotten lists the stored write-only keys the change forgot
	// because it changed where the channel sends (often why a required
	// key is missing).
	Forgotten []string
	// Note says so in a sentence ("" when nothing was forgotten).
	Note string
}

func (e *ConfigError) Error() string {
	if e.Note == "" {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v (%s)", e.Err, e.Note)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ChannelConfig is the config a person's change makes of a channel's
// stored one: incoming replaces stored, except that a write-only key it
// leaves out keeps its stored value, unless incoming changes where the
// channel sends (its URL, channel, chat or region: see kinds); then every
// write-only key it does not give again is forgotten, and listed in
// forgotten, so that no secret follows a channel to an address its owner
// did not choose. The result is validated: a config the kind refuses is a
// *ConfigError.
func ChannelConfig(kind string, stored, incoming json.RawMessage) (merged json.RawMessage, forgotten []string, err error) {
	k, err := kinds.Lookup(kind)
	if err != nil {
		return nil, nil, err
	}
	merged, forgotten, err = k.KeepSecrets(stored, incoming)
	if err != nil {
		return nil, nil, &ConfigError{Err: err} // incoming is not a JSON object
	}
	if err := k.Validate(merged); err != nil {
		return nil, nil, &ConfigError{Err: err, Forgotten: forgotten, Note: kinds.ForgottenNote(k, forgotten)}
	}
	return merged, forgotten, nil
}
