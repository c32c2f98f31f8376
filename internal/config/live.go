package config

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Live is the config of a long-running braid server: Watch reads the file
// again when it changes, as Argo's controller follows its ConfigMaps. Only
// what is read through Live takes effect at once: the semaphore limits
// (configMaps and synchronization.limits). Other settings need a restart.
type Live struct {
	cur  atomic.Pointer[Config]
	file string
	last fileStamp // the file when cur was read from it
}

// NewLive starts from cfg, as Load returned it.
func NewLive(cfg *Config) *Live {
	l := &Live{file: cfg.sources.ConfigFlag}
	if l.file == "" {
		l.file = filepath.Join(cfg.DataDir, "config.yaml")
	}
	l.last = stamp(l.file)
	l.cur.Store(cfg)
	return l
}

// Config is the current config.
func (l *Live) Config() *Config { return l.cur.Load() }

// ConfigMapValue is Config.ConfigMapValue of the current config.
func (l *Live) ConfigMapValue(namespace, name, key string) (string, bool) {
	return l.Config().ConfigMapValue(namespace, name, key)
}

// DatabaseLimit is the limit of the database semaphore "namespace/key" in
// the current config's synchronization.limits.
func (l *Live) DatabaseLimit(key string) (int, bool) {
	n, ok := l.Config().Synchronization.Limits[key]
	return n, ok
}

// Watch looks at the config file every interval until ctx ends. When it
// has changed (its size or modification time, or it appeared or went),
// then stayed the same for an interval, and loads cleanly, the new config
// replaces the current one and changed is called with it. A file that does
// not load is logged, and the current config stays.
func (l *Live) Watch(ctx context.Context, interval time.Duration, log *slog.Logger, changed func(*Config)) {
	src, file := l.Config().sources, l.file
	last := l.last
	seen := last
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A change is read once the file has stayed the same for one
		// interval, so that a file being written is not read half done.
		now := stamp(file)
		if now == last || now != seen {
			seen = now
			continue
		}
		last = now
		cfg, err := Load(src)
		if err != nil {
			log.Warn("the config file changed but does not load; keeping the previous config", "file", file, "err", err)
			continue
		}
		l.cur.Store(cfg)
		log.Info("config reloaded", "file", file)
		if changed != nil {
			changed(cfg)
		}
	}
}

// fileStamp tells a changed file from an unchanged one.
type fileStamp struct {
	exists  bool
	size    int64
	modTime time.Time
}

func stamp(file string) fileStamp {
	fi, err := os.Stat(file)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{exists: true, size: fi.Size(), modTime: fi.ModTime()}
}
