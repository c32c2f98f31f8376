package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseClients(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string]string
		want    []Client
		wantErr string // substring; "" means no error
	}{
		{
			name: "empty",
			data: nil,
			want: []Client{},
		},
		{
			name: "all types sorted by name",
			data: map[string]string{
				"gitlab.com":      "type: gitlab\nsecret: \"g\"\n",
				"github.com":      "type: github\nsecret: \"shh!\"\n",
				"bitbucketserver": "type: bitbucketserver\nsecret: s\n",
				"bitbucket.org":   "type: bitbucket\nsecret: \"my-uuid\"\n",
			},
			want: []Client{
				{Name: "bitbucket.org", Type: TypeBitbucket, Secret: "my-uuid"},
				{Name: "bitbucketserver", Type: TypeBitbucketServer, Secret: "s"},
				{Name: "github.com", Type: TypeGitHub, Secret: "shh!"},
				{Name: "gitlab.com", Type: TypeGitLab, Secret: "g"},
			},
		},
		{
			name: "extra fields are ignored",
			data: map[string]string{"sa": "type: github\nsecret: x\nnote: hi\n"},
			want: []Client{{Name: "sa", Type: TypeGitHub, Secret: "x"}},
		},
		{
			name:    "malformed YAML",
			data:    map[string]string{"good": "type: github\nsecret: x\n", "broken": "type: [github\nsecret: x"},
			wantErr: `"broken"`,
		},
		{
			name:    "value is not a mapping",
			data:    map[string]string{"scalar": "just a string"},
			wantErr: `"scalar"`,
		},
		{
			name:    "unknown type",
			data:    map[string]string{"sa": "type: gitea\nsecret: x\n"},
			wantErr: `webhook client "sa" in secret argo-workflows-webhook-clients: unknown type "gitea"`,
		},
		{
			name:    "type is case-sensitive",
			data:    map[string]string{"sa": "type: GitHub\nsecret: x\n"},
			wantErr: `unknown type "GitHub"`,
		},
		{
			name:    "missing type",
			data:    map[string]string{"sa": "secret: x\n"},
			wantErr: `unknown type ""`,
		},
		{
			name:    "empty secret",
			data:    map[string]string{"sa": "type: gitlab\nsecret: \"\"\n"},
			wantErr: `webhook client "sa" in secret argo-workflows-webhook-clients: empty secret`,
		},
		{
			name:    "missing secret",
			data:    map[string]string{"sa": "type: gitlab\n"},
			wantErr: "empty secret",
		},
		{
			name:    "empty name",
			data:    map[string]string{"": "type: gitlab\nsecret: x\n"},
			wantErr: "empty service-account name",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseClients(tt.data)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseClients() error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseClients() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseClients() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
