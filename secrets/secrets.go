// Package secrets encrypts channel secrets at rest, with the keys of the
// secret key file (VIGIL_SECRET_KEY_FILE).
//
// # The key file
//
// A key file is text: comment lines start with #, and each other line is
// one key, its ID and its 32 bytes in standard base64:
//
//	# Vigil secret key file ...
//	k3f9a1c2e Jx0...=
//
// The first key seals; every key opens. A sealed value names the key that
// sealed it (v1:<key id>:<nonce and AES-256-GCM ciphertext, base64url>), so
// that a file may hold the new key and the old ones while a rotation
// re-encrypts what the old ones sealed (see [AddKey], [DropOldKeys]).
//
// # Replicas
//
// Every replica reads the same file. A [Keyring] notices when the file
// changes (another process rotated it): before it seals, it checks the
// file's modification time and size and reloads it; when it meets a key ID
// it does not hold, it reloads the file once before it gives up. So a
// rotation needs no restart: the replicas seal under the new key from the
// moment the file has it, and open what the rotation re-encrypted.
package secrets

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// version prefixes every sealed value.
const version = "v1"

// Errors of opening a sealed value. Both mean that the key file is not the
// one the value was sealed with (or has lost the key since).
var (
	// ErrUnknownKey is returned by [Keyring.Open] for a value sealed with
	// a key the file does not hold.
	ErrUnknownKey = errors.New("secrets: sealed with a key the key file does not hold")
	// ErrWrongKey is returned by [Keyring.Open] when the key of the
	// value's key ID does not open it: the file holds another key of that
	// name, or the value was changed.
	ErrWrongKey = errors.New("secrets: the key file's key does not open the sealed value")
)

// key is one key of a file.
type key struct {
	id   string
	raw  []byte
	aead cipher.AEAD
}

func newKey(id string, raw []byte) (*key, error) {
	if len(raw) != KeySize {
		return nil, fmt.Errorf("key %s: is %d bytes, not %d", id, len(raw), KeySize)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", id, err)
	}
	return &key{id: id, raw: raw, aead: aead}, nil
}

// generate makes a new random key with a new random ID.
func generate() *key {
	raw := make([]byte, KeySize)
	_, _ = rand.Read(raw) // crypto/rand.Read never fails
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	k, err := newKey("k"+hex.EncodeToString(id), raw)
	if err != nil {
		panic(err) // unreachable: the key is KeySize bytes
	}
	return k
}

func validID(id string) bool {
	if id == "" || len(id) > 32 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// parse reads a key file's text.
func parse(path string, data []byte) ([]*key, error) {
	var keys []*key
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			return nil, fmt.Errorf("key file %s, line %d: want a key ID and a base64 key separated by a space", path, n)
		}
		id := fields[0]
		if !validID(id) {
			return nil, fmt.Errorf("key file %s, line %d: key ID %q: use 1 to 32 of a-z, 0-9, - and _", path, n, id)
		}
		if seen[id] {
			return nil, fmt.Errorf("key file %s, line %d: key ID %s appears twice", path, n, id)
		}
		raw, err := base64.StdEncoding.DecodeString(fields[1])
		if err != nil {
			return nil, fmt.Errorf("key file %s, line %d: key %s is not standard base64", path, n, id)
		}
		k, err := newKey(id, raw)
		if err != nil {
			return nil, fmt.Errorf("key file %s, line %d: %w", path, n, err)
		}
		seen[id] = true
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read key file %s: %w", path, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("key file %s: holds no key", path)
	}
	return keys, nil
}

const header = `# Vigil secret key file (VIGIL_SECRET_KEY_FILE). It encrypts the channel
# secrets stored in the database. Keep it readable by Vigil only, and back
# it up apart from the database: a backup of the database cannot be read
# without it. The first key encrypts; every key decrypts.
# Written by Vigil; change it with "vigil secrets rotate".
`

func format(keys []*key) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k.id, base64.StdEncoding.EncodeToString(k.raw))
	}
	return b.Bytes()
}

// readFile reads and parses the key file at path, and the stamp it had.
func readFile(path string) ([]*key, stamp, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, stamp{}, fmt.Errorf("read key file: %w", err)
	}
	st, err := stampOf(path)
	if err != nil {
		return nil, stamp{}, err
	}
	keys, err := parse(path, data)
	return keys, st, err
}

// writeFile replaces the key file at path with keys, atomically (a new
// file renamed over the old one) and readable by its owner only.
func writeFile(path string, keys []*key) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".vigil-key-*") // created 0600
	if err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename, there is nothing to remove
	if _, err := f.Write(format(keys)); err != nil {
		f.Close()
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write key file %s: %w", path, err)
	}
	return nil
}

// Create writes a new key file at path holding one new key, readable by
// its owner only (0600). It refuses a path that exists.
func Create(path string) (keyID string, err error) {
	k := generate()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("create key file: %w", err)
	}
	if _, err := f.Write(format([]*key{k})); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("create key file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("create key file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("create key file %s: %w", path, err)
	}
	return k.id, nil
}

// AddKey puts a new key first in the key file at path, so that it seals
// from now on; the keys the file held stay, to open what they sealed.
func AddKey(path string) (keyID string, err error) {
	keys, _, err := readFile(path)
	if err != nil {
		return "", err
	}
	k := generate()
	for slicesContainsID(keys, k.id) { // a 1 in 4 billion chance
		k = generate()
	}
	if err := writeFile(path, append([]*key{k}, keys...)); err != nil {
		return "", err
	}
	return k.id, nil
}

func slicesContainsID(keys []*key, id string) bool {
	for _, k := range keys {
		if k.id == id {
			return true
		}
	}
	return false
}

