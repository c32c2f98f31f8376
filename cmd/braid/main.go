package main

import (
	"context"
	"os"
	_ "time/tzdata" // CronWorkflow timezones must load on machines without zoneinfo

	"github.com/braidwf/braid/internal/cli"
)

func main() {
	// Commands that outlive a Ctrl-C (braid run stops its workflow first)
	// install their own signal handling; the others end at once.
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
