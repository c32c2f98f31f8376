package executor

import (
	"slices"
	"testing"
)

func TestImageTableLookup(t *testing.T) {
	table := MergeImageTable(BuiltinImages("/bin/braid"), ImageTable{
		"myorg/tool:1":         {Command: []string{"/usr/bin/tool"}},
		"myorg/tool":           {Command: []string{"/usr/bin/tool-any"}},
		"python:alpine*":       {Args: []string{"python3", "-u"}},
		"localhost:5000/thing": {Command: []string{"thing"}},
		"*/argosay:v9":         {Command: []string{"v9"}},
	})
	cases := []struct {
		image   string
		wantKey string // "" when nothing matches
	}{
		{"argoproj/argosay:v2", "argoproj/argosay"},
		{"argoproj/argosay", "argoproj/argosay"},
		{"argoproj/argosay:latest", "argoproj/argosay"},
		{"docker.io/argoproj/argosay:v2", "argoproj/argosay"},
		{"argoproj/argosay:v2@sha256:0123abcd", "argoproj/argosay"},
		{"quay.io/argoproj/argosay:v2", "quay.io/argoproj/argosay"},
		{"argoproj/argosay:v1", "argoproj/argosay:v1"},
		{"docker/whalesay", "docker/whalesay"},
		{"docker/whalesay:latest", "docker/whalesay"},
		{"docker.io/docker/whalesay:latest", "docker/whalesay"},
		{"python:alpine3.6", "python:alpine*"},
		{"python:alpine3.23", "python:alpine*"},
		{"python:3.12", "python"},
		{"python", "python"},
		{"docker.io/library/python:3", "python"},
		{"library/python", "python"},
		{"pythonista", ""},
		{"alpine:3.23", "alpine"},
		{"alpine", "alpine"},
		{"busybox", "busybox"},
		{"ubuntu:17.10", "ubuntu"},
		{"myorg/tool:1", "myorg/tool:1"},
		{"myorg/tool:2", "myorg/tool"},
		{"myorg/tool", "myorg/tool"},
		{"localhost:5000/thing:3", "localhost:5000/thing"},
		{"localhost:5000/thing", "localhost:5000/thing"},
		{"someone/argosay:v9", "*/argosay:v9"},
		{"nginx:1.13", ""},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.image, func(t *testing.T) {
			_, key, ok := table.Lookup(tc.image)
			if ok != (tc.wantKey != "") || key != tc.wantKey {
				t.Errorf("Lookup(%q) = %q, %v; want %q", tc.image, key, ok, tc.wantKey)
			}
		})
	}
}

func TestBuiltinImages(t *testing.T) {
	table := BuiltinImages("/bin/braid")
	cases := []struct {
		image, alias string
		command      []string
		aliasArgv    []string
	}{
		{image: "argoproj/argosay:v2", command: []string{"/bin/braid", "argosay"}, alias: "argosay", aliasArgv: []string{"/bin/braid", "argosay"}},
		{image: "argoproj/argosay:v1", command: []string{"/bin/braid", "cowsay"}, alias: "cowsay", aliasArgv: []string{"/bin/braid", "cowsay"}},
		{image: "docker/whalesay:latest", command: []string{"/bin/braid", "cowsay"}, alias: "cowsay", aliasArgv: []string{"/bin/braid", "cowsay"}},
		{image: "python:alpine3.6", alias: "python", aliasArgv: []string{"python3"}},
	}
	for _, tc := range cases {
		img, _, ok := table.Lookup(tc.image)
		if !ok {
			t.Fatalf("%s not found", tc.image)
		}
		if tc.command != nil && !slices.Equal(img.Command, tc.command) {
			t.Errorf("%s command = %q, want %q", tc.image, img.Command, tc.command)
		}
		if got := img.Aliases[tc.alias]; !slices.Equal(got, tc.aliasArgv) {
			t.Errorf("%s alias %s = %q, want %q", tc.image, tc.alias, got, tc.aliasArgv)
		}
	}
}

func TestMergeImageTable(t *testing.T) {
	builtin := ImageTable{"a": {Command: []string{"a"}}, "b": {Command: []string{"b"}}}
	user := ImageTable{"b": {Command: []string{"user-b"}}, "c": {Command: []string{"c"}}}
	got := MergeImageTable(builtin, user)
	if len(got) != 3 || got["b"].Command[0] != "user-b" || got["a"].Command[0] != "a" || got["c"].Command[0] != "c" {
		t.Errorf("merged = %v", got)
	}
	if builtin["b"].Command[0] != "b" || len(builtin) != 2 {
		t.Errorf("builtin modified: %v", builtin)
	}
}
