package executor

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// fileRepo is the plan of a run whose repository is the file repository.
func fileRepo() *step.ArtifactPlan {
	return &step.ArtifactPlan{Repository: &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}}
}

func TestRunData(t *testing.T) {
	f := newFixture(t)
	for _, key := range []string{
		"wf-1/pod-a/main.log", "wf-1/pod-a/out.tgz", "wf-1/pod-b/main.log", "wf-2/pod-c/main.log", "wf-2/pod-c/x.txt",
	} {
		f.put(t, key, []byte("x"))
	}
	cases := []struct {
		name string
		tmpl string
		plan *step.ArtifactPlan
		want string
	}{
		{"the whole repository, no transformation",
			`{name: d, data: {source: {artifactPaths: {name: a, file: {key: ""}}}}}`, nil,
			`["wf-1/pod-a/main.log","wf-1/pod-a/out.tgz","wf-1/pod-b/main.log","wf-2/pod-c/main.log","wf-2/pod-c/x.txt"]`},
		{"filter, as in data-transformations.yaml",
			`{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-1}}},
			  transformation: [{expression: 'filter(data, {# endsWith "main.log"})'}]}}`, nil,
			`["wf-1/pod-a/main.log","wf-1/pod-b/main.log"]`},
		{"each step takes the value of the one before",
			`{name: d, data: {source: {artifactPaths: {name: a, file: {key: ""}}},
			  transformation: [{expression: 'filter(data, {# endsWith "main.log"})'},
			                   {expression: ""},
			                   {expression: 'map(data, {split(#, "/")[1]})'},
			                   {expression: 'map(data, upper(#))'}]}}`, nil,
			`["POD-A","POD-B","POD-C"]`},
		{"a value that is not a list", `{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-2}}},
			  transformation: [{expression: 'len(data)'}]}}`, nil, `2`},
		{"the helper functions are there", `{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-2}}},
			  transformation: [{expression: 'toJson(data)'}]}}`, nil, `"[\"wf-2/pod-c/main.log\",\"wf-2/pod-c/x.txt\"]"`},
		{"an empty listing is an empty list",
			`{name: d, data: {source: {artifactPaths: {name: a, file: {key: no/such}}}}}`, nil, `[]`},
		{"a filter that keeps nothing",
			`{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-1}}},
			  transformation: [{expression: 'filter(data, {# endsWith ".none"})'}]}}`, nil, `[]`},
		{"a key-only s3 location inherits the file repository",
			`{name: d, data: {source: {artifactPaths: {name: a, s3: {key: wf-2/pod-c}}}}}`, fileRepo(),
			`["wf-2/pod-c/main.log","wf-2/pod-c/x.txt"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RunData(context.Background(), parseTemplate(t, tc.tmpl), tc.plan, f.drivers)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("result = %s\nwant     %s", got, tc.want)
			}
		})
	}
}

func TestRunDataErrors(t *testing.T) {
	f := newFixture(t)
	f.put(t, "wf-1/main.log", []byte("x"))
	cases := []struct {
		name string
		tmpl string
		plan *step.ArtifactPlan
		want []string
		is   error
	}{
		{"a bad expression", `{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-1}}},
			  transformation: [{expression: 'filter(data, {# endsWith "x"})'}, {expression: 'data +* 1'}]}}`, nil,
			[]string{"transformation 1", "data +* 1"}, nil},
		{"an expression that fails when it runs", `{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-1}}},
			  transformation: [{expression: 'data[7]'}]}}`, nil,
			[]string{"transformation 0", "data[7]"}, nil},
		{"an unknown variable", `{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-1}}},
			  transformation: [{expression: 'filter(items, {# != ""})'}]}}`, nil,
			[]string{"transformation 0", "filter(items"}, nil},
		{"a key that leaves the repository", `{name: d, data: {source: {artifactPaths: {name: a, file: {key: ../etc}}}}}`, nil,
			[]string{`list artifactPaths: artifact "a"`, `"../etc" must be a relative path inside the repository`}, nil},
		{"a kind with no driver", `{name: d, data: {source: {artifactPaths: {name: a, s3: {bucket: b, key: k}}}}}`, nil,
			[]string{`artifactPaths "a"`, "s3 b/k", "not supported"}, artifact.ErrUnsupported},
		{"a kind that cannot be listed", `{name: d, data: {source: {artifactPaths: {name: a, http: {url: "http://h/x"}}}}}`, nil,
			[]string{`list artifactPaths "a" (http http://h/x): cannot list a http location`}, artifact.ErrUnsupported},
		{"no location", `{name: d, data: {source: {artifactPaths: {name: a}}}}`, nil,
			[]string{`artifactPaths "a" has no location`}, nil},
		{"no source", `{name: d, data: {source: {}}}`, nil, []string{"no source is set"}, nil},
		{"no data", `{name: d, container: {image: alpine}}`, nil, []string{"has no data"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RunData(context.Background(), parseTemplate(t, tc.tmpl), tc.plan, f.drivers)
			if err == nil {
				t.Fatalf("RunData = %s, want an error", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
		})
	}
}

func TestRunDataCancelled(t *testing.T) {
	f := newFixture(t)
	f.put(t, "wf-1/main.log", []byte("x"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tp := parseTemplate(t, `{name: d, data: {source: {artifactPaths: {name: a, file: {key: wf-1}}}}}`)
	if _, err := RunData(ctx, tp, nil, f.drivers); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunData with a cancelled context = %v, want context.Canceled", err)
	}
}
