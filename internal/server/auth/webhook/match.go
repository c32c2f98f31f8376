package webhook

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"hash"
	"net/http"
	"strings"
)

// Header names the checks read. http.Header.Get canonicalises them, so
// their spelling here only needs to be readable.
const (
	headerGitHubEvent     = "X-GitHub-Event"
	headerHubSignature    = "X-Hub-Signature"
	headerHubSignature256 = "X-Hub-Signature-256"
	headerGitLabEvent     = "X-Gitlab-Event"
	headerGitLabToken     = "X-Gitlab-Token"
	headerEventKey        = "X-Event-Key"
	headerHookUUID        = "X-Hook-UUID"
)

// check reports whether a request with headers h and body came from a
// sender configured with secret.
type check func(secret string, h http.Header, body []byte) bool

// checks maps each client type to its signature check. It is also the set
// of types ParseClients accepts.
var checks = map[string]check{
	TypeGitHub:          checkGitHub,
	TypeGitLab:          checkGitLab,
	TypeBitbucket:       checkBitbucket,
	TypeBitbucketServer: checkBitbucketServer,
}

// Match returns the name of the first client (in the order given) whose
// signature check passes for the request's headers and raw body. A client
// of an unknown type never matches. ok is false when none does.
func Match(clients []Client, h http.Header, body []byte) (name string, ok bool) {
	for _, c := range clients {
		chk, known := checks[c.Type]
		if !known || c.Secret == "" {
			continue
		}
		if chk(c.Secret, h, body) {
			return c.Name, true
		}
	}
	return "", false
}

func checkGitHub(secret string, h http.Header, body []byte) bool {
	if !present(h, headerGitHubEvent) {
		return false
	}
	if sig, ok := value(h, headerHubSignature256); ok {
		return validHMAC(sha256.New, "sha256=", sig, secret, body)
	}
	sig, ok := value(h, headerHubSignature)
	return ok && validHMAC(sha1.New, "sha1=", sig, secret, body)
}

func checkGitLab(secret string, h http.Header, _ []byte) bool {
	if !present(h, headerGitLabEvent) {
		return false
	}
	token, ok := value(h, headerGitLabToken)
	return ok && equalString(token, secret)
}

func checkBitbucket(secret string, h http.Header, body []byte) bool {
	if !present(h, headerEventKey) {
		return false
	}
	if sig, ok := value(h, headerHubSignature); ok && validHMAC(sha256.New, "sha256=", sig, secret, body) {
		return true
	}
	uuid, ok := value(h, headerHookUUID)
	return ok && equalString(uuid, secret)
}

func checkBitbucketServer(secret string, h http.Header, body []byte) bool {
	if !present(h, headerEventKey) {
		return false
	}
	sig, ok := value(h, headerHubSignature)
	return ok && validHMAC(sha256.New, "sha256=", sig, secret, body)
}

// validHMAC reports whether sig is prefix followed by the hex HMAC of body
// keyed with secret. Malformed hex or a wrong length never matches.
func validHMAC(newHash func() hash.Hash, prefix, sig, secret string, body []byte) bool {
	hexSum, ok := strings.CutPrefix(sig, prefix)
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return false
	}
	mac := hmac.New(newHash, []byte(secret))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// equalString compares in time independent of where the strings differ.
func equalString(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// value returns the header's first value and whether the header was sent
// with a non-empty value.
func value(h http.Header, key string) (string, bool) {
	v := h.Get(key)
	return v, v != ""
}

// present reports whether the header was sent with a non-empty value.
func present(h http.Header, key string) bool {
	_, ok := value(h, key)
	return ok
}
