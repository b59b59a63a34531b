package crontab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vigilhq/vigil/internal/cronietest"
)

const sample = `# m h dom mon dow command
MAILTO=ops@example.com
SHELL=/bin/bash

0 2 * * * /usr/local/bin/nightly-import --all > /var/log/import.log 2>&1
# vigil: db-vacuum
*/15 9-17 * * 1-5   psql -c 'VACUUM ANALYZE'
@hourly cd /srv/app && ./bin/rotate --keep 3 # vigil: rotate
CRON_TZ=America/New_York
30 7 * * * date +\%Y-\%m-\%d >> /tmp/dates
0 6 * * 1 mail -s "weekly report" ops@example.com%Dear ops,%the report is attached.%
@reboot /usr/local/bin/start-agent
this line is wrong
0 2 * *
@fortnightly /bin/true
`

func TestParse(t *testing.T) {
	t.Parallel()
	lines := Parse(sample, Options{TZ: "Europe/Berlin", Vigil: "/usr/local/bin/vigil"})
	kinds := make([]Kind, len(lines))
	for i, l := range lines {
		kinds[i] = l.Kind
	}
	require.Equal(t, []Kind{Comment, Env, Env, Blank, Job, Comment, Job, Job, Env, Job, Job, Reboot, Unreadable, Unreadable, Unreadable}, kinds)

	imp := lines[4]
	require.Equal(t, "0 2 * * *", imp.Schedule)
	require.Equal(t, "0 2 * * * ", imp.Prefix)
	require.Equal(t, "/usr/local/bin/nightly-import --all > /var/log/import.log 2>&1", imp.Command)
	require.Empty(t, imp.Input)
	require.Equal(t, "Europe/Berlin", imp.TZ, "the machine's zone")
	require.Equal(t, "/bin/bash", imp.Shell)
	require.Equal(t, "nightly-import-all", imp.Slug)
	require.Equal(t, SlugDerived, imp.SlugFrom)

	vac := lines[6]
	require.Equal(t, "*/15 9-17 * * 1-5", vac.Schedule)
	require.Equal(t, "*/15 9-17 * * 1-5   ", vac.Prefix, "the blanks are kept")
	require.Equal(t, "db-vacuum", vac.Slug)
	require.Equal(t, SlugAbove, vac.SlugFrom)

	rot := lines[7]
	require.Equal(t, "@hourly", rot.Schedule)
	require.Equal(t, "cd /srv/app && ./bin/rotate --keep 3", rot.Command, "the vigil comment is not part of the command")
	require.Equal(t, "rotate", rot.Slug)
	require.Equal(t, SlugEndOfLine, rot.SlugFrom)

	dates := lines[9]
	require.Equal(t, "America/New_York", dates.TZ, "CRON_TZ")
	require.Equal(t, `date +\%Y-\%m-\%d >> /tmp/dates`, dates.Command, "escaped % do not cut the command")
	require.Empty(t, dates.Input)
	require.Equal(t, "date-y-m-d", dates.Slug)

	mail := lines[10]
	require.Equal(t, `mail -s "weekly report" ops@example.com`, mail.Command)
	require.Equal(t, "%Dear ops,%the report is attached.%", mail.Input)
	require.Equal(t, "mail-s-weekly-report-ops-example-com", mail.Slug)

	require.Contains(t, lines[11].Reason, "boot")
	require.Contains(t, lines[12].Reason, "not a job")
	require.Contains(t, lines[13].Reason, "five time fields")
	require.Contains(t, lines[14].Reason, "@fortnightly")
}

func TestParseSystemFormat(t *testing.T) {
	t.Parallel()
	lines := Parse("17 * * * * root cd / && run-parts --report /etc/cron.hourly\n25 6 * * *\troot\n", Options{System: true})
	require.Equal(t, Job, lines[0].Kind)
	require.Equal(t, "root", lines[0].User)
	require.Equal(t, "17 * * * * root ", lines[0].Prefix)
	require.Equal(t, "cd / && run-parts --report /etc/cron.hourly", lines[0].Command)
	require.Equal(t, "run-parts-report-etc-cron-hourly", lines[0].Slug)
	require.Equal(t, "UTC", lines[0].TZ)
	require.Equal(t, Unreadable, lines[1].Kind, "a user and no command")
}

func TestSlugs(t *testing.T) {
	t.Parallel()
	lines := Parse(`0 1 * * * /opt/backup.sh
0 13 * * * /opt/backup.sh
0 1 * * * /opt/backup.sh
# vigil: report
0 5 * * * /opt/a
# vigil: report
0 6 * * * /opt/b
# vigil: Not_A_Slug!
0 7 * * * /opt/c
0 8 * * * FOO=1 BAR=2 /opt/d.py -v
`, Options{})
	require.Regexp(t, `^backup-sh-[0-9a-f]{6}$`, lines[0].Slug, "a slug two jobs share gets a hash")
	require.Regexp(t, `^backup-sh-[0-9a-f]{6}$`, lines[1].Slug)
	require.NotEqual(t, lines[0].Slug, lines[1].Slug)
	require.Equal(t, lines[0].Slug+"-2", lines[2].Slug, "the same job twice")
	require.Equal(t, "report", lines[4].Slug)
	require.Equal(t, Unreadable, lines[6].Kind, "a slug named twice")
	require.Contains(t, lines[6].Reason, "line 5")
	require.Equal(t, Unreadable, lines[8].Kind)
	require.Contains(t, lines[8].Reason, "not a slug")
	require.Equal(t, "d-py-v", lines[9].Slug, "assignments left out")

	long := Parse("0 1 * * * /opt/"+strings.Repeat("very-long-name-", 10)+"\n", Options{})
	require.LessOrEqual(t, len(long[0].Slug), slugMaxDerived)
	require.Equal(t, "cron-job", commandSlug("'$(weird)'"))
}

