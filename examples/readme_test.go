// Package examples holds runnable programs that use the Go SDK, one per
// integration; the README's Go snippets are taken from them.
package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// elision is the line that stands for left-out lines in a README snippet.
const elision = "// …"

// TestReadmeSnippetsAreFromExamples checks that every Go snippet of the
// README's "Go SDK" section is taken from one of the example programs,
// which the build compiles: each run of lines between elisions appears in
// that file, in order, up to indentation. Each example is quoted at least
// once.
func TestReadmeSnippetsAreFromExamples(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	section := sectionOf(t, string(readme), "## Go SDK")

	files, err := filepath.Glob("*/main.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sources := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		sources[f] = normalize(string(data))
	}

	snippets := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(section, -1)
	require.NotEmpty(t, snippets, "the Go SDK section has no Go snippet")
	quoted := map[string]bool{}
	for i, m := range snippets {
		lines := normalize(m[1])
		found := ""
		for _, f := range files {
			if containsInOrder(sources[f], chunks(lines)) {
				found = f
				break
			}
		}
		require.NotEmpty(t, found, "README Go snippet %d is not taken from any example:\n%s", i+1, m[1])
		quoted[found] = true
	}
	for _, f := range files {
		require.True(t, quoted[f], "the README quotes nothing of %s", f)
	}
}

// sectionOf returns the text from the heading line to the next heading of
// the same level.
func sectionOf(t *testing.T, doc, heading string) string {
	t.Helper()
	start := strings.Index(doc, "\n"+heading+"\n")
	require.GreaterOrEqual(t, start, 0, "README has no %q section", heading)
	rest := doc[start+1+len(heading):]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

// normalize splits text into lines without their indentation or trailing
// spaces.
func normalize(text string) []string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return lines
}

// chunks splits a snippet's lines at its elisions.
func chunks(lines []string) [][]string {
	var out [][]string
	cur := []string{}
	for _, l := range lines {
		if l == elision {
			out = append(out, cur)
			cur = []string{}
			continue
		}
		cur = append(cur, l)
	}
	return append(out, cur)
}

// containsInOrder reports whether each chunk appears as consecutive lines
// of src, each after the one before.
func containsInOrder(src []string, parts [][]string) bool {
	from := 0
	for _, part := range parts {
		if len(part) == 0 {
			continue
		}
		at := -1
		for i := from; i+len(part) <= len(src); i++ {
			if slices.Equal(src[i:i+len(part)], part) {
				at = i
				break
			}
		}
		if at < 0 {
			return false
		}
		from = at + len(part)
	}
	return true
}

func TestContainsInOrder(t *testing.T) {
	t.Parallel()
	src := normalize("a\n\tb\n\tc\nd\ne")
	require.True(t, containsInOrder(src, chunks(normalize("b\nc\n// …\ne"))))
	require.True(t, containsInOrder(src, chunks(normalize("a\n  b"))), "indentation does not matter")
	require.False(t, containsInOrder(src, chunks(normalize("b\nd"))), "lines must be consecutive")
	require.False(t, containsInOrder(src, chunks(normalize("d\n// …\nb"))), "chunks must be in order")
	require.False(t, containsInOrder(src, chunks(normalize("x"))))
}
