package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{}
	src := func(flag string) Sources {
		return Sources{DataDirFlag: flag, Getenv: func(k string) string { return env[k] }, HomeDir: func() (string, error) { return home, nil }}
	}
	cfg, err := Load(src(""))
	if err != nil || cfg.DataDir != filepath.Join(home, ".braid") {
		t.Fatalf("default: %v %v", cfg, err)
	}
	env[EnvHome] = filepath.Join(home, "env")
	if cfg, _ = Load(src("")); cfg.DataDir != filepath.Join(home, "env") {
		t.Fatalf("env: %s", cfg.DataDir)
	}
	flagDir := filepath.Join(home, "flag")
	if err := os.MkdirAll(flagDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(flagDir, "config.yaml"), []byte("images:\n  myorg/tool:1:\n    command: [/usr/bin/tool]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(src(flagDir))
	if err != nil || cfg.DataDir != flagDir || cfg.Images["myorg/tool:1"].Command[0] != "/usr/bin/tool" {
		t.Fatalf("flag + file: %+v %v", cfg, err)
	}
	if err := os.WriteFile(filepath.Join(flagDir, "config.yaml"), []byte("imagez: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(src(flagDir)); err == nil || !strings.Contains(err.Error(), "imagez") {
		t.Fatalf("unknown field: %v", err)
	}
}

func TestLoadIsolation(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	for _, tc := range []struct{ body, want, err string }{
		{"", "", ""},
		{"isolation: required\n", "required", ""},
		{"isolation: none\n", "none", ""},
		{"isolation: sometimes\n", "", `isolation "sometimes"`},
	} {
		if err := os.WriteFile(file, []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(Sources{DataDirFlag: dir, ConfigFlag: file})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.body, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.body, err)
		case cfg.Isolation != tc.want:
			t.Errorf("%q: isolation %q, want %q", tc.body, cfg.Isolation, tc.want)
		}
	}
}

// persistence.archiveTTL takes Go durations and whole days; anything else
// is refused when the config loads, naming the key.
func TestArchiveTTL(t *testing.T) {
	for _, tc := range []struct {
		text string
		want time.Duration
		ok   bool
	}{
		{"", 0, true}, {"7d", 7 * 24 * time.Hour, true}, {"12h", 12 * time.Hour, true}, {"90m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true}, {"0d", 0, false}, {"-1h", 0, false}, {"7x", 0, false}, {"d", 0, false},
	} {
		got, err := Persistence{ArchiveTTL: tc.text}.TTL()
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("%q: %v, %v; want %v, ok %v", tc.text, got, err, tc.want, tc.ok)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("persistence: {archiveTTL: soon}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(Sources{DataDirFlag: dir})
	if err == nil || !strings.Contains(err.Error(), `persistence.archiveTTL "soon"`) {
		t.Fatalf("bad archiveTTL: %v", err)
	}
}
