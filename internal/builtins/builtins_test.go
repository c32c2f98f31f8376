package builtins

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestArgosay(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	data := file("data.txt", "alpha beta\ngamma\n")
	script := file("script.sh", "echo from sh \"$1\"; echo err >&2; exit 7\n")
	cases := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderr     string // contained
		minTime    time.Duration
		wantFile   string // path that must exist afterwards ...
		fileText   string // ... with this content
		noWantFile string // path that must not exist afterwards
	}{
		{name: "no args", args: nil, stdout: "hello argo\n"},
		{name: "empty verb", args: []string{""}, stdout: "hello argo\n"},
		{name: "echo", args: []string{"echo"}, stdout: "hello argo\n"},
		{name: "echo msg", args: []string{"echo", "hi there"}, stdout: "hi there\n"},
		{name: "echo empty msg", args: []string{"echo", ""}, stdout: "\n"},
		{name: "echo to file", args: []string{"echo", "to file", filepath.Join(dir, "a/b/out.txt")},
			minTime: EchoFileDelay, wantFile: filepath.Join(dir, "a/b/out.txt"), fileText: "to file\n"},
		{name: "echo with three args does nothing", args: []string{"echo", "x", filepath.Join(dir, "no.txt"), "y"},
			noWantFile: filepath.Join(dir, "no.txt")},
		{name: "echo to an unwritable file", args: []string{"echo", "x", data + "/sub"}, code: 1, stderr: "argosay: echo:"},
		{name: "cat", args: []string{"cat", data}, stdout: "alpha beta\ngamma\n"},
		{name: "cat missing file", args: []string{"cat", filepath.Join(dir, "missing")}, code: 1, stderr: "no such file"},
		{name: "cat without file", args: []string{"cat"}, code: 2, stderr: "parameter 1 not set"},
		{name: "assert_contains found", args: []string{"assert_contains", data, "beta"}},
		{name: "assert_contains across words", args: []string{"assert_contains", data, "alpha beta"}},
		{name: "assert_contains fixed string", args: []string{"assert_contains", data, "a.p"}, code: 1},
		{name: "assert_contains not found", args: []string{"assert_contains", data, "delta"}, code: 1},
		{name: "assert_contains not across lines", args: []string{"assert_contains", data, "beta\ngamma"}}, // grep -F: either line
		{name: "assert_contains missing file", args: []string{"assert_contains", filepath.Join(dir, "missing"), "x"}, code: 2},
		{name: "assert_contains missing string", args: []string{"assert_contains", data}, code: 2},
		{name: "exit", args: []string{"exit"}},
		{name: "exit 0", args: []string{"exit", "0"}},
		{name: "exit 3", args: []string{"exit", "3"}, code: 3},
		{name: "exit 256 wraps", args: []string{"exit", "257"}, code: 1},
		{name: "exit bad number", args: []string{"exit", "x"}, code: 2, stderr: "Illegal number"},
		{name: "exit 1 as one string", args: []string{"exit 1"}, code: 1, stderr: "unknown command"},
		{name: "sleep fraction", args: []string{"sleep", "0.1"}, minTime: 100 * time.Millisecond},
		{name: "sleep suffix", args: []string{"sleep", "0.05s"}, minTime: 50 * time.Millisecond},
		{name: "sleep go duration", args: []string{"sleep", "50ms"}, minTime: 50 * time.Millisecond},
		{name: "sleep bad", args: []string{"sleep", "soon"}, code: 1, stderr: "invalid time interval"},
		{name: "sleep without time", args: []string{"sleep"}, code: 2},
		{name: "sh file", args: []string{"sh", script, "arg"}, code: 7, stdout: "from sh arg\n", stderr: "err"},
		{name: "sh reads empty stdin", args: []string{"sh"}},
		{name: "unknown verb", args: []string{"dance"}, code: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			start := time.Now()
			code := Argosay(tc.args, &stdout, &stderr)
			took := time.Since(start)
			if code != tc.code {
				t.Errorf("code = %d, want %d (stderr %q)", code, tc.code, stderr.String())
			}
			if stdout.String() != tc.stdout {
				t.Errorf("stdout = %q, want %q", stdout.String(), tc.stdout)
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tc.stderr)
			}
			if took < tc.minTime {
				t.Errorf("took %v, want at least %v", took, tc.minTime)
			}
			if tc.wantFile != "" {
				if got, err := os.ReadFile(tc.wantFile); err != nil || string(got) != tc.fileText {
					t.Errorf("file = %q, %v; want %q", got, err, tc.fileText)
				}
			}
			if tc.noWantFile != "" {
				if _, err := os.Stat(tc.noWantFile); err == nil {
					t.Errorf("%s was created", tc.noWantFile)
				}
			}
		})
	}
}

func TestParseSleep(t *testing.T) {
	cases := map[string]time.Duration{
		"0": 0, "1": time.Second, "0.1": 100 * time.Millisecond, "2s": 2 * time.Second,
		"1.5m": 90 * time.Second, "1h": time.Hour, "1d": 24 * time.Hour, "1m30s": 90 * time.Second, "250ms": 250 * time.Millisecond,
	}
	for in, want := range cases {
		if got, err := ParseSleep(in); err != nil || got != want {
			t.Errorf("ParseSleep(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "x", "1x", "s", "-1s"} {
		if _, err := ParseSleep(in); err == nil {
			t.Errorf("ParseSleep(%q) accepted", in)
		}
	}
}

func TestCowsay(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		lines []string // each must appear in the output
	}{
		{"one word", []string{"hello"}, []string{"< hello >", " _______", " -------"}},
		{"words joined", []string{"hello", "world"}, []string{"< hello world >"}},
		{"wrapped", []string{strings.Repeat("word ", 12)}, []string{"/ word word word word word word word word \\", "\\ word word word word                     /"}},
		{"newlines kept", []string{"line one\nline two"}, []string{"/ line one \\", "\\ line two /"}},
		{"three lines", []string{"a\nb\nc"}, []string{"/ a \\", "| b |", "\\ c /"}},
		{"long word split", []string{strings.Repeat("x", 45)}, []string{"/ " + strings.Repeat("x", 40) + " \\", "\\ xxxxx" + strings.Repeat(" ", 35) + " /"}},
		{"unicode", []string{"héllo wörld"}, []string{"< héllo wörld >", " _____________"}},
		{"nothing", nil, []string{"<  >"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := Cowsay(tc.args, &out); code != 0 {
				t.Fatalf("code %d", code)
			}
			for _, l := range tc.lines {
				if !strings.Contains(out.String(), l+"\n") {
					t.Errorf("output lacks %q:\n%s", l, out.String())
				}
			}
			if !strings.Contains(out.String(), "( o..o )") {
				t.Errorf("no cow:\n%s", out.String())
			}
		})
	}
}
