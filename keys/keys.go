// Package keys makes and checks Vigil's secrets: API keys (shown once,
// stored hashed), monitor ping keys (UUIDs, as Healthchecks.io uses, so that
// monitors moved over keep their URLs) and project ping keys.
package keys

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/google/uuid"
)

// APIKeyPrefix starts every API key, so that a leaked key is recognisable
// by secret scanners and people alike.
const APIKeyPrefix = "vk_"

// NewAPIKey returns a new random API key (256 bits), a short prefix to show
// in lists, and the hash to store.
func NewAPIKey() (key, prefix, hash string) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	key = APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
	return key, key[:len(APIKeyPrefix)+6], HashAPIKey(key)
}

// HashAPIKey returns the stored form of key: hex SHA-256. A fast hash is
// right here: the key has 256 random bits, so it cannot be guessed.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(key)))
	return hex.EncodeToString(sum[:])
}

// NewPingKey returns a monitor ping key: a random version-4 UUID.
func NewPingKey() string { return uuid.NewString() }

// NewProjectPingKey returns a project ping key: 128 random bits, URL-safe.
func NewProjectPingKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewSetupToken returns the one-time token of /setup?token=: 256 random
// bits, URL-safe. It lives in the memory of the server that printed it.
func NewSetupToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// UniqueKey returns a monitor's unique key: 40 hex characters derived from
// its ID, stable for the monitor's life (a new ping key keeps it), and no
// secret. Read-only API keys get it where the others get ping keys, as
// Healthchecks.io's read-only keys get unique_key.
func UniqueKey(monitorID string) string {
	sum := sha256.Sum256([]byte("vigil unique key\x00" + monitorID))
	return hex.EncodeToString(sum[:20])
}

// NewID returns a new random ID for a row.
func NewID() string { return uuid.NewString() }

// IsPingKey reports whether s has the form of a monitor ping key (a UUID).
func IsPingKey(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
