package executor

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func parseTemplate(t *testing.T, src string) *v1alpha1.Template {
	t.Helper()
	var tp v1alpha1.Template
	if err := yaml.UnmarshalStrict([]byte(src), &tp); err != nil {
		t.Fatal(err)
	}
	return &tp
}

func TestStageScript(t *testing.T) {
	cases := []struct {
		name     string
		tmpl     string
		wantArgs []string // "<script>" stands for the staged file
		wantFile bool
	}{
		{"appended after args", `{name: s, script: {image: python, command: [python], args: [-u], source: "print(1)"}}`, []string{"-u", "<script>"}, true},
		{"no args", `{name: s, script: {image: alpine, command: [sh], source: "echo hi"}}`, []string{"<script>"}, true},
		{"empty source", `{name: s, script: {image: alpine, command: [sh], args: [-c, "true"], source: ""}}`, []string{"-c", "true"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tp := parseTemplate(t, tc.tmpl)
			before := slices.Clone(tp.Script.Args)
			c, err := MainContainer(tp, dir)
			if err != nil {
				t.Fatal(err)
			}
			script := filepath.Join(dir, ScriptFile)
			want := make([]string, len(tc.wantArgs))
			for i, a := range tc.wantArgs {
				want[i] = strings.ReplaceAll(a, "<script>", script)
			}
			if diff := cmp.Diff(want, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if !slices.Equal(before, tp.Script.Args) {
				t.Errorf("template modified: %q", tp.Script.Args)
			}
			fi, err := os.Stat(script)
			if !tc.wantFile {
				if err == nil {
					t.Errorf("staged a file for an empty source")
				}
				return
			}
			if err != nil || fi.Mode().Perm() != 0o755 {
				t.Fatalf("staged file: %v %v", fi, err)
			}
			if data, _ := os.ReadFile(script); string(data) != tp.Script.Source {
				t.Errorf("staged %q", data)
			}
		})
	}
	if _, err := MainContainer(parseTemplate(t, `{name: r, resource: {action: get}}`), t.TempDir()); err == nil {
		t.Error("a resource template has a main container")
	}
}

func TestTail(t *testing.T) {
	cases := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"under", 10, []string{"abc", "def"}, "abcdef"},
		{"exact", 6, []string{"abc", "def"}, "abcdef"},
		{"wraps", 5, []string{"abc", "def", "gh"}, "defgh"},
		{"one big write", 4, []string{"abcdefghij"}, "ghij"},
		{"big after small", 4, []string{"ab", "cdefgh", "i"}, "fghi"},
		{"many small", 3, strings.Split("abcdefghijklmnop", ""), "nop"},
		{"empty", 3, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tail := NewTail(tc.limit)
			total := 0
			for _, w := range tc.writes {
				n, err := tail.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write = %d, %v", n, err)
				}
				total += n
			}
			if got := string(tail.Bytes()); got != tc.want {
				t.Errorf("Bytes = %q, want %q", got, tc.want)
			}
			if tail.Total() != int64(total) {
				t.Errorf("Total = %d, want %d", tail.Total(), total)
			}
		})
	}
}

func TestResult(t *testing.T) {
	big := bytes.Repeat([]byte("x"), MaxResult+10)
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"one newline", "a\n", "a"},
		{"only one removed", "a\n\n", "a\n"},
		{"no newline", "a", "a"},
		{"crlf keeps cr", "a\r\n", "a\r"},
		{"just a newline", "\n", ""},
		{"tail of a big output", string(big) + "END\n", string(big[len(big)-(MaxResult-3):]) + "END"},
		{"exactly the limit plus newline", strings.Repeat("y", MaxResult) + "\n", strings.Repeat("y", MaxResult)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Result([]byte(tc.in)); got != tc.want {
				t.Errorf("Result = %.40q (len %d), want %.40q (len %d)", got, len(got), tc.want, len(tc.want))
			}
			got, err := CaptureResult(strings.NewReader(tc.in))
			if err != nil || got != tc.want {
				t.Errorf("CaptureResult = %.40q, %v", got, err)
			}
			tail := NewResultTail()
			for chunk := range slices.Chunk([]byte(tc.in), 7777) {
				tail.Write(chunk)
			}
			if got := tail.Result(); got != tc.want {
				t.Errorf("Tail.Result = %.40q (len %d)", got, len(got))
			}
			p := filepath.Join(t.TempDir(), "stdout")
			if err := os.WriteFile(p, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err := CaptureResultFile(p); err != nil || got != tc.want {
				t.Errorf("CaptureResultFile = %.40q, %v", got, err)
			}
		})
	}
}

