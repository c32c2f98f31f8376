package webhook

import (
	"net/http"
	"testing"
)

// FuzzMatch feeds arbitrary header values and bodies to every client type:
// Match must never panic, and a match must name one of the clients.
func FuzzMatch(f *testing.F) {
	const secret = "shh!"
	f.Add("push", sha256Sig(secret, body), sha1Sig(secret, body), "Push Hook", secret, "repo:push", secret, body)
	f.Add("", "sha256=", "sha1=zz", "", "", "", "", []byte{})
	f.Add("x", "sha256=00ff", sha256Sig(secret, nil), "e", "shh", "k", "uuid", []byte(nil))

	clients := []Client{
		{Name: "bb", Type: TypeBitbucket, Secret: secret},
		{Name: "bbs", Type: TypeBitbucketServer, Secret: secret},
		{Name: "gh", Type: TypeGitHub, Secret: secret},
		{Name: "gl", Type: TypeGitLab, Secret: secret},
	}
	names := map[string]bool{"bb": true, "bbs": true, "gh": true, "gl": true}

	f.Fuzz(func(t *testing.T, ghEvent, sig256, sig, glEvent, glToken, eventKey, hookUUID string, b []byte) {
		h := http.Header{}
		h.Set("X-GitHub-Event", ghEvent)
		h.Set("X-Hub-Signature-256", sig256)
		h.Set("X-Hub-Signature", sig)
		h.Set("X-Gitlab-Event", glEvent)
		h.Set("X-Gitlab-Token", glToken)
		h.Set("X-Event-Key", eventKey)
		h.Set("X-Hook-UUID", hookUUID)
		name, ok := Match(clients, h, b)
		if ok != names[name] {
			t.Fatalf("Match() = (%q, %v): a match must name a client, a miss must not", name, ok)
		}
		if !ok && name != "" {
			t.Fatalf("Match() = (%q, false), want an empty name", name)
		}
	})
}
