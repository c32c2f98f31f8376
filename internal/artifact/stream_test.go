package artifact

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// TestPackUnpackStreams packs a 1 GiB file (64 MiB with -short) straight into Unpack through a pipe and
// checks that what the process allocated in all is a small fraction of that: nothing holds the artifact.
// With -race, whose slow-down would make 1 GiB take minutes, it moves 64 MiB.
func TestPackUnpackStreams(t *testing.T) {
	size := int64(1 << 30)
	if testing.Short() || raceEnabled {
		size = 64 << 20
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "big.bin")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // sparse: reads as zeros without using the disk
		t.Fatal(err)
	}
	f.Close()
	level := int32(1)
	strategy := &v1alpha1.ArchiveStrategy{Tar: &v1alpha1.TarStrategy{CompressionLevel: &level}}

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(Pack(src, strategy, pw)) }()
	out := filepath.Join(dir, "in", "big.bin")
	if err := UnpackInput(pr, out); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)

	info, err := os.Stat(out)
	if err != nil || info.Size() != size {
		t.Fatalf("unpacked %v (%v), want %d bytes", info, err, size)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("moved %d MiB; allocated %.1f MiB in all; peak RSS %s", size>>20, float64(allocated)/(1<<20), peakRSS())
	if allocated > 32<<20 {
		t.Errorf("allocated %d MiB to move %d MiB: the artifact is buffered, not streamed", allocated>>20, size>>20)
	}
}

// peakRSS is the process's peak resident set (VmHWM), for the log.
func peakRSS() string {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
