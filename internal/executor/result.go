package executor

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// MaxResult is the most of stdout kept as outputs.result: the last 256 KiB,
// as Argo keeps (exec/executor.go CaptureScriptResult).
const MaxResult = 256 << 10

// Tail is an io.Writer that keeps the last Limit bytes written to it. It
// grows as data arrives, so a step that prints little costs little, and it
// never holds more than Limit bytes. The zero value is not usable; call
// NewTail or NewResultTail.
type Tail struct {
	limit int
	buf   []byte
	pos   int // once len(buf) == limit: the index of the oldest byte
	total int64
}

// NewTail returns a Tail that keeps the last limit bytes (at least 1).
func NewTail(limit int) *Tail {
	return &Tail{limit: max(limit, 1)}
}

// NewResultTail returns a Tail sized for outputs.result: one byte more than
// MaxResult, for the trailing newline that Result removes first.
func NewResultTail() *Tail { return NewTail(MaxResult + 1) }

// Write keeps the tail of p; it never fails.
func (t *Tail) Write(p []byte) (int, error) {
	n := len(p)
	t.total += int64(n)
	if len(p) >= t.limit {
		t.buf = append(t.buf[:0], p[len(p)-t.limit:]...)
		t.pos = 0
		return n, nil
	}
	if room := t.limit - len(t.buf); room > 0 {
		if len(p) <= room {
			t.buf = append(t.buf, p...)
			return n, nil
		}
		t.buf = append(t.buf, p[:room]...)
		p = p[room:]
		t.pos = 0
	}
	for len(p) > 0 {
		c := copy(t.buf[t.pos:], p)
		p = p[c:]
		t.pos = (t.pos + c) % t.limit
	}
	return n, nil
}

// Bytes returns the kept tail, oldest byte first.
func (t *Tail) Bytes() []byte {
	if len(t.buf) < t.limit || t.pos == 0 {
		return bytes.Clone(t.buf)
	}
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.pos:]...)
	return append(out, t.buf[:t.pos]...)
}

// Total is how many bytes were written, kept or not.
func (t *Tail) Total() int64 { return t.total }

// Result returns outputs.result from the tail: Result(t.Bytes()).
func (t *Tail) Result() string { return Result(t.Bytes()) }

// Result turns captured stdout into outputs.result as Argo does: exactly one
// trailing "\n" removed, then only the last MaxResult bytes kept.
func Result(stdout []byte) string {
	stdout = bytes.TrimSuffix(stdout, []byte{'\n'})
	if len(stdout) > MaxResult {
		stdout = stdout[len(stdout)-MaxResult:]
	}
	return string(stdout)
}

// CaptureResult reads r to its end and returns outputs.result, holding at
// most MaxResult+1 bytes in memory.
func CaptureResult(r io.Reader) (string, error) {
	t := NewResultTail()
	if _, err := io.Copy(t, r); err != nil {
		return "", fmt.Errorf("capture result: %w", err)
	}
	return t.Result(), nil
}

// CaptureResultFile returns outputs.result from a file of captured stdout,
// reading only its tail.
func CaptureResultFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("capture result: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > MaxResult+1 {
		if _, err := f.Seek(fi.Size()-(MaxResult+1), io.SeekStart); err != nil {
			return "", fmt.Errorf("capture result: %w", err)
		}
	}
	return CaptureResult(f)
}
