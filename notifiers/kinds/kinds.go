// Package kinds is the registry of channel kinds: it turns a channel's kind
// name and JSON config (PROTOCOL §2) into a validated [notifiers.Notifier],
// and strips write-only secrets from a config before the API returns it.
// It imports every kind; package notifiers imports none.
//
// # Write-only keys
//
// A config key is write-only when its value alone lets someone post to the
// channel, or read what is posted. The API stores such keys and never
// returns them ([Kind.Redact]); on an update, a write-only key that the
// client leaves out keeps its stored value ([Kind.KeepSecrets]), unless the
// update changes where the channel sends.
//
//	slack      webhook_url, token   (a webhook URL is its own credential)
//	email      none
//	webhook    secret, headers      (headers usually carry credentials;
//	                                 url stays visible: put credentials in
//	                                 headers, not in the URL)
//	pagerduty  routing_key
//	discord    webhook_url
//	teams      webhook_url
//	opsgenie   api_key
//	telegram   bot_token
//	ntfy       url, token           (on a public server the topic is the
//	                                 only secret: anyone who knows it can
//	                                 read and post)
//
// # Destination keys
//
// A destination key says where the channel sends. An update that changes
// one forgets every write-only key it does not give again, so that a
// secret never follows its channel to an address its owner did not choose
// (otherwise anyone allowed to edit a channel could point it at their own
// server and read its Authorization header from the next test):
//
//	slack      webhook_url, channel
//	email      to                   (no write-only keys)
//	webhook    url
//	pagerduty  routing_key          (itself the only secret)
//	discord    webhook_url
//	teams      webhook_url
//	opsgenie   region               (the API host)
//	telegram   chat_id
//	ntfy       url
package kinds

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/vigilhq/vigil/notifiers"
	"github.com/vigilhq/vigil/notifiers/discord"
	"github.com/vigilhq/vigil/notifiers/email"
	"github.com/vigilhq/vigil/notifiers/ntfy"
	"github.com/vigilhq/vigil/notifiers/opsgenie"
	"github.com/vigilhq/vigil/notifiers/pagerduty"
	"github.com/vigilhq/vigil/notifiers/slack"
	"github.com/vigilhq/vigil/notifiers/teams"
	"github.com/vigilhq/vigil/notifiers/telegram"
	"github.com/vigilhq/vigil/notifiers/webhook"
)

// Deps are what a notifier needs from the running server.
type Deps struct {
	// HTTPClient makes every HTTP request. Build one with
	// notifiers.NewHTTPClient, honouring VIGIL_ALLOW_PRIVATE_TARGETS, and
	// share it. When nil, each notifier gets its own client that refuses
	// private addresses unless AllowPrivate is set.
	HTTPClient *http.Client
	// AllowPrivate is used only when HTTPClient is nil.
	AllowPrivate bool
	// SMTP is the operator's mail server; email channels fail to build
	// without it.
	SMTP *email.SMTPConfig
	// Logger receives debug records of sends; nil discards them.
	Logger *slog.Logger
	// Timeout bounds one attempt; zero means
	// notifiers.AttemptTimeoutDefault.
	Timeout time.Duration
}

func (d Deps) options() []notifiers.Option {
	client := d.HTTPClient
	if client == nil {
		client = notifiers.NewHTTPClient(notifiers.HTTPClientOptions{AllowPrivate: d.AllowPrivate})
	}
	return []notifiers.Option{
		notifiers.WithHTTPClient(client),
		notifiers.WithLogger(d.Logger),
		notifiers.WithTimeout(d.Timeout),
	}
}

// Kind is one channel kind.
type Kind interface {
	// Name is the kind as the API spells it: "slack", "webhook", ...
	Name() string
	// Keys lists the config keys the kind accepts.
	Keys() []string
	// SecretKeys lists the write-only config keys.
	SecretKeys() []string
	// DestinationKeys lists the config keys that say where the channel
	// sends.
	DestinationKeys() []string
	// Validate decodes raw strictly (unknown keys and wrong types are
	// errors) and checks it. Every message names the key at fault and
	// never repeats a secret.
	Validate(raw json.RawMessage) error
	// New validates raw and builds the notifier.
	New(raw json.RawMessage, deps Deps) (notifiers.Notifier, error)
	// Redact returns raw without its write-only keys, for the API to
	// return. Invalid JSON gives {}.
	Redact(raw json.RawMessage) json.RawMessage
	// KeepSecrets returns incoming with every write-only key that it
	// leaves out copied from stored: an update that does not repeat a
	// secret keeps it. A key set to null in incoming is removed. When the
	// result sends somewhere else than stored (a destination key differs),
	// no secret is copied: forgotten lists, in SecretKeys order, the
	// stored write-only keys dropped that way.
	KeepSecrets(stored, incoming json.RawMessage) (merged json.RawMessage, forgotten []string, err error)
}

