package config

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Watch follows the config file: a change that loads replaces the config
// and is reported; one that does not load keeps the previous config.
func TestLiveWatch(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("configMaps: {my-config: {k: \"1\"}}\n")
	cfg, err := Load(Sources{DataDirFlag: dir, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != file {
		t.Fatalf("File = %q, want %q", cfg.File, file)
	}
	live := NewLive(cfg)
	changed := make(chan *Config, 4)
	warned := make(chan string, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		live.Watch(ctx, 5*time.Millisecond, slog.New(warnings{warned}), func(c *Config) { changed <- c })
		close(done)
	}()
	t.Cleanup(func() { cancel(); <-done })
	wait := func() *Config {
		t.Helper()
		select {
		case c := <-changed:
			return c
		case <-time.After(5 * time.Second):
			t.Fatal("no reload")
			return nil
		}
	}

	write("configMaps: {my-config: {k: \"22\"}}\nsynchronization: {limits: {default/db: 3}}\n")
	wait()
	if v, _ := live.ConfigMapValue("default", "my-config", "k"); v != "22" {
		t.Fatalf("after the change: %q", v)
	}
	if n, ok := live.DatabaseLimit("default/db"); n != 3 || !ok {
		t.Fatalf("database limit %d %v", n, ok)
	}
	write("configMaps: [this is not a map\n")
	select { // Watch read the bad file once it stayed the same, and said so
	case msg := <-warned:
		if !strings.Contains(msg, "does not load") {
			t.Fatalf("warning %q", msg)
		}
	case c := <-changed:
		t.Fatalf("a file that does not load was taken: %+v", c)
	case <-time.After(5 * time.Second):
		t.Fatal("the bad file was never read")
	}
	select {
	case c := <-changed:
		t.Fatalf("a file that does not load was taken: %+v", c)
	default:
	}
	if v, _ := live.ConfigMapValue("default", "my-config", "k"); v != "22" {
		t.Fatalf("after a bad file: %q", v)
	}
	write("configMaps: {my-config: {k: \"333\"}}\n")
	wait()
	if v, _ := live.ConfigMapValue("default", "my-config", "k"); v != "333" {
		t.Fatalf("after a fix: %q", v)
	}
}

// warnings is a slog.Handler that sends the message of every warning to a
// channel.
type warnings struct{ ch chan<- string }

func (w warnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w warnings) Handle(_ context.Context, r slog.Record) error {
	w.ch <- r.Message
	return nil
}

func (w warnings) WithAttrs([]slog.Attr) slog.Handler { return w }

func (w warnings) WithGroup(string) slog.Handler { return w }
