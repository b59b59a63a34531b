package web

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafeNextKeepsSameOriginPaths(t *testing.T) {
	t.Parallel()
	kept := []string{"/", "/monitors/abc", "/monitors?tag=a%20b", "/channels/x/edit#top", "/a//b"}
	for _, next := range kept {
		require.Equal(t, next, safeNext(next), next)
	}
	// Each of these leads a browser off the site, or is not a path.
	refused := []string{
		"", "evil.com", "https://evil.com", "//evil.com", "/\\evil.com", "/\t/evil.com", "/\n/evil.com",
		"/\r//evil.com", "\t//evil.com", "/ /evil.com", "/\u00a0/evil.com", "/%09/evil.com\x00", "\\\\evil.com",
		"/\\/evil.com", "javascript:alert(1)", "/\x7f/evil.com",
	}
	for _, next := range refused {
		require.Equal(t, "/", safeNext(next), "%q", next)
	}
}