// DropOldKeys leaves only the first key in the key file at path, and
// returns the IDs of the keys it removed.
func DropOldKeys(path string) (dropped []string, err error) {
	keys, _, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if len(keys) == 1 {
		return nil, nil
	}
	for _, k := range keys[1:] {
		dropped = append(dropped, k.id)
	}
	return dropped, writeFile(path, keys[:1])
}

// stamp tells whether a file changed.
type stamp struct {
	mod  time.Time
	size int64
}

func stampOf(path string) (stamp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return stamp{}, fmt.Errorf("read key file: %w", err)
	}
	return stamp{mod: st.ModTime(), size: st.Size()}, nil
}

// Keyring holds the keys of a key file, and follows the file when it
// changes. It is safe for concurrent use.
type Keyring struct {
	path string

	mu       sync.Mutex
	stamp    stamp
	keys     []*key // the file's, the sealing key first
	retained []*key // kept to open with, whatever the file holds
}

// Load reads the key file at path. It must exist and hold at least one key.
func Load(path string) (*Keyring, error) {
	keys, st, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return &Keyring{path: path, stamp: st, keys: keys}, nil
}

// Path returns the key file's path.
func (k *Keyring) Path() string { return k.path }

// Retain makes k open with every key other holds now, even once its own
// file no longer holds them. A rotation uses it to re-encrypt what was
// sealed with the keys it removes.
func (k *Keyring) Retain(other *Keyring) {
	other.mu.Lock()
	keys := append([]*key(nil), other.keys...)
	other.mu.Unlock()
	k.mu.Lock()
	k.retained = append(k.retained, keys...)
	k.mu.Unlock()
}

// refresh reloads the file when its stamp changed. A file that cannot be
// read or parsed leaves the keys as they were, and the error is returned.
// k.mu is held.
func (k *Keyring) refresh() error {
	st, err := stampOf(k.path)
	if err != nil {
		return err
	}
	if st == k.stamp {
		return nil
	}
	keys, st, err := readFile(k.path)
	if err != nil {
		return err
	}
	k.keys, k.stamp = keys, st
	return nil
}

// Current returns the ID of the key that seals now (after reloading the
// file if it changed).
func (k *Keyring) Current() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	_ = k.refresh() // on a failed reload, the keys loaded last still seal
	return k.keys[0].id
}

// Seal encrypts plaintext with the current key. aad is authenticated, not
// encrypted: Open must be given the same, so a sealed value cannot be
// moved to another record.
func (k *Keyring) Seal(plaintext, aad []byte) (string, error) {
	k.mu.Lock()
	_ = k.refresh() // on a failed reload, the keys loaded last still seal
	cur := k.keys[0]
	k.mu.Unlock()
	nonce := make([]byte, cur.aead.NonceSize(), cur.aead.NonceSize()+len(plaintext)+cur.aead.Overhead())
	_, _ = rand.Read(nonce)
	out := cur.aead.Seal(nonce, nonce, plaintext, aad)
	return version + ":" + cur.id + ":" + base64.RawURLEncoding.EncodeToString(out), nil
}

// KeyID returns the ID of the key that sealed s, or "" when s is not a
// sealed value.
func KeyID(s string) string {
	v, rest, ok := strings.Cut(s, ":")
	if !ok || v != version {
		return ""
	}
	id, _, ok := strings.Cut(rest, ":")
	if !ok || !validID(id) {
		return ""
	}
	return id
}

// KeyID is [KeyID], for the store's Sealer interface.
func (k *Keyring) KeyID(sealed string) string { return KeyID(sealed) }

// find returns the key of the ID; k.mu is held.
func (k *Keyring) find(id string) *key {
	for _, c := range k.keys {
		if c.id == id {
			return c
		}
	}
	for _, c := range k.retained {
		if c.id == id {
			return c
		}
	}
	return nil
}

// Open decrypts a value Seal made with the same aad. A key ID the ring
// does not hold reloads the file once; then it is ErrUnknownKey. A key
// that does not open the value is ErrWrongKey.
func (k *Keyring) Open(sealed string, aad []byte) ([]byte, error) {
	v, rest, ok := strings.Cut(sealed, ":")
	if !ok || v != version {
		return nil, errors.New("secrets: not a sealed value")
	}
	id, data, ok := strings.Cut(rest, ":")
	if !ok || !validID(id) {
		return nil, errors.New("secrets: not a sealed value")
	}
	k.mu.Lock()
	c := k.find(id)
	var reloadErr error
	if c == nil {
		reloadErr = k.refresh()
		c = k.find(id)
	}
	k.mu.Unlock()
	if c == nil {
		if reloadErr != nil {
			return nil, fmt.Errorf("%w: key %s, key file %s (%v)", ErrUnknownKey, id, k.path, reloadErr)
		}
		return nil, fmt.Errorf("%w: key %s, key file %s", ErrUnknownKey, id, k.path)
	}
	raw, err := base64.RawURLEncoding.DecodeString(data)
	if err != nil || len(raw) < c.aead.NonceSize()+c.aead.Overhead() {
		return nil, fmt.Errorf("%w: key %s: the sealed value is damaged", ErrWrongKey, id)
	}
	n := c.aead.NonceSize()
	plain, err := c.aead.Open(nil, raw[:n], raw[n:], aad)
	if err != nil {
		return nil, fmt.Errorf("%w: key %s, key file %s", ErrWrongKey, id, k.path)
	}
	return plain, nil
}

// Exists reports whether a file is at path.
func Exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("key file: %w", err)
	}
	return true, nil
}
