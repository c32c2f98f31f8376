package local

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// Two steps running side by side that write the same /tmp path each read
// back their own file: a step that reads an output from /tmp gets a /tmp
// of its own, and the host's /tmp is left alone.
func TestPrivateTmpForOutputs(t *testing.T) {
	if !canPrivateTmp() {
		t.Skip("needs root and mount(8)")
	}
	rt := newRuntime(t)
	const path = "/tmp/braid-private-tmp-test.txt"
	_ = os.Remove(path)
	var ids []string
	for i := range 2 {
		run := newRun(tmpl(t, fmt.Sprintf(`
name: w
container:
  image: busybox
  command: [sh, -c, "echo step-%d > %s; sleep 0.3"]
outputs:
  parameters:
  - name: out
    valueFrom: {path: %s}
`, i, path, path)))
		if err := rt.Start(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.ID)
	}
	for i, id := range ids {
		ev := final(waitFinal(t, rt, id, 30*time.Second))
		if ev.Phase != "Succeeded" {
			t.Fatalf("step %d: %s %s", i, ev.Phase, ev.Message)
		}
		if got := string(*ev.Outputs.Parameters[0].Value); got != fmt.Sprintf("step-%d", i) {
			t.Errorf("step %d read %q", i, got)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the host's %s was written: %v", path, err)
	}
}

// With the data directory itself under /tmp, the step still finds its
// staged script and its working directory inside its private /tmp.
func TestPrivateTmpWithDataDirUnderTmp(t *testing.T) {
	if !canPrivateTmp() {
		t.Skip("needs root and mount(8)")
	}
	dir, err := os.MkdirTemp("/tmp", "braid-datadir-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt := newRuntime(t, func(c *Config) { c.DataDir = dir })
	ev := final(runToEnd(t, rt, newRun(tmpl(t, `
name: s
script:
  image: busybox
  command: [sh]
  source: "pwd > /tmp/where; echo hi > rel.txt"
outputs:
  parameters:
  - {name: where, valueFrom: {path: /tmp/where}}
  - {name: rel, valueFrom: {path: rel.txt}}
`))))
	if ev.Phase != "Succeeded" {
		t.Fatalf("%s: %s", ev.Phase, ev.Message)
	}
	if got := string(*ev.Outputs.Parameters[1].Value); got != "hi" {
		t.Fatalf("rel = %q", got)
	}
}
