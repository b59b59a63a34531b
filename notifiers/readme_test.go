package notifiers_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// goldenRE finds a README block that quotes a golden file: a
// "<!-- golden: path -->" line, then a fenced block (three or more
// backticks, as the quoted text needs).
var goldenRE = regexp.MustCompile("(?s)<!-- golden: ([^ ]+) -->\n(`{3,})[a-z]*\n(.*?)\n(`{3,})\n")

// TestReadmeQuotesGoldenFiles: every rendering the README shows of a
// notification is a golden file of a channel's tests, quoted exactly, so
// what the README shows is what the channels send.
func TestReadmeQuotesGoldenFiles(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	quotes := goldenRE.FindAllSubmatch(readme, -1)
	require.GreaterOrEqual(t, len(quotes), 6, "the README shows the Slack, e-mail and webhook renderings")
	seen := map[string]bool{}
	for _, q := range quotes {
		path, open, body, end := string(q[1]), string(q[2]), string(q[3]), string(q[4])
		require.Equal(t, open, end, "%s: the fence closes as it opened", path)
		want, err := os.ReadFile(filepath.Join("..", path))
		require.NoError(t, err, "the README quotes %s", path)
		require.Equal(t, string(want), body+"\n", "the README's copy of %s differs from the file (go test -update rewrites the file; copy it again)", path)
		seen[path] = true
	}
	for _, p := range []string{"notifiers/slack/testdata/failure.json", "notifiers/email/testdata/failure.txt",
		"notifiers/webhook/testdata/failure.json", "notifiers/slack/testdata/undeclared.json",
		"notifiers/email/testdata/undeclared.txt", "notifiers/webhook/testdata/undeclared.json"} {
		require.True(t, seen[p], "the README quotes %s", p)
	}
}