// kind implements Kind for a config type C.
type kind[C any] struct {
	name         string
	secrets      []string
	destinations []string
	validate     func(*C) error
	build        func(C, Deps) (notifiers.Notifier, error)
}

// All returns every kind, in the order PROTOCOL §2 lists them.
func All() []Kind {
	return []Kind{
		&kind[slack.Config]{
			name: slack.Kind, secrets: []string{"webhook_url", "token"}, destinations: []string{"webhook_url", "channel"},
			validate: (*slack.Config).Validate,
			build: func(c slack.Config, d Deps) (notifiers.Notifier, error) {
				return slack.New(c, d.options()...)
			},
		},
		&kind[email.Config]{
			name: email.Kind, destinations: []string{"to"},
			validate: (*email.Config).Validate,
			build: func(c email.Config, d Deps) (notifiers.Notifier, error) {
				if d.SMTP == nil {
					return nil, errors.New("email: no SMTP server is configured on this Vigil")
				}
				return email.New(c, *d.SMTP, d.options()...)
			},
		},
		&kind[webhook.Config]{
			name: webhook.Kind, secrets: []string{"secret", "headers"}, destinations: []string{"url"},
			validate: (*webhook.Config).Validate,
			build: func(c webhook.Config, d Deps) (notifiers.Notifier, error) {
				return webhook.New(c, d.options()...)
			},
		},
		&kind[pagerduty.Config]{
			name: pagerduty.Kind, secrets: []string{"routing_key"}, destinations: []string{"routing_key"},
			validate: (*pagerduty.Config).Validate,
			build: func(c pagerduty.Config, d Deps) (notifiers.Notifier, error) {
				return pagerduty.New(c, d.options()...)
			},
		},
		&kind[discord.Config]{
			name: discord.Kind, secrets: []string{"webhook_url"}, destinations: []string{"webhook_url"},
			validate: (*discord.Config).Validate,
			build: func(c discord.Config, d Deps) (notifiers.Notifier, error) {
				return discord.New(c, d.options()...)
			},
		},
		&kind[teams.Config]{
			name: teams.Kind, secrets: []string{"webhook_url"}, destinations: []string{"webhook_url"},
			validate: (*teams.Config).Validate,
			build: func(c teams.Config, d Deps) (notifiers.Notifier, error) {
				return teams.New(c, d.options()...)
			},
		},
		&kind[opsgenie.Config]{
			name: opsgenie.Kind, secrets: []string{"api_key"}, destinations: []string{"region"},
			validate: (*opsgenie.Config).Validate,
			build: func(c opsgenie.Config, d Deps) (notifiers.Notifier, error) {
				return opsgenie.New(c, d.options()...)
			},
		},
		&kind[telegram.Config]{
			name: telegram.Kind, secrets: []string{"bot_token"}, destinations: []string{"chat_id"},
			validate: (*telegram.Config).Validate,
			build: func(c telegram.Config, d Deps) (notifiers.Notifier, error) {
				return telegram.New(c, d.options()...)
			},
		},
		&kind[ntfy.Config]{
			name: ntfy.Kind, secrets: []string{"url", "token"}, destinations: []string{"url"},
			validate: (*ntfy.Config).Validate,
			build: func(c ntfy.Config, d Deps) (notifiers.Notifier, error) {
				return ntfy.New(c, d.options()...)
			},
		},
	}
}

// Names returns the kind names, in the order of [All].
func Names() []string {
	var names []string
	for _, k := range All() {
		names = append(names, k.Name())
	}
	return names
}

