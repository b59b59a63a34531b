package secrets

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Message authentication with the keys of the key file: a signed link
// (such as a notification's "snooze 1 h") carries a MAC that only this
// Vigil's key file can make. Each purpose has a key of its own, derived
// from the file's key (HMAC-SHA256 of the purpose under it), so that a MAC
// made for one purpose is worth nothing for another, and none is worth
// anything for sealing. A MAC names the key that made it, so that links
// made before a rotation still check while the file holds the old key.

// ErrBadMAC is returned by [Keyring.Verify] for a MAC that does not check.
var ErrBadMAC = errors.New("secrets: the signature does not match")

// macKey derives the MAC key of purpose from k.
func (k *key) macKey(purpose string) []byte {
	h := hmac.New(sha256.New, k.raw)
	h.Write([]byte("vigil mac key\x00" + purpose))
	return h.Sum(nil)
}

func (k *key) mac(purpose string, msg []byte) []byte {
	h := hmac.New(sha256.New, k.macKey(purpose))
	h.Write(msg)
	return h.Sum(nil)
}

// Sign returns a MAC of msg for purpose with the current key, as
// "<key id>.<HMAC-SHA256, base64url>": short and safe in a URL.
func (k *Keyring) Sign(purpose string, msg []byte) string {
	k.mu.Lock()
	_ = k.refresh() // on a failed reload, the keys loaded last still sign
	cur := k.keys[0]
	k.mu.Unlock()
	return cur.id + "." + base64.RawURLEncoding.EncodeToString(cur.mac(purpose, msg))
}

// Verify checks a MAC that Sign made of msg for purpose, with the key it
// names (reloading the file once for a key it does not hold). A MAC that
// does not check is ErrBadMAC; one of a key the file does not hold is
// ErrUnknownKey.
func (k *Keyring) Verify(purpose string, msg []byte, sig string) error {
	id, mac64, ok := strings.Cut(sig, ".")
	if !ok || !validID(id) {
		return ErrBadMAC
	}
	got, err := base64.RawURLEncoding.Strict().DecodeString(mac64) // one spelling per MAC
	if err != nil || len(got) != sha256.Size {
		return ErrBadMAC
	}
	k.mu.Lock()
	c := k.find(id)
	if c == nil {
		_ = k.refresh()
		c = k.find(id)
	}
	k.mu.Unlock()
	if c == nil {
		return fmt.Errorf("%w: key %s", ErrUnknownKey, id)
	}
	if !hmac.Equal(got, c.mac(purpose, msg)) {
		return ErrBadMAC
	}
	return nil
}
