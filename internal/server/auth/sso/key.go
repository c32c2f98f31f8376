package sso

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// minKeyBytes is the least secret a key file must hold.
const minKeyBytes = 32

// keys are the AES-256 keys derived from the key file's secret, one per
// use, so that a login-state cookie is never accepted as a session.
type keys struct {
	session []byte
	state   []byte
}

func deriveKeys(secret []byte) keys {
	derive := func(purpose string) []byte {
		h := sha256.New()
		h.Write([]byte("braid sso " + purpose + "\x00"))
		h.Write(secret)
		return h.Sum(nil)
	}
	return keys{session: derive("session"), state: derive("state")}
}

// loadKey reads the secret in path, or makes one there (mode 0600) when the
// file does not exist; "" gives a secret that lasts as long as the process.
func loadKey(path string, log *slog.Logger) ([]byte, error) {
	if path == "" {
		return randomBytes(48)
	}
	secret, err := readKey(path, log)
	if !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	fresh, err := randomBytes(48)
	if err != nil {
		return nil, err
	}
	text := []byte(base64.RawStdEncoding.EncodeToString(fresh) + "\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sso key file %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sso-key-*")
	if err != nil {
		return nil, fmt.Errorf("sso key file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(text)
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return nil, fmt.Errorf("sso key file %s: %w", path, err)
	}
	// Link fails if another process made the file first: then use theirs.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("sso key file %s: %w", path, err)
	}
	return readKey(path, log)
}

func readKey(path string, log *slog.Logger) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("sso key file %s: %w", path, err)
	}
	secret := []byte(strings.TrimSpace(string(data)))
	if len(secret) < minKeyBytes {
		return nil, fmt.Errorf("sso key file %s: holds %d bytes, want at least %d (delete it to make a new one; every session ends)",
			path, len(secret), minKeyBytes)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		log.Warn("the SSO key file can be read by others: make it mode 0600", "file", path, "mode", fi.Mode().Perm().String())
	}
	return secret, nil
}

func randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("random: %w", err)
	}
	return b, nil
}
