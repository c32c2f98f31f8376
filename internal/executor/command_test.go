package executor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apiv1 "k8s.io/api/core/v1"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "EMPTY": "", "B": "$(A)"}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "1"},
		{"x$(A)y$(A)", "x1y1"},
		{"$(EMPTY)", ""},
		{"$(B)", "$(A)"}, // no recursion
		{"$(UNKNOWN)", "$(UNKNOWN)"},
		{"$$(A)", "$(A)"},
		{"$$", "$"},
		{"$$$$", "$$"},
		{"$A", "$A"},
		{"${A}", "${A}"},
		{"$", "$"},
		{"a$", "a$"},
		{"$(A", "$(A"},
		{"$(dirname \"/x/y\")", "$(dirname \"/x/y\")"},
		{"echo $(A) $$HOME", "echo 1 $HOME"},
	}
	for _, tc := range cases {
		if got := Expand(tc.in, lookup); got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestResolveEnv(t *testing.T) {
	c := &apiv1.Container{Env: []apiv1.EnvVar{
		{Name: "A", Value: "a"},
		{Name: "B", Value: "$(A)-$(C)"}, // C comes later: not expanded
		{Name: "C", Value: "c"},
		{Name: "ARGO_X", Value: "user"},
		{Name: "POD", ValueFrom: &apiv1.EnvVarSource{FieldRef: &apiv1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}}
	got, err := ResolveEnv(c, map[string]string{"ARGO_X": "argo", "ARGO_A": "1"}, PodFields{Name: "pod-1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []EnvVar{{"A", "a"}, {"B", "a-$(C)"}, {"C", "c"}, {"ARGO_X", "argo"}, {"POD", "pod-1"}, {"ARGO_A", "1"}}
	if !slices.Equal(got, want) {
		t.Errorf("ResolveEnv = %v, want %v", got, want)
	}

	bad := []struct {
		name string
		c    apiv1.Container
		want string
	}{
		{"secret", apiv1.Container{Env: []apiv1.EnvVar{{Name: "S", ValueFrom: &apiv1.EnvVarSource{SecretKeyRef: &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: "s"}, Key: "k"}}}}},
			`env "S" refers to key "k" of secret "s"`},
		{"config map", apiv1.Container{Env: []apiv1.EnvVar{{Name: "M", ValueFrom: &apiv1.EnvVarSource{ConfigMapKeyRef: &apiv1.ConfigMapKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: "m"}, Key: "k"}}}}},
			`env "M" refers to key "k" of config map "m"`},
		{"resource", apiv1.Container{Env: []apiv1.EnvVar{{Name: "R", ValueFrom: &apiv1.EnvVarSource{ResourceFieldRef: &apiv1.ResourceFieldSelector{Resource: "limits.cpu"}}}}},
			`env "R" refers to resource "limits.cpu"`},
		{"field", apiv1.Container{Env: []apiv1.EnvVar{{Name: "F", ValueFrom: &apiv1.EnvVarSource{FieldRef: &apiv1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}}}},
			`env "F" refers to field "spec.nodeName"`},
		{"envFrom", apiv1.Container{EnvFrom: []apiv1.EnvFromSource{{SecretRef: &apiv1.SecretEnvSource{}}}},
			`envFrom refers to a secret`},
	}
	for _, tc := range bad {
		_, err := ResolveEnv(&tc.c, nil, PodFields{})
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q and ErrUnsupported", tc.name, err, tc.want)
		}
	}
}