func TestReadOutputParameters(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("plain", "value")
	write("nl", "value\n")
	write("nlnl", "value\n\n")
	write("empty", "")
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tp := parseTemplate(t, `{name: t, container: {image: x}, outputs: {parameters: [
	  {name: plain, valueFrom: {path: `+dir+`/plain}},
	  {name: nl, valueFrom: {path: `+dir+`/nl}},
	  {name: nlnl, globalName: g, valueFrom: {path: `+dir+`/nlnl}},
	  {name: empty, valueFrom: {path: `+dir+`/empty}},
	  {name: relative, valueFrom: {path: plain}},
	  {name: dflt, valueFrom: {path: `+dir+`/missing, default: "d"}},
	  {name: emptydflt, valueFrom: {path: `+dir+`/missing, default: ""}},
	  {name: dirdflt, valueFrom: {path: `+dir+`/adir, default: "dd"}},
	  {name: supplied, valueFrom: {supplied: {}}},
	  {name: literal, value: "lit"}]}}`)
	got, err := ReadOutputParameters(tp, Paths{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{}
	for _, p := range got {
		values[p.Name] = "<nil>"
		if p.Value != nil {
			values[p.Name] = p.Value.String()
		}
	}
	want := map[string]string{
		"plain": "value", "nl": "value", "nlnl": "value\n", "empty": "", "relative": "value",
		"dflt": "d", "emptydflt": "", "dirdflt": "dd", "supplied": "<nil>", "literal": "lit",
	}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if got[2].GlobalName != "g" || got[2].ValueFrom == nil {
		t.Errorf("fields lost: %+v", got[2])
	}
	if tp.Outputs.Parameters[0].Value != nil {
		t.Error("template modified")
	}

	bad := parseTemplate(t, `{name: t, container: {image: x}, outputs: {parameters: [
	  {name: a, valueFrom: {path: `+dir+`/missing}},
	  {name: b, valueFrom: {path: `+dir+`/plain}},
	  {name: c, valueFrom: {path: `+dir+`/adir}}]}}`)
	got, err = ReadOutputParameters(bad, Paths{WorkDir: dir})
	wantErr := `output parameter "a": open ` + dir + `/missing: no such file or directory; output parameter "c": ` + dir + `/adir is a directory`
	if err == nil || err.Error() != wantErr {
		t.Errorf("err = %v\nwant  %s", err, wantErr)
	}
	if len(got) != 3 || got[1].Value == nil || got[1].Value.String() != "value" {
		t.Errorf("the readable parameter was lost: %+v", got)
	}
	if got, err := ReadOutputParameters(parseTemplate(t, `{name: t, container: {image: x}}`), Paths{WorkDir: dir}); got != nil || err != nil {
		t.Errorf("no outputs: %v %v", got, err)
	}
}

func TestPathsResolve(t *testing.T) {
	p := Paths{WorkDir: "/w", Tmp: "/s/tmp"}
	for in, want := range map[string]string{"out.txt": "/w/out.txt", "/tmp/a/b": "/s/tmp/a/b", "/tmp": "/s/tmp", "/tmpx/a": "/tmpx/a", "/etc/x": "/etc/x"} {
		if got := p.Resolve(in); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (Paths{}).Resolve("/tmp/a"); got != "/tmp/a" {
		t.Errorf("no private tmp: %q", got)
	}
}
