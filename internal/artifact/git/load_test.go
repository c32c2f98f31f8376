package git_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/artifact/git"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestLoadRevisions(t *testing.T) {
	o := newOrigin(t)
	daemon := o.daemon(t)
	cases := []struct {
		name    string
		loc     v1alpha1.GitArtifact
		want    map[string]string
		commits int // commits in the checkout's history; 0: do not check
		head    string
	}{
		{"default branch", v1alpha1.GitArtifact{Repo: daemon}, map[string]string{"a.txt": "two"}, 2, o.c2},
		{"tag depth 1", v1alpha1.GitArtifact{Repo: daemon, Revision: "v1", Depth: depth(1)},
			map[string]string{"a.txt": "one"}, 1, o.c1},
		{"annotated tag", v1alpha1.GitArtifact{Repo: daemon, Revision: "v2"}, map[string]string{"a.txt": "two"}, 2, o.c2},
		{"branch revision depth 1", v1alpha1.GitArtifact{Repo: daemon, Revision: "dev", Depth: depth(1)},
			map[string]string{"a.txt": "two", "dev.txt": "dev"}, 1, o.c3},
		{"commit hash", v1alpha1.GitArtifact{Repo: daemon, Revision: o.c1}, map[string]string{"a.txt": "one"}, 1, o.c1},
		{"old commit hash, depth 1 (fetched by hash)", v1alpha1.GitArtifact{Repo: daemon, Revision: o.c1, Depth: depth(1)},
			map[string]string{"a.txt": "one"}, 1, o.c1},
		{"short commit hash", v1alpha1.GitArtifact{Repo: daemon, Revision: o.c1[:8]}, map[string]string{"a.txt": "one"}, 1, o.c1},
		{"relative revision", v1alpha1.GitArtifact{Repo: daemon, Revision: "HEAD~1"}, map[string]string{"a.txt": "one"}, 1, o.c1},
		{"branch, single", v1alpha1.GitArtifact{Repo: daemon, Branch: "dev", SingleBranch: true},
			map[string]string{"a.txt": "two", "dev.txt": "dev"}, 3, o.c3},
		{"branch and revision", v1alpha1.GitArtifact{Repo: daemon, Branch: "dev", Revision: o.c2},
			map[string]string{"a.txt": "two"}, 2, o.c2},
		{"fetch refspec", v1alpha1.GitArtifact{Repo: daemon, Fetch: []string{"+refs/pull/*/head:refs/remotes/origin/pull/*"},
			Revision: "pull/1"}, map[string]string{"a.txt": "two", "pr.txt": "pr"}, 3, o.c4},
		{"file URL", v1alpha1.GitArtifact{Repo: o.fileURL(), Revision: "v1", Depth: depth(1)},
			map[string]string{"a.txt": "one"}, 1, o.c1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "src")
			if err := git.New(nil, ns).Load(context.Background(), gitArt(tc.loc), dst); err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got := files(t, dst); !maps.Equal(got, tc.want) {
				t.Errorf("files = %v, want %v", got, tc.want)
			}
			if got := run(t, dst, "rev-parse", "HEAD"); got != tc.head {
				t.Errorf("HEAD = %s, want %s", got, tc.head)
			}
			if tc.commits > 0 {
				if got := commitCount(t, dst); got != tc.commits {
					t.Errorf("history has %d commits, want %d", got, tc.commits)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	o := newOrigin(t)
	daemon := o.daemon(t)
	closed := "git://127.0.0.1:" + strconv.Itoa(freePort(t)) + "/repo"
	cases := []struct {
		name     string
		loc      v1alpha1.GitArtifact
		want     []string
		notFound bool
	}{
		{"missing revision", v1alpha1.GitArtifact{Repo: daemon, Revision: "no-such-tag"},
			[]string{`revision "no-such-tag" not found`, daemon}, true},
		{"missing revision shallow", v1alpha1.GitArtifact{Repo: daemon, Revision: "no-such-tag", Depth: depth(1)},
			[]string{`revision "no-such-tag" not found`, "depth 1"}, true},
		{"unknown commit hash, shallow", v1alpha1.GitArtifact{Repo: daemon, Revision: strings.Repeat("ab", 20), Depth: depth(1)},
			[]string{strings.Repeat("ab", 20), "not found", "depth 1"}, true},
		{"missing repository", v1alpha1.GitArtifact{Repo: strings.TrimSuffix(daemon, "repo") + "nope"},
			[]string{"repository does not exist", "/nope"}, true},
		{"missing branch", v1alpha1.GitArtifact{Repo: daemon, Branch: "nope"}, []string{"reference does not exist"}, true},
		{"unreachable", v1alpha1.GitArtifact{Repo: closed}, []string{"cannot reach the repository", "gave up after 5 attempts", closed}, false},
		{"no repo", v1alpha1.GitArtifact{}, []string{"no repo is set"}, false},
		{"bad refspec", v1alpha1.GitArtifact{Repo: daemon, Fetch: []string{"a:b:c"}}, []string{`refspec "a:b:c"`}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "src")
			start := time.Now()
			err := git.New(nil, ns).Load(context.Background(), gitArt(tc.loc), dst)
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("Load took %v, want a bounded retry", took)
			}
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			for _, w := range append(tc.want, `"src"`) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if errors.Is(err, artifact.ErrNotFound) != tc.notFound {
				t.Errorf("errors.Is(ErrNotFound) = %v, want %v", !tc.notFound, tc.notFound)
			}
			if _, serr := os.Stat(dst); !os.IsNotExist(serr) {
				t.Errorf("a failed Load left %s behind", dst)
			}
		})
	}
}

