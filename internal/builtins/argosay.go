package builtins

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EchoFileDelay is how long `argosay echo MSG FILE` sleeps after writing,
// as the image's script does.
const EchoFileDelay = 100 * time.Millisecond

// Argosay runs argoproj/argosay:v2's entrypoint with args (without the
// program name) and returns its exit code:
//
//	(no args) | echo     print "hello argo"
//	echo MSG             print MSG
//	echo MSG FILE        create FILE's parent directories, write MSG and a
//	                     newline to FILE, sleep 0.1 s; print nothing
//	echo A B C...        do nothing (three or more arguments after echo)
//	cat FILE             print FILE
//	assert_contains FILE STR
//	                     exit 1 unless FILE contains STR (grep -F), 2 when
//	                     FILE cannot be read
//	exit [N]             exit with N (default 0)
//	sleep N              sleep N seconds (fractions and the suffixes s, m,
//	                     h, d allowed, as sleep(1))
//	sh [FILE [ARGS...]]  run FILE with sh
//	anything else        exit 1, so `args: ["exit 1"]` (one string) fails
//
// A missing argument ends with exit code 2, as the script's `set -u` does.
func Argosay(args []string, stdout, stderr io.Writer) int {
	verb := "echo"
	if len(args) > 0 && args[0] != "" {
		verb = args[0]
	}
	a := argosay{verb: verb, args: args, stdout: stdout, stderr: stderr}
	switch verb {
	case "echo":
		return a.echo()
	case "cat":
		return a.cat()
	case "assert_contains":
		return a.assertContains()
	case "exit":
		return a.exit()
	case "sleep":
		return a.sleep()
	case "sh":
		return a.sh()
	}
	fmt.Fprintf(stderr, "argosay: unknown command %q\n", verb)
	return 1
}

// argosay is one run of Argosay: its verb, arguments and output streams.
type argosay struct {
	verb           string
	args           []string
	stdout, stderr io.Writer
}

// arg returns argument i, or reports it missing on stderr and returns false.
func (a argosay) arg(i int) (string, bool) {
	if i < len(a.args) {
		return a.args[i], true
	}
	fmt.Fprintf(a.stderr, "argosay: %s: parameter %d not set\n", a.verb, i)
	return "", false
}

// echo prints its message, or writes it to a file with three arguments.
func (a argosay) echo() int {
	switch len(a.args) {
	case 0, 1:
		fmt.Fprintln(a.stdout, "hello argo")
	case 2:
		fmt.Fprintln(a.stdout, a.args[1])
	case 3:
		if err := writeFile(a.args[2], a.args[1]+"\n"); err != nil {
			fmt.Fprintf(a.stderr, "argosay: echo: %v\n", err)
			return 1
		}
		time.Sleep(EchoFileDelay)
	}
	return 0
}

// cat prints a file.
func (a argosay) cat() int {
	file, ok := a.arg(1)
	if !ok {
		return 2
	}
	f, err := os.Open(file)
	if err != nil {
		fmt.Fprintf(a.stderr, "cat: %v\n", err)
		return 1
	}
	defer f.Close()
	if _, err := io.Copy(a.stdout, f); err != nil {
		fmt.Fprintf(a.stderr, "cat: %v\n", err)
		return 1
	}
	return 0
}

// assertContains exits 0 when a file contains a string, as grep -F does.
func (a argosay) assertContains() int {
	file, ok1 := a.arg(1)
	if !ok1 {
		return 2
	}
	want, ok2 := a.arg(2)
	if !ok2 {
		return 2
	}
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(a.stderr, "grep: %v\n", err)
		return 2
	}
	if grepF(data, want) {
		return 0
	}
	return 1
}

// exit returns its argument as the exit code.
func (a argosay) exit() int {
	if len(a.args) < 2 {
		return 0
	}
	n, err := strconv.ParseUint(a.args[1], 10, 31)
	if err != nil {
		fmt.Fprintf(a.stderr, "argosay: exit: Illegal number: %s\n", a.args[1])
		return 2
	}
	return int(n % 256)
}

// sleep sleeps as sleep(1) does.
func (a argosay) sleep() int {
	s, ok := a.arg(1)
	if !ok {
		return 2
	}
	d, err := ParseSleep(s)
	if err != nil {
		fmt.Fprintf(a.stderr, "sleep: %v\n", err)
		return 1
	}
	time.Sleep(d)
	return 0
}

// sh runs sh with the remaining arguments and returns its exit code.
func (a argosay) sh() int {
	cmd := exec.Command("sh", a.args[1:]...)
	cmd.Stdout, cmd.Stderr = a.stdout, a.stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if code := ee.ExitCode(); code >= 0 {
			return code
		}
		return 128 + 9
	}
	fmt.Fprintf(a.stderr, "argosay: sh: %v\n", err)
	return 127
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// grepF reports whether some line of data contains one of the patterns
// (the newline-separated lines of want), as `grep -F want` succeeds.
func grepF(data []byte, want string) bool {
	if len(data) == 0 {
		return false
	}
	patterns := strings.Split(want, "\n")
	for line := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
		for _, p := range patterns {
			if bytes.Contains(line, []byte(p)) {
				return true
			}
		}
	}
	return false
}

// ParseSleep parses a sleep(1) operand: a non-negative decimal number of
// seconds with an optional suffix s, m, h or d ("0.1", "5", "2m", "1d"), or
// a Go duration ("1m30s").
func ParseSleep(s string) (time.Duration, error) {
	unit := time.Second
	num := s
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 's':
			num = s[:n-1]
		case 'm':
			unit, num = time.Minute, s[:n-1]
		case 'h':
			unit, num = time.Hour, s[:n-1]
		case 'd':
			unit, num = 24*time.Hour, s[:n-1]
		}
	}
	if f, err := strconv.ParseFloat(num, 64); err == nil && f >= 0 && f < 1e9 {
		return time.Duration(f * float64(unit)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	return 0, fmt.Errorf("invalid time interval %q", s)
}
