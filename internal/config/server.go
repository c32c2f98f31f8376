package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ServerInfo is what a running braid server records in its data
// directory, so that the CLI finds it without flags.
type ServerInfo struct {
	Address string `json:"address"`
	PID     int    `json:"pid"`
	// Secure: the server serves TLS.
	Secure bool `json:"secure,omitempty"`
	// Fingerprint is the lowercase hex SHA-256 of the server's leaf
	// certificate, which the CLI pins when it talks to this server.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// ServerFile is where a server on dataDir records its ServerInfo.
func ServerFile(dataDir string) string { return filepath.Join(dataDir, "server.json") }

// WriteServerInfo writes info to path atomically, readable by its owner
// only (mode 0600).
func WriteServerInfo(path string, info ServerInfo) error {
	data, err := json.Marshal(info)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp) // WriteFile keeps the mode of a file that exists
	if err := os.WriteFile(tmp, append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadServerInfo reads what a server recorded; os.ErrNotExist when no
// server has.
func ReadServerInfo(path string) (ServerInfo, error) {
	var info ServerInfo
	data, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(data, &info); err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	if info.Address == "" {
		return info, fmt.Errorf("%s: %w", path, errors.New("no address"))
	}
	return info, nil
}
