package notifiers

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// ValidateHTTPURL checks the value of the config key named key: it must be
// an absolute http or https URL with a host. The message names the key and
// never repeats the value, which may be a secret.
func ValidateHTTPURL(key, value string) error {
	if strings.TrimSpace(value) == "" {
		return fmt.Errorf("%s: must be set", key)
	}
	u, err := url.Parse(value)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Hostname() == "" {
		return fmt.Errorf("%s: must be an https or http URL", key)
	}
	if value != strings.TrimSpace(value) {
		return fmt.Errorf("%s: must not start or end with spaces", key)
	}
	return nil
}

// ValidateSecret checks that the config key named key is set and holds no
// spaces or control characters, without repeating its value.
func ValidateSecret(key, value string) error {
	if value == "" {
		return fmt.Errorf("%s: must be set", key)
	}
	for _, r := range value {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("%s: must not contain spaces or control characters", key)
		}
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("%s: must be valid UTF-8", key)
	}
	return nil
}

// Truncate shortens s to at most n characters (runes), ending it with "…"
// when it was cut. Vendors reject or cut fields that are too long; we cut
// first, where we can say so.
func Truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}
