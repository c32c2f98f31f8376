package webhook

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"net/http"
)

// sign returns prefix + hex HMAC(secret, body) with the given hash.
func sign(newHash func() hash.Hash, prefix, secret string, body []byte) string {
	mac := hmac.New(newHash, []byte(secret))
	mac.Write(body)
	return prefix + hex.EncodeToString(mac.Sum(nil))
}

func sha256Sig(secret string, body []byte) string { return sign(sha256.New, "sha256=", secret, body) }
func sha1Sig(secret string, body []byte) string   { return sign(sha1.New, "sha1=", secret, body) }

// headers builds an http.Header from name/value pairs, canonicalising the
// names as a real request's would be.
func headers(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}
