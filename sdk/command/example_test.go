package command_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/vigilhq/vigil/sdk/command"
	"github.com/vigilhq/vigil/sdk/internal/vigiltest"
)

// vigil run wraps a crontab line: start, then the exit status with the end
// of the output, and the command's own exit code.
func ExampleMain() {
	vigil := vigiltest.NewServer() // stands in for a Vigil server
	defer vigil.Close()
	key := vigil.AddMonitor()

	args := []string{"--url", vigil.URL(), "--key", key, "--", "sh", "-c", "echo 3 files backed up; exit 3"}
	code := command.Main(context.Background(), args, os.Getenv, strings.NewReader(""), os.Stdout, os.Stderr)
	fmt.Println("exit code", code)
	vigil.Print(os.Stdout)
	// Output:
	// 3 files backed up
	// exit code 3
	// POST /ping/{key}/start?rid={rid}
	// POST /ping/{key}/3?duration_ms={ms}&rid={rid} "3 files backed up"
}
