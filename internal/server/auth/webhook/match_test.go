package webhook

import (
	"net/http"
	"strings"
	"testing"
)

var body = []byte(`{"ref":"refs/heads/main","after":"abc123"}`)

func TestMatchByType(t *testing.T) {
	const secret = "shh!"
	tests := []struct {
		name   string
		typ    string
		h      http.Header
		body   []byte // nil means the shared body
		wantOK bool
	}{
		// github
		{"github sha256", TypeGitHub, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig(secret, body)), nil, true},
		{"github legacy sha1", TypeGitHub, headers("X-GitHub-Event", "push", "X-Hub-Signature", sha1Sig(secret, body)), nil, true},
		{"github sha1 ignored when sha256 present and wrong", TypeGitHub, headers("X-GitHub-Event", "push",
			"X-Hub-Signature-256", sha256Sig("other", body), "X-Hub-Signature", sha1Sig(secret, body)), nil, false},
		{"github sha256 wins over a wrong sha1", TypeGitHub, headers("X-GitHub-Event", "push",
			"X-Hub-Signature-256", sha256Sig(secret, body), "X-Hub-Signature", "sha1=00"), nil, true},
		{"github wrong secret", TypeGitHub, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig("nope", body)), nil, false},
		{"github tampered body", TypeGitHub, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig(secret, body)), []byte("{}"), false},
		{"github missing event", TypeGitHub, headers("X-Hub-Signature-256", sha256Sig(secret, body)), nil, false},
		{"github missing signature", TypeGitHub, headers("X-GitHub-Event", "push"), nil, false},
		{"github bad hex", TypeGitHub, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", "sha256=zz"), nil, false},
		{"github wrong prefix", TypeGitHub, headers("X-GitHub-Event", "push",
			"X-Hub-Signature-256", strings.Replace(sha256Sig(secret, body), "sha256=", "sha1=", 1)), nil, false},
		{"github truncated signature", TypeGitHub, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig(secret, body)[:20]), nil, false},
		{"github header names are case-insensitive", TypeGitHub, http.Header{
			"X-Github-Event": {"push"}, "X-Hub-Signature-256": {sha256Sig(secret, body)},
		}, nil, true},

		// gitlab
		{"gitlab token", TypeGitLab, headers("X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", secret), nil, true},
		{"gitlab wrong token", TypeGitLab, headers("X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", "shh"), nil, false},
		{"gitlab missing token", TypeGitLab, headers("X-Gitlab-Event", "Push Hook"), nil, false},
		{"gitlab missing event", TypeGitLab, headers("X-Gitlab-Token", secret), nil, false},
		{"gitlab ignores github signature", TypeGitLab, headers("X-Gitlab-Event", "Push Hook",
			"X-Hub-Signature-256", sha256Sig(secret, body)), nil, false},

		// bitbucket (cloud)
		{"bitbucket sha256", TypeBitbucket, headers("X-Event-Key", "repo:push", "X-Hub-Signature", sha256Sig(secret, body)), nil, true},
		{"bitbucket hook uuid", TypeBitbucket, headers("X-Event-Key", "repo:push", "X-Hook-UUID", secret), nil, true},
		{"bitbucket wrong secret", TypeBitbucket, headers("X-Event-Key", "repo:push", "X-Hub-Signature", sha256Sig("nope", body)), nil, false},
		{"bitbucket wrong uuid", TypeBitbucket, headers("X-Event-Key", "repo:push", "X-Hook-UUID", "other-uuid"), nil, false},
		{"bitbucket sha1 not accepted", TypeBitbucket, headers("X-Event-Key", "repo:push", "X-Hub-Signature", sha1Sig(secret, body)), nil, false},
		{"bitbucket missing event key", TypeBitbucket, headers("X-Hub-Signature", sha256Sig(secret, body)), nil, false},
		{"bitbucket missing signature and uuid", TypeBitbucket, headers("X-Event-Key", "repo:push"), nil, false},

		// bitbucket server
		{"bitbucketserver sha256", TypeBitbucketServer, headers("X-Event-Key", "repo:refs_changed", "X-Hub-Signature", sha256Sig(secret, body)), nil, true},
		{"bitbucketserver wrong secret", TypeBitbucketServer, headers("X-Event-Key", "repo:refs_changed", "X-Hub-Signature", sha256Sig("nope", body)), nil, false},
		{"bitbucketserver uuid not accepted", TypeBitbucketServer, headers("X-Event-Key", "repo:refs_changed", "X-Hook-UUID", secret), nil, false},
		{"bitbucketserver missing signature", TypeBitbucketServer, headers("X-Event-Key", "repo:refs_changed"), nil, false},
		{"bitbucketserver missing event key", TypeBitbucketServer, headers("X-Hub-Signature", sha256Sig(secret, body)), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.body
			if b == nil {
				b = body
			}
			clients := []Client{{Name: "sa", Type: tt.typ, Secret: secret}}
			name, ok := Match(clients, tt.h, b)
			if ok != tt.wantOK {
				t.Fatalf("Match() ok = %v, want %v", ok, tt.wantOK)
			}
			if ok && name != "sa" {
				t.Errorf("Match() name = %q, want %q", name, "sa")
			}
			if !ok && name != "" {
				t.Errorf("Match() name = %q on no match, want empty", name)
			}
		})
	}
}

func TestMatchOrder(t *testing.T) {
	clients := []Client{
		{Name: "a-gitlab", Type: TypeGitLab, Secret: "one"},
		{Name: "b-github", Type: TypeGitHub, Secret: "two"},
		{Name: "c-github", Type: TypeGitHub, Secret: "two"},
		{Name: "d-github", Type: TypeGitHub, Secret: "three"},
	}
	tests := []struct {
		name     string
		clients  []Client
		h        http.Header
		wantName string
		wantOK   bool
	}{
		{"second client matches", clients[:2], headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig("two", body)), "b-github", true},
		{"first of two equal clients wins", clients, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig("two", body)), "b-github", true},
		{"last client matches", clients, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig("three", body)), "d-github", true},
		{"no client matches", clients, headers("X-GitHub-Event", "push", "X-Hub-Signature-256", sha256Sig("four", body)), "", false},
		{"no clients", nil, headers("X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", "one"), "", false},
		{"unknown type never matches", []Client{{Name: "x", Type: "gitea", Secret: "one"}},
			headers("X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", "one"), "", false},
		{"empty secret never matches", []Client{{Name: "x", Type: TypeGitLab}},
			headers("X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", ""), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, ok := Match(tt.clients, tt.h, body)
			if name != tt.wantName || ok != tt.wantOK {
				t.Errorf("Match() = (%q, %v), want (%q, %v)", name, ok, tt.wantName, tt.wantOK)
			}
		})
	}
}

// TestMatchParsedClients runs the whole path from the Secret's data.
func TestMatchParsedClients(t *testing.T) {
	clients, err := ParseClients(map[string]string{
		"github.com": "type: github\nsecret: \"shh!\"\n",
		"gitlab.com": "type: gitlab\nsecret: \"shh!\"\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	name, ok := Match(clients, headers("X-Gitlab-Event", "Push Hook", "X-Gitlab-Token", "shh!"), body)
	if !ok || name != "gitlab.com" {
		t.Errorf("Match() = (%q, %v), want (gitlab.com, true)", name, ok)
	}
}
