package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Errors returned by [Verify].
var (
	ErrSignatureMissing   = errors.New("webhook: no Vigil-Signature header")
	ErrSignatureMalformed = errors.New("webhook: malformed Vigil-Signature header")
	ErrSignatureMismatch  = errors.New("webhook: signature does not match")
	ErrSignatureExpired   = errors.New("webhook: signature timestamp outside tolerance")
)

// Sign returns the Vigil-Signature header value for body sent at t:
// "t=<unix>,v1=<hex HMAC-SHA256 of "<unix>.<body>" keyed with secret>".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte("."))
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a Vigil-Signature header against the raw request body, as a
// receiver should: the HMAC must match (compared in constant time) and the
// timestamp must be within tolerance of now, which stops replays of an old
// request. Several v1 values are accepted (any one may match), so that a
// sender can sign with an old and a new secret while it is rotated.
// A tolerance of zero or less means 5 minutes.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if strings.TrimSpace(header) == "" {
		return ErrSignatureMissing
	}
	if tolerance <= 0 {
		tolerance = 5 * time.Minute
	}
	var ts string
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		key, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return ErrSignatureMalformed
		}
		switch key {
		case "t":
			if ts != "" {
				return ErrSignatureMalformed
			}
			ts = value
		case "v1":
			sig, err := hex.DecodeString(value)
			if err != nil {
				return ErrSignatureMalformed
			}
			sigs = append(sigs, sig)
		}
		// Other schemes are ignored, so new ones can be added beside v1.
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return ErrSignatureMalformed
	}
	want := mac(secret, ts, body)
	matched := false
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			matched = true
		}
	}
	if !matched {
		return ErrSignatureMismatch
	}
	if age := now.Sub(time.Unix(unix, 0)); age > tolerance || age < -tolerance {
		return ErrSignatureExpired
	}
	return nil
}
