package store

import "math/rand/v2"

// nameAlphabet is the alphabet of Kubernetes' generateName suffixes:
// lowercase consonants and digits that cannot spell words or be confused.
const nameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// GenerateName returns prefix followed by 5 random characters, as the
// Kubernetes API server resolves metadata.generateName. The prefix is cut so
// that the name fits 63 characters. Callers retry on ErrAlreadyExists.
func GenerateName(prefix string) string {
	const suffix, maxLen = 5, 63
	if len(prefix) > maxLen-suffix {
		prefix = prefix[:maxLen-suffix]
	}
	b := make([]byte, suffix)
	for i := range b {
		b[i] = nameAlphabet[rand.IntN(len(nameAlphabet))]
	}
	return prefix + string(b)
}
