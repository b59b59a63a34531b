// Command vigil is Vigil's one binary: the server, its maintenance
// commands, and the tools users run beside their jobs.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	// The zone database in the binary: schedules name zones (Europe/Berlin),
	// and a minimal image has no /usr/share/zoneinfo. Without it such a
	// binary would refuse every zone but UTC.
	_ "time/tzdata"

	"github.com/vigilhq/vigil/sdk/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: vigil <command> [flags]

Commands:
  serve      run the server: ping ingest, evaluator, notifications, API, dashboard
  migrate    apply database migrations (up), list what up would apply (up --dry-run), or show them (status)
  backup     copy the SQLite database, online and consistent: vigil backup FILE
  cron next  print the next fire times of a cron expression
  oncalendar next
             print the next elapses of a systemd calendar expression
  run        run a command and report it: vigil run [flags] -- COMMAND ARGS
  bench      measure ping ingest or retention: vigil bench ingest|retention [flags]
  users      make dashboard accounts: vigil users create --email EMAIL --project NAME
  keys       manage API keys: vigil keys create|list|revoke
  secrets    the key file of channel secrets: vigil secrets rotate|init
  import healthchecks
             make monitors from a Healthchecks.io project, keeping its ping URLs
  sync crontab
             create a monitor per crontab line over the API, and run each line under vigil run
  maintenance start|end|list
             maintenance windows over the API: vigil maintenance start --tag db --for 2h
  snooze     silence one monitor's notifications for a while: vigil snooze backup --for 1h (--end ends it)
  help       show this help

Run "vigil <command> -h" for the flags of a command.
`

// run runs one subcommand and returns the process exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if args[0] == "run" {
		// vigil run exits with its command's exit code.
		return command.Main(ctx, args[1:], getenv, stdin, stdout, stderr)
	}
	env := &cmdEnv{ctx: ctx, getenv: getenv, stdin: stdin, stdout: stdout, stderr: stderr}
	var err error
	switch args[0] {
	case "serve":
		err = serveCmd(env, args[1:])
	case "migrate":
		err = migrateCmd(env, args[1:])
	case "backup":
		err = backupCmd(env, args[1:])
	case "cron":
		err = cronCmd(env, args[1:])
	case "oncalendar":
		err = oncalendarCmd(env, args[1:])
	case "bench":
		err = benchCmd(env, args[1:])
	case "users":
		err = usersCmd(env, args[1:])
	case "keys":
		err = keysCmd(env, args[1:])
	case "secrets":
		err = secretsCmd(env, args[1:])
	case "sync":
		err = syncCmd(env, args[1:])
	case "import":
		err = importCmd(env, args[1:])
	case "maintenance":
		err = maintenanceCmd(env, args[1:])
	case "snooze":
		err = snoozeCmd(env, args[1:])
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "vigil: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err != nil {
		if ue, ok := err.(usageError); ok {
			fmt.Fprintf(stderr, "vigil %s: %s\n", args[0], ue.msg)
			return 2
		}
		if err == errHelp {
			return 0
		}
		fmt.Fprintf(stderr, "vigil %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

// cmdEnv is what a subcommand may touch of the process.
type cmdEnv struct {
	ctx            context.Context
	getenv         func(string) string
	stdin          io.Reader
	stdout, stderr io.Writer
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