// Lookup returns the kind called name, or an error that lists the kinds
// there are.
func Lookup(name string) (Kind, error) {
	for _, k := range All() {
		if k.Name() == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("kind: %q is not one of %s", name, strings.Join(Names(), ", "))
}

// Validate is Lookup(name) then Validate(raw).
func Validate(name string, raw json.RawMessage) error {
	k, err := Lookup(name)
	if err != nil {
		return err
	}
	return k.Validate(raw)
}

// New is Lookup(name) then New(raw, deps).
func New(name string, raw json.RawMessage, deps Deps) (notifiers.Notifier, error) {
	k, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return k.New(raw, deps)
}

// Redact is Lookup(name) then Redact(raw). An unknown kind gives {}.
func Redact(name string, raw json.RawMessage) json.RawMessage {
	k, err := Lookup(name)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return k.Redact(raw)
}

func (k *kind[C]) Name() string         { return k.name }
func (k *kind[C]) SecretKeys() []string { return slices.Clone(k.secrets) }

func (k *kind[C]) DestinationKeys() []string { return slices.Clone(k.destinations) }

func (k *kind[C]) Keys() []string {
	var keys []string
	t := reflect.TypeFor[C]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// field returns the struct field of C whose JSON name is key.
func (k *kind[C]) field(key string) (reflect.StructField, bool) {
	t := reflect.TypeFor[C]()
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name == key {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func (k *kind[C]) decode(raw json.RawMessage) (C, error) {
	var cfg C
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return cfg, k.decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cfg, errors.New("config: must be one JSON object")
	}
	return cfg, nil
}

// decodeError rewrites encoding/json's messages into ones that name the key.
func (k *kind[C]) decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		if typeErr.Field == "" {
			return errors.New("config: must be a JSON object")
		}
		key, _, _ := strings.Cut(typeErr.Field, ".")
		t := typeErr.Type
		if f, ok := k.field(key); ok {
			t = f.Type // describe the key's type, not that of an element
		}
		return fmt.Errorf("%s: must be %s", key, describe(t))
	case errors.As(err, &syntaxErr), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("config: is not valid JSON")
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("%s: is not a config key of %s (keys: %s)", strings.Trim(field, `"`), k.name, strings.Join(k.Keys(), ", "))
	}
	// Errors from a field's own UnmarshalJSON (telegram's chat_id) name
	// their key already.
	return err
}

func describe(t reflect.Type) string {
	switch {
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return "a list of strings"
	case t.Kind() == reflect.Map && t.Elem().Kind() == reflect.String:
		return "an object whose values are strings"
	case t.Kind() == reflect.Struct:
		return "an object"
	}
	return "a " + t.Kind().String()
}

func (k *kind[C]) Validate(raw json.RawMessage) error {
	cfg, err := k.decode(raw)
	if err != nil {
		return err
	}
	return k.validate(&cfg)
}

func (k *kind[C]) New(raw json.RawMessage, deps Deps) (notifiers.Notifier, error) {
	cfg, err := k.decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", k.name, err)
	}
	return k.build(cfg, deps)
}

func (k *kind[C]) Redact(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{}`)
	}
	for _, key := range k.secrets {
		delete(m, key)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return out
}

func (k *kind[C]) KeepSecrets(stored, incoming json.RawMessage) (json.RawMessage, []string, error) {
	var in, old map[string]json.RawMessage
	if err := json.Unmarshal(incoming, &in); err != nil || in == nil {
		return nil, nil, errors.New("config: must be a JSON object")
	}
	if len(bytes.TrimSpace(stored)) > 0 {
		if err := json.Unmarshal(stored, &old); err != nil {
			return nil, nil, fmt.Errorf("decode stored %s config: %w", k.name, err)
		}
	}
	moved := k.movesAway(old, in)
	var forgotten []string
	for _, key := range k.secrets {
		v, ok := old[key]
		if value, present := in[key]; present {
			if bytes.Equal(bytes.TrimSpace(value), []byte("null")) {
				delete(in, key)
			}
			continue
		}
		if !ok {
			continue
		}
		if moved {
			forgotten = append(forgotten, key)
			continue
		}
		in[key] = v
	}
	out, err := json.Marshal(in)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s config: %w", k.name, err)
	}
	return out, forgotten, nil
}

// movesAway reports whether incoming sends somewhere else than stored: a
// destination key that incoming leaves out, and that is not write-only,
// counts as changed (a PATCH config replaces the stored one); null counts
// as left out. Values are compared decoded into C, so that 123 and "123"
// are one Telegram chat.
func (k *kind[C]) movesAway(stored, incoming map[string]json.RawMessage) bool {
	for _, key := range k.destinations {
		newVal, present := incoming[key]
		oldVal, had := stored[key]
		if !present && slices.Contains(k.secrets, key) {
			continue // kept from stored
		}
		if present && bytes.Equal(bytes.TrimSpace(newVal), []byte("null")) {
			present = false
		}
		if present != had || !k.sameValue(key, oldVal, newVal) {
			return true
		}
	}
	return false
}

// sameValue reports whether a and b decode to equal values of C's key.
func (k *kind[C]) sameValue(key string, a, b json.RawMessage) bool {
	f, ok := k.field(key)
	if !ok {
		return bytes.Equal(a, b)
	}
	x, y := reflect.New(f.Type), reflect.New(f.Type)
	if json.Unmarshal(a, x.Interface()) != nil || json.Unmarshal(b, y.Interface()) != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return reflect.DeepEqual(x.Elem().Interface(), y.Elem().Interface())
}

// ForgottenNote says in a sentence which write-only keys an update forgot
// because it changed where the channel sends (see [Kind.KeepSecrets]), or
// "" when it forgot none.
func ForgottenNote(k Kind, forgotten []string) string {
	switch len(forgotten) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("the stored %s was forgotten because %s changed: give it again to keep it",
			forgotten[0], joinWith(k.DestinationKeys(), "or"))
	}
	return fmt.Sprintf("the stored %s were forgotten because %s changed: give them again to keep them",
		joinWith(forgotten, "and"), joinWith(k.DestinationKeys(), "or"))
}

// joinWith joins s as a list in a sentence: "a, b and c".
func joinWith(s []string, conj string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " " + conj + " " + s[len(s)-1]
}
