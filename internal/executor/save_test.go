package executor

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

func TestSaveOutputs(t *testing.T) {
	plan := func(logs bool) *step.ArtifactPlan {
		return &step.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}},
			Key: "wf/pod", ArchiveLogs: logs}
	}
	// The step's files, as it left them (paths as it saw them).
	stepFiles := map[string]string{"/tmp/out.txt": "out", "/tmp/dir/a.txt": "a", "/tmp/dir/s/b.txt": "b", "rel.txt": "rel"}
	type stored struct {
		key  string
		want map[string]string // loaded back as an input: path -> content ("/" suffix: a directory)
	}
	cases := []struct {
		name   string
		tmpl   string // $URL is the http server
		plan   *step.ArtifactPlan
		want   []string // name=location of each returned artifact
		stored []stored
		err    string
	}{{
		name: "a file and a directory, tar+gzip",
		tmpl: `{name: t, outputs: {artifacts: [{name: out, path: /tmp/out.txt, globalName: g}, {name: dir, path: /tmp/dir}]}}`,
		plan: plan(false),
		want: []string{"out=file wf/pod/out.tgz", "dir=file wf/pod/dir.tgz"},
		stored: []stored{{key: "wf/pod/out.tgz", want: map[string]string{"": "out"}},
			{key: "wf/pod/dir.tgz", want: map[string]string{"a.txt": "a", "s/b.txt": "b"}}},
	}, {
		name: "archive none: a file as it is, a directory object by object",
		tmpl: `{name: t, outputs: {artifacts: [{name: out, path: rel.txt, archive: {none: {}}}, {name: dir, path: /tmp/dir, archive: {none: {}}}]}}`,
		plan: plan(false),
		want: []string{"out=file wf/pod/out", "dir=file wf/pod/dir"},
		stored: []stored{{key: "wf/pod/out", want: map[string]string{"": "rel"}},
			{key: "wf/pod/dir", want: map[string]string{"a.txt": "a", "s/b.txt": "b"}}},
	}, {
		name: "a location of its own, and a key-only one that inherits the repository",
		tmpl: `{name: t, outputs: {artifacts: [{name: own, path: /tmp/out.txt, file: {key: mine/o.tgz}}, {name: ko, path: /tmp/out.txt, s3: {key: ko/o.tgz}}]}}`,
		plan: plan(false),
		want: []string{"own=file mine/o.tgz", "ko=file ko/o.tgz"},
		stored: []stored{{key: "mine/o.tgz", want: map[string]string{"": "out"}},
			{key: "ko/o.tgz", want: map[string]string{"": "out"}}},
	}, {
		name:   "the template's archiveLocation",
		tmpl:   `{name: t, archiveLocation: {file: {key: arch}}, outputs: {artifacts: [{name: out, path: /tmp/out.txt}]}}`,
		plan:   plan(false),
		want:   []string{"out=file arch/out.tgz"},
		stored: []stored{{key: "arch/out.tgz", want: map[string]string{"": "out"}}},
	}, {
		name:   "http PUT",
		tmpl:   `{name: t, outputs: {artifacts: [{name: out, path: /tmp/out.txt, http: {url: "$URL/up/out.tgz"}}]}}`,
		want:   []string{"out=http $URL/up/out.tgz"},
		stored: []stored{{key: "up/out.tgz", want: map[string]string{"": "out"}}},
	}, {
		name:   "archive logs from the plan",
		tmpl:   `{name: t, outputs: {artifacts: [{name: out, path: /tmp/out.txt}]}}`,
		plan:   plan(true),
		want:   []string{"out=file wf/pod/out.tgz", "main-logs=file wf/pod/main.log"},
		stored: []stored{{key: "wf/pod/main.log", want: map[string]string{"": "the log\n"}}},
	}, {
		name:   "archive logs from the template",
		tmpl:   `{name: t, archiveLocation: {archiveLogs: true}}`,
		plan:   plan(false),
		want:   []string{"main-logs=file wf/pod/main.log"},
		stored: []stored{{key: "wf/pod/main.log", want: map[string]string{"": "the log\n"}}},
	}, {
		name: "the template turns archive logs off",
		tmpl: `{name: t, archiveLocation: {archiveLogs: false}}`,
		plan: plan(true),
	}, {
		name: "an optional output that is missing is left out",
		tmpl: `{name: t, outputs: {artifacts: [{name: nope, path: /tmp/nope, optional: true}, {name: out, path: /tmp/out.txt}]}}`,
		plan: plan(false),
		want: []string{"out=file wf/pod/out.tgz"},
	}, {
		name: "a required output that is missing fails, the others are saved",
		tmpl: `{name: t, outputs: {artifacts: [{name: nope, path: /tmp/nope}, {name: out, path: /tmp/out.txt}]}}`,
		plan: plan(false),
		want: []string{"out=file wf/pod/out.tgz"},
		err:  `output artifact "nope": stat /tmp/nope: no such file or directory`,
	}, {
		name: "no repository",
		tmpl: `{name: t, outputs: {artifacts: [{name: out, path: /tmp/out.txt}]}}`,
		err:  `output artifact "out": no artifact repository is configured for this step`,
	}, {
		name: "no driver for the kind",
		tmpl: `{name: t, outputs: {artifacts: [{name: out, path: /tmp/out.txt, s3: {bucket: b, key: k.tgz}}]}}`,
		err:  `output artifact "out" (s3 b/k.tgz): artifact location kind "s3" is not supported`,
	}, {
		name: "zip is not supported",
		tmpl: `{name: t, outputs: {artifacts: [{name: out, path: /tmp/out.txt, archive: {zip: {}}}]}}`,
		plan: plan(false),
		err:  `output artifact "out": archive strategy zip is not supported`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			for p, content := range stepFiles {
				full := f.paths.Resolve(p)
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			logPath := filepath.Join(t.TempDir(), "main.log")
			if err := os.WriteFile(logPath, []byte("the log\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			scratch := t.TempDir()
			paths := f.paths
			paths.Scratch = scratch
			tp := parseTemplate(t, strings.ReplaceAll(tc.tmpl, "$URL", f.url))
			got, err := SaveOutputs(context.Background(), tp, tc.plan, f.drivers, paths, logPath)
			if tc.err == "" && err != nil {
				t.Fatalf("SaveOutputs: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.err)
			}
			var names []string
			for _, a := range got {
				names = append(names, a.Name+"="+where(&a.ArtifactLocation))
			}
			var want []string
			for _, w := range tc.want {
				want = append(want, strings.ReplaceAll(w, "$URL", f.url))
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("saved (-want +got):\n%s", diff)
			}
			for _, a := range got {
				if a.Name == "out" && strings.Contains(tc.tmpl, "globalName") && a.GlobalName != "g" {
					t.Errorf("globalName lost: %+v", a)
				}
			}
			for _, s := range tc.stored {
				loadBack(t, f, s.key, s.want)
			}
			if entries, _ := os.ReadDir(scratch); len(entries) != 0 {
				t.Errorf("scratch files left: %v", entries)
			}
		})
	}
}

// loadBack loads the stored key as an input artifact, as the next step
// would, and compares the files.
func loadBack(t *testing.T, f *fixture, key string, want map[string]string) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "in")
	art := v1alpha1.Artifact{Name: "back", Path: dst, ArtifactLocation: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: key}}}
	tp := &v1alpha1.Template{Name: "next", Inputs: v1alpha1.Inputs{Artifacts: []v1alpha1.Artifact{art}}}
	if err := LoadInputs(context.Background(), tp, nil, f.drivers, Paths{}); err != nil {
		t.Fatalf("load %s back: %v", key, err)
	}
	got := map[string]string{}
	err := filepath.WalkDir(dst, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dst, p)
		if rel == "." {
			rel = ""
		}
		data, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s loaded back (-want +got):\n%s", key, diff)
	}
}

