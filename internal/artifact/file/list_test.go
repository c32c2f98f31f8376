package file

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	root := filepath.Join(t.TempDir(), "repo")
	for _, f := range []string{
		"wf-1/pod-a/main.log", "wf-1/pod-a/out.tgz", "wf-1/pod-b/main.log", "wf-1/pod-b/deep/er/x.txt",
		"wf-2/pod-c/main.log", "top.txt", "wf-1/.pod-z.tmp-0123abcd/half.log",
	} {
		write(t, filepath.Join(root, f), "x", 0o644)
	}
	if err := os.Symlink(filepath.Join(root, "top.txt"), filepath.Join(root, "wf-1", "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(root, "wf-2", "etc")); err != nil {
		t.Fatal(err)
	}
	all := []string{
		"top.txt", "wf-1/pod-a/main.log", "wf-1/pod-a/out.tgz", "wf-1/pod-b/deep/er/x.txt",
		"wf-1/pod-b/main.log", "wf-2/pod-c/main.log",
	}
	tests := []struct {
		name, key string
		want      []string
	}{
		{"the whole repository", "", all},
		{"a directory", "wf-1", all[1:5]},
		{"a directory with a trailing slash", "wf-1/", all[1:5]},
		{"a nested directory", "wf-1/pod-b", []string{"wf-1/pod-b/deep/er/x.txt", "wf-1/pod-b/main.log"}},
		{"a key that is unclean", "./wf-1/../wf-2", []string{"wf-2/pod-c/main.log"}},
		{"a missing key", "nope/none", []string{}},
		{"a key under a file", "top.txt/sub", []string{}},
		{"a file is no directory", "top.txt", []string{}},
		{"a prefix is not a directory", "wf-", []string{}},
	}
	d := New(root)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := d.List(context.Background(), art(tt.key))
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("List(%q) = %#v, want %#v", tt.key, got, tt.want)
			}
		})
	}
}

func TestListEmptyRepository(t *testing.T) {
	d := New(filepath.Join(t.TempDir(), "never-saved"))
	got, err := d.List(context.Background(), art(""))
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("List of a repository never saved to = %#v, %v; want an empty list", got, err)
	}
}

func TestListErrors(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "b.txt"), "x", 0o644)
	if err := os.Symlink("/etc", filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	d := New(root)
	for _, key := range []string{"/etc", "../x", "a/../../x"} {
		_, err := d.List(context.Background(), art(key))
		if err == nil || !strings.Contains(err.Error(), "must be a relative path inside the repository") {
			t.Errorf("List(%q) = %v; want a refusal", key, err)
		}
	}
	_, err := d.List(context.Background(), art("out"))
	if err == nil || !strings.Contains(err.Error(), `list key "out" in file repository`) {
		t.Errorf("List through a link that leaves the repository = %v; want an error naming the key", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.List(ctx, art("a")); err == nil {
		t.Error("List with a cancelled context succeeded")
	}
	if _, err := d.List(context.Background(), nil); err == nil {
		t.Error("List(nil) succeeded")
	}
}
