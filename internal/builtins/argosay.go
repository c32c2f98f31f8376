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
	arg := func(i int) (string, bool) {
		if i < len(args) {
			return args[i], true
		}
		fmt.Fprintf(stderr, "argosay: %s: parameter %d not set\n", verb, i)
		return "", false
	}
	switch verb {
	case "echo":
		switch len(args) {
		case 0, 1:
			fmt.Fprintln(stdout, "hello argo")
		case 2:
			fmt.Fprintln(stdout, args[1])
		case 3:
			if err := writeFile(args[2], args[1]+"\n"); err != nil {
				fmt.Fprintf(stderr, "argosay: echo: %v\n", err)
				return 1
			}
			time.Sleep(EchoFileDelay)
		}
		return 0
	case "cat":
		file, ok := arg(1)
		if !ok {
			return 2
		}
		f, err := os.Open(file)
		if err != nil {
			fmt.Fprintf(stderr, "cat: %v\n", err)
			return 1
		}
		defer f.Close()
		if _, err := io.Copy(stdout, f); err != nil {
			fmt.Fprintf(stderr, "cat: %v\n", err)
			return 1
		}
		return 0
	case "assert_contains":
		file, ok1 := arg(1)
		if !ok1 {
			return 2
		}
		want, ok2 := arg(2)
		if !ok2 {
			return 2
		}
		data, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "grep: %v\n", err)
			return 2
		}
		if grepF(data, want) {
			return 0
		}
		return 1
	case "exit":
		if len(args) < 2 {
			return 0
		}
		n, err := strconv.ParseUint(args[1], 10, 31)
		if err != nil {
			fmt.Fprintf(stderr, "argosay: exit: Illegal number: %s\n", args[1])
			return 2
		}
		return int(n % 256)
	case "sleep":
		s, ok := arg(1)
		if !ok {
			return 2
		}
		d, err := ParseSleep(s)
		if err != nil {
			fmt.Fprintf(stderr, "sleep: %v\n", err)
			return 1
		}
		time.Sleep(d)
		return 0
	case "sh":
		cmd := exec.Command("sh", args[1:]...)
		cmd.Stdout, cmd.Stderr = stdout, stderr
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
		fmt.Fprintf(stderr, "argosay: sh: %v\n", err)
		return 127
	}
	fmt.Fprintf(stderr, "argosay: unknown command %q\n", verb)
	return 1
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
