package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamMiB is the size of the streaming test's artifact; BRAID_S3_STREAM_MIB=1024 runs the 1 GiB case.
func streamMiB(t *testing.T) int {
	if v := os.Getenv("BRAID_S3_STREAM_MIB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("BRAID_S3_STREAM_MIB=%q is not a positive number", v)
		}
		return n
	}
	return 200
}

// maxRSSGrowth bounds how much the test process's RSS may grow while it saves or loads the artifact.
const maxRSSGrowth = 64 << 20

func TestStreamingSaveLoadKeepsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the large streaming test")
	}
	e := newEnv(t)
	ctx := context.Background()
	mib := streamMiB(t)
	calibrateRSS(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	want := writeRandomFile(t, src, mib)
	art := e.art("big", "stream/big.bin")

	start := time.Now()
	growth, err := measureRSSGrowth(t, func() error { return e.drv.Save(ctx, src, art) })
	if err != nil {
		t.Fatalf("Save: %v", err)
	}
	t.Logf("Save of %d MiB: %v, RSS growth %.1f MiB", mib, time.Since(start).Round(time.Millisecond), float64(growth)/(1<<20))
	if growth > maxRSSGrowth {
		t.Errorf("Save grew RSS by %d MiB, want under %d MiB", growth>>20, maxRSSGrowth>>20)
	}

	dst := filepath.Join(dir, "big.out")
	start = time.Now()
	growth, err = measureRSSGrowth(t, func() error { return e.drv.Load(ctx, art, dst) })
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	t.Logf("Load of %d MiB: %v, RSS growth %.1f MiB", mib, time.Since(start).Round(time.Millisecond), float64(growth)/(1<<20))
	if growth > maxRSSGrowth {
		t.Errorf("Load grew RSS by %d MiB, want under %d MiB", growth>>20, maxRSSGrowth>>20)
	}
	if got := fileSum(t, dst); !bytes.Equal(got, want) {
		t.Fatal("the loaded file differs from the saved one")
	}
	if err := e.drv.Delete(ctx, art); err != nil {
		t.Fatalf("Delete: %v", err)
	}
}

// calibrateRSS checks that measureRSSGrowth sees memory a function holds, so the bound above can fail.
func calibrateRSS(t *testing.T) {
	t.Helper()
	var held []byte
	growth, _ := measureRSSGrowth(t, func() error {
		held = make([]byte, 2*maxRSSGrowth)
		for i := range held {
			held[i] = byte(i)
		}
		return nil // measureRSSGrowth samples once more when fn returns
	})
	if growth < maxRSSGrowth {
		t.Fatalf("RSS grew by %d MiB while holding %d MiB: the measurement is broken", growth>>20, len(held)>>20)
	}
	held = nil
	debug.FreeOSMemory() // give the calibration's memory back, so it cannot hide growth measured later
}

// writeRandomFile writes mib MiB of pseudo-random bytes 1 MiB at a time and returns their SHA-256.
func writeRandomFile(t *testing.T, path string, mib int) []byte {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rng := rand.NewChaCha8([32]byte{1, 2, 3})
	buf := make([]byte, 1<<20)
	h := sha256.New()
	for range mib {
		_, _ = rng.Read(buf)
		h.Write(buf)
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return h.Sum(nil)
}

func fileSum(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return h.Sum(nil)
}

// measureRSSGrowth runs fn while sampling the process's resident set every 5 ms, and returns the peak
// minus the RSS before fn started.
func measureRSSGrowth(t *testing.T, fn func() error) (int64, error) {
	t.Helper()
	runtime.GC()
	base, err := rss()
	if err != nil {
		t.Skipf("cannot measure RSS: %v", err)
	}
	var (
		wg   sync.WaitGroup
		peak = base
		stop = make(chan struct{})
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if r, err := rss(); err == nil && r > peak {
				peak = r
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err = fn()
	close(stop)
	wg.Wait()
	if r, rerr := rss(); rerr == nil && r > peak { // what fn still holds
		peak = r
	}
	return peak - base, err
}

// rss is the process's resident set size in bytes, from /proc/self/status.
func rss() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc/self/status")
}
