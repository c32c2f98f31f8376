package cli

import (
	"strings"
	"testing"

	"github.com/braidwf/braid/internal/app"
)

func TestBackendFlagsValidate(t *testing.T) {
	tests := []struct {
		name  string
		flags backendFlags
		err   string // "" for valid
		ns    string
	}{
		{name: "embedded", flags: backendFlags{backend: backendEmbedded}},
		{name: "kube, every namespace", flags: backendFlags{backend: backendKube}},
		{name: "namespaced with a managed namespace", flags: backendFlags{backend: backendKube, namespaced: true, managedNS: "team-a"}, ns: "team-a"},
		{name: "namespaced defaults to where braid runs", flags: backendFlags{backend: backendKube, namespaced: true}, ns: app.InstallNamespace()},
		{name: "managed namespace without --namespaced", flags: backendFlags{backend: backendKube, managedNS: "team-a"},
			err: "--managed-namespace needs --namespaced"},
		{name: "namespaced on the embedded backend", flags: backendFlags{backend: backendEmbedded, namespaced: true},
			err: "need --backend kube"},
		{name: "unknown backend", flags: backendFlags{backend: "nomad"}, err: `--backend "nomad"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.flags.validate()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("validate: %v, want %q", err, tc.err)
			}
			if got := tc.flags.namespace(); tc.err == "" && got != tc.ns {
				t.Errorf("namespace %q, want %q", got, tc.ns)
			}
		})
	}
}