func TestResolveCommand(t *testing.T) {
	bin := t.TempDir()
	other := t.TempDir()
	for _, name := range []string{"tool", "python3", "sh"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "tool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "noexec"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	braid := filepath.Join(bin, "braid")
	if err := os.WriteFile(braid, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	table := MergeImageTable(BuiltinImages(braid), ImageTable{
		"myorg/tool": {Command: []string{"tool", "--flag"}, Args: []string{"default"}},
	})
	path := bin + ":" + other
	p := func(name string) string { return filepath.Join(bin, name) }
	cases := []struct {
		name    string
		c       apiv1.Container
		env     []EnvVar
		want    []string
		wantErr string
	}{
		{name: "command and args", c: apiv1.Container{Image: "busybox", Command: []string{"tool", "a"}, Args: []string{"b"}},
			want: []string{p("tool"), "a", "b"}},
		{name: "first on PATH wins", c: apiv1.Container{Image: "x", Command: []string{"tool"}},
			want: []string{p("tool")}},
		{name: "absolute path", c: apiv1.Container{Image: "x", Command: []string{p("tool")}},
			want: []string{p("tool")}},
		{name: "image entrypoint with args", c: apiv1.Container{Image: "myorg/tool:3", Args: []string{"x"}},
			want: []string{p("tool"), "--flag", "x"}},
		{name: "image entrypoint and default args", c: apiv1.Container{Image: "myorg/tool"},
			want: []string{p("tool"), "--flag", "default"}},
		{name: "argosay entrypoint", c: apiv1.Container{Image: "argoproj/argosay:v2", Args: []string{"echo", "hi"}},
			want: []string{braid, "argosay", "echo", "hi"}},
		{name: "argosay without args", c: apiv1.Container{Image: "argoproj/argosay:v2"},
			want: []string{braid, "argosay"}},
		{name: "alpine args are the command", c: apiv1.Container{Image: "alpine:3.23", Args: []string{"sh", "-c", "x"}},
			want: []string{p("sh"), "-c", "x"}},
		{name: "alpine default", c: apiv1.Container{Image: "alpine"},
			want: []string{p("sh")}},
		{name: "cowsay alias", c: apiv1.Container{Image: "docker/whalesay", Command: []string{"cowsay"}, Args: []string{"hello"}},
			want: []string{braid, "cowsay", "hello"}},
		{name: "python alias when python is absent", c: apiv1.Container{Image: "python:alpine3.6", Command: []string{"python"}, Args: []string{"/s"}},
			want: []string{p("python3"), "/s"}},
		{name: "expansion of the spec only", c: apiv1.Container{Image: "myorg/tool", Args: []string{"$(A)", "$$(A)"}},
			env: []EnvVar{{"A", "1"}}, want: []string{p("tool"), "--flag", "1", "$(A)"}},
		{name: "expansion of the command", c: apiv1.Container{Image: "x", Command: []string{"$(T)"}},
			env: []EnvVar{{"T", "tool"}}, want: []string{p("tool")}},
		{name: "unknown command, unknown image", c: apiv1.Container{Image: "bar", Command: []string{"foo"}},
			wantErr: `executable file not found: "foo" (image "bar" is not in the image table; add it to the images of the config file)`},
		{name: "unknown command, known image", c: apiv1.Container{Image: "busybox", Command: []string{"foo"}},
			wantErr: `executable file not found: "foo" (not on PATH, and image "busybox" has no alias for it; add one to the images of the config file)`},
		{name: "no command, unknown image", c: apiv1.Container{Image: "bar", Args: []string{"x"}},
			wantErr: `executable file not found: the container has no command, and image "bar" is not in the image table (set command, or add the image to the images of the config file)`},
		{name: "not executable", c: apiv1.Container{Image: "bar", Command: []string{p("noexec")}},
			wantErr: `executable file not found: "` + p("noexec") + `": permission denied`},
		{name: "a directory", c: apiv1.Container{Image: "bar", Command: []string{bin}},
			wantErr: `executable file not found: "` + bin + `": permission denied`},
		{name: "missing path", c: apiv1.Container{Image: "bar", Command: []string{"/no/such"}},
			wantErr: `executable file not found: "/no/such": stat /no/such: no such file or directory`},
	}
	cache := &PathCache{}
	for _, tc := range cases {
		for _, look := range []LookPathFunc{nil, cache.LookPath} {
			got, err := ResolveCommand(&tc.c, table, tc.env, path, look)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: err = %v, want %q", tc.name, err, tc.wantErr)
				}
				continue
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("%s: ResolveCommand = %q, %v; want %q", tc.name, got, err, tc.want)
			}
		}
	}
	// The container is not modified.
	c := apiv1.Container{Image: "x", Command: []string{"tool"}, Args: []string{"$(A)"}}
	if _, err := ResolveCommand(&c, table, []EnvVar{{"A", "1"}}, path, nil); err != nil || c.Command[0] != "tool" || c.Args[0] != "$(A)" {
		t.Errorf("container modified: %+v, %v", c, err)
	}
}

func TestPathCache(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "tool")
	if err := os.WriteFile(tool, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	var c PathCache
	if got, err := c.LookPath("tool", dir); err != nil || got != tool {
		t.Fatalf("LookPath = %q, %v", got, err)
	}
	// A deleted program is noticed.
	if err := os.Remove(tool); err != nil {
		t.Fatal(err)
	}
	if _, err := c.LookPath("tool", dir); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after removal: %v", err)
	}
	if _, err := c.LookPath("tool", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("empty PATH: %v", err)
	}
}