func TestLoadBasicAuth(t *testing.T) {
	o := newOrigin(t)
	url := o.httpServer(t, "alice", "s3cret-pass")
	store := secrets{ns + "/git/user": "alice", ns + "/git/pass": "s3cret-pass", ns + "/bad/pass": "wrong-pass-77"}
	cases := []struct {
		name string
		pass string // the passwordSecret's name; "" for no credentials
		ok   bool
	}{
		{"right password", "git", true},
		{"wrong password", "bad", false},
		{"no credentials", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			loc := v1alpha1.GitArtifact{Repo: url, Revision: "v1"}
			if tc.pass != "" {
				loc.UsernameSecret, loc.PasswordSecret = selector("git", "user"), selector(tc.pass, "pass")
			}
			dst := filepath.Join(t.TempDir(), "src")
			err := git.New(store, ns).Load(context.Background(), gitArt(loc), dst)
			if tc.ok {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if got := files(t, dst)["a.txt"]; got != "one" {
					t.Fatalf("a.txt = %q", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "access denied") {
				t.Fatalf("Load = %v, want access denied", err)
			}
			for _, s := range []string{"s3cret-pass", "wrong-pass-77"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error %q leaks a password", err)
				}
			}
		})
	}
}

func TestSubmodules(t *testing.T) {
	sub := newOrigin(t)
	o := newOrigin(t)
	dir := filepath.Join(o.base, "repo")
	run(t, dir, "submodule", "add", "-q", sub.fileURL(), "lib")
	run(t, dir, "commit", "-q", "-m", "add lib")
	for _, disable := range []bool{false, true} {
		dst := filepath.Join(t.TempDir(), "src")
		loc := v1alpha1.GitArtifact{Repo: o.fileURL(), DisableSubmodules: disable}
		if err := git.New(nil, ns).Load(context.Background(), gitArt(loc), dst); err != nil {
			t.Fatalf("Load (disableSubmodules=%v): %v", disable, err)
		}
		_, err := os.Stat(filepath.Join(dst, "lib", "a.txt"))
		if disable != os.IsNotExist(err) {
			t.Errorf("disableSubmodules=%v: lib/a.txt stat = %v", disable, err)
		}
	}
}

func TestLoadIntoNonEmptyDirectory(t *testing.T) {
	o := newOrigin(t)
	dst := t.TempDir()
	keep := filepath.Join(dst, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := git.New(nil, ns).Load(context.Background(), gitArt(v1alpha1.GitArtifact{Repo: o.fileURL()}), dst)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("Load = %v, want a non-empty destination error", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("Load removed what was there: %v", err)
	}
}

func TestOutputOperationsUnsupported(t *testing.T) {
	drv := git.New(nil, ns)
	art := gitArt(v1alpha1.GitArtifact{Repo: "https://user:hunter2@example.invalid/r.git"})
	_, openErr := drv.OpenStream(context.Background(), art)
	for _, err := range []error{drv.Save(context.Background(), t.TempDir(), art), drv.Delete(context.Background(), art), openErr} {
		if !errors.Is(err, artifact.ErrUnsupported) || !strings.Contains(err.Error(), "input-only") {
			t.Errorf("err = %v, want ErrUnsupported", err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error %q leaks the URL's password", err)
		}
	}
}