func TestInherit(t *testing.T) {
	sel := func(name string) *apiv1.SecretKeySelector {
		return &apiv1.SecretKeySelector{LocalObjectReference: apiv1.LocalObjectReference{Name: name}, Key: "k"}
	}
	yes := true
	s3Repo := &v1alpha1.ArtifactRepository{S3: &v1alpha1.S3ArtifactRepository{S3Bucket: v1alpha1.S3Bucket{
		Endpoint: "127.0.0.1:9000", Bucket: "repo", Region: "r", Insecure: &yes, AccessKeySecret: sel("a"), SecretKeySecret: sel("s")}}}
	fileRepo := &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}
	cases := []struct {
		name string
		loc  v1alpha1.ArtifactLocation
		repo *v1alpha1.ArtifactRepository
		want v1alpha1.ArtifactLocation
	}{{
		name: "key-only s3 takes everything",
		loc:  v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "k"}},
		repo: s3Repo,
		want: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: s3Repo.S3.S3Bucket, Key: "k"}},
	}, {
		name: "its own bucket and credentials are kept",
		loc: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: v1alpha1.S3Bucket{Bucket: "mine",
			AccessKeySecret: sel("mine-a"), SecretKeySecret: sel("mine-s")}, Key: "k"}},
		repo: s3Repo,
		want: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: v1alpha1.S3Bucket{Endpoint: "127.0.0.1:9000",
			Bucket: "mine", Region: "r", Insecure: &yes, AccessKeySecret: sel("mine-a"), SecretKeySecret: sel("mine-s")}, Key: "k"}},
	}, {
		name: "key-only s3 in a file repository becomes a file key",
		loc:  v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "a/b"}},
		repo: fileRepo,
		want: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "a/b"}},
	}, {
		name: "an s3 bucket without an endpoint is a top folder of the file repository",
		loc:  v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: v1alpha1.S3Bucket{Bucket: "my-bucket"}, Key: "logs/"}},
		repo: fileRepo,
		want: v1alpha1.ArtifactLocation{File: &v1alpha1.FileArtifact{Key: "my-bucket/logs"}},
	}, {
		name: "an s3 location with an endpoint is not the file repository's",
		loc:  v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: v1alpha1.S3Bucket{Endpoint: "s3.example:9000", Bucket: "b"}, Key: "k"}},
		repo: fileRepo,
		want: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{S3Bucket: v1alpha1.S3Bucket{Endpoint: "s3.example:9000", Bucket: "b"}, Key: "k"}},
	}, {
		name: "a complete location of another kind is kept",
		loc:  v1alpha1.ArtifactLocation{HTTP: &v1alpha1.HTTPArtifact{URL: "http://x"}},
		repo: s3Repo,
		want: v1alpha1.ArtifactLocation{HTTP: &v1alpha1.HTTPArtifact{URL: "http://x"}},
	}, {
		name: "no repository",
		loc:  v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "k"}},
		want: v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "k"}},
	}}
	for _, tc := range cases {
		got := inherit(tc.loc, tc.repo)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	// The repository is not shared with the result.
	got := inherit(v1alpha1.ArtifactLocation{S3: &v1alpha1.S3Artifact{Key: "k"}}, s3Repo)
	got.S3.AccessKeySecret.Name = "changed"
	if s3Repo.S3.AccessKeySecret.Name != "a" {
		t.Error("inherit shares the repository's secrets")
	}
}

// A required output that is missing wraps fs.ErrNotExist; an unsupported
// archive wraps artifact.ErrUnsupported.
func TestSaveOutputsErrorsWrap(t *testing.T) {
	f := newFixture(t)
	tp := parseTemplate(t, `{name: t, outputs: {artifacts: [{name: a, path: /tmp/nope}, {name: z, path: /tmp, archive: {zip: {}}}]}}`)
	_, err := SaveOutputs(context.Background(), tp, &step.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}}, f.drivers, f.paths, "")
	if !errors.Is(err, fs.ErrNotExist) || !errors.Is(err, artifact.ErrUnsupported) {
		t.Fatalf("err = %v", err)
	}
	if want := `output artifact "a": stat /tmp/nope: no such file or directory; output artifact "z": archive strategy zip is not supported`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want %q", err, want)
	}
}