// rewrite rewrites text with every job pinging key "K-<slug>" at URL.
func rewrite(text string, o Options) string {
	return Rewrite(Parse(text, o), o.Vigil, func(l *Line) (Target, bool) {
		return Target{URL: "http://vigil.example:8080", PingKey: "K-" + l.Slug}, true
	})
}

func TestRewriteIsStable(t *testing.T) {
	t.Parallel()
	o := Options{TZ: "Europe/Berlin", Vigil: "/usr/local/bin/vigil"}
	once := rewrite(sample, o)
	require.Equal(t, once, rewrite(once, o), "a second rewrite changes nothing")

	want := []string{
		"# vigil: nightly-import-all",
		`0 2 * * * /usr/local/bin/vigil run --url http://vigil.example:8080 --key K-nightly-import-all -- /bin/bash -c '/usr/local/bin/nightly-import --all > /var/log/import.log 2>&1'`,
		"# vigil: db-vacuum",
		`*/15 9-17 * * 1-5   /usr/local/bin/vigil run --url http://vigil.example:8080 --key K-db-vacuum -- /bin/bash -c 'psql -c '\''VACUUM ANALYZE'\'''`,
		`@hourly /usr/local/bin/vigil run --url http://vigil.example:8080 --key K-rotate -- /bin/bash -c 'cd /srv/app && ./bin/rotate --keep 3' # vigil: rotate`,
		`0 6 * * 1 /usr/local/bin/vigil run --url http://vigil.example:8080 --key K-mail-s-weekly-report-ops-example-com -- /bin/bash -c 'mail -s "weekly report" ops@example.com'%Dear ops,%the report is attached.%`,
		"@reboot /usr/local/bin/start-agent",
		"this line is wrong",
	}
	for _, w := range want {
		require.Contains(t, once, w+"\n")
	}
	for _, l := range Parse(once, o) {
		if l.Kind == Job {
			require.True(t, l.Rewritten, l.Text)
		}
	}

	// A line wrapped by hand is left alone.
	hand := "0 3 * * * vigil run --key abc -- /opt/x\n"
	lines := Parse(hand, o)
	require.Equal(t, Unreadable, lines[0].Kind)
	require.Contains(t, lines[0].Reason, "by hand")
	require.Equal(t, hand, rewrite(hand, o))

	// % in the words Vigil adds is escaped for cron.
	require.Contains(t, rewrite("0 1 * * * /opt/x\n", Options{Vigil: "/opt/100%/vigil"}), `'/opt/100\%/vigil' run`)
}

// TestRewrittenCommandsDoTheSame runs each job of a crontab, and of its
// rewrite, as cron would, with a stand-in vigil that only runs its
// command: the commands see the same arguments and the same input.
func TestRewrittenCommandsDoTheSame(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vigil := filepath.Join(dir, "vigil")
	// vigil run [4 flags] -- COMMAND...: run COMMAND with this input.
	require.NoError(t, os.WriteFile(vigil, []byte("#!/bin/sh\nshift 6\nexec \"$@\"\n"), 0o755))
	tab := `0 1 * * * printf '\%s|' "it's" a\%b "c\%d" \\; cat%line one%line \%two\%%
0 2 * * * echo 'single '\''quoted'\'' and "double"' | tr a-z A-Z; echo $((6*7)) # vigil: quoting
0 3 * * * cat%hello
0 4 * * * printf '[\%s]' "$(cat)"%tab	and  spaces%  kept  
0 5 * * * echo 100\% done
`
	o := Options{Vigil: vigil}
	orig, re := Parse(tab, o), Parse(rewrite(tab, o), o)
	var jobs, rejobs []*Line
	for _, l := range orig {
		if l.Kind == Job {
			jobs = append(jobs, l)
		}
	}
	for _, l := range re {
		if l.Kind == Job {
			rejobs = append(rejobs, l)
		}
	}
	require.Len(t, rejobs, len(jobs))
	for i, l := range jobs {
		want := cronietest.Run(t, "/bin/sh", l.Text[len(l.Prefix):])
		got := cronietest.Run(t, "/bin/sh", rejobs[i].Text[len(rejobs[i].Prefix):])
		require.Equal(t, want, got, "line %d: %s\nrewritten: %s", l.Num, l.Text, rejobs[i].Text)
		require.NotEmpty(t, want)
	}
}
