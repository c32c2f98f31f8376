package local

import (
	"archive/tar"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/braidwf/braid/internal/image/imagetest"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// imageOSRelease is the image's /etc/os-release: not the host's.
const imageOSRelease = "NAME=\"braid test image\"\n"

// writeBusyboxImage writes test/busybox:1 into imagesDir as an OCI layout
// (or an archive): the host's static busybox, a few applets, files only the
// image has, and a config with an entrypoint, a command, an env and a
// working directory. It skips the test without busybox-static.
func writeBusyboxImage(t testing.TB, imagesDir string, archive bool) {
	t.Helper()
	files, err := imagetest.Busybox("cat", "ls", "head", "echo", "pwd", "true", "test", "[")
	if err != nil {
		t.Skipf("%v (hack/test-deps.sh installs it)", err)
	}
	files = append(files,
		imagetest.File{Name: "etc/", Type: tar.TypeDir},
		imagetest.File{Name: "etc/os-release", Body: []byte(imageOSRelease)},
		imagetest.File{Name: "only-in-image", Body: []byte("yes\n")},
		imagetest.File{Name: "srv/", Type: tar.TypeDir},
	)
	l, err := imagetest.Layer(false, files...)
	if err != nil {
		t.Fatal(err)
	}
	img := imagetest.Image{RefName: "1", Layers: [][]byte{l}, Config: map[string]any{
		"Entrypoint": []string{"sh", "-c"}, "Cmd": []string{"echo from-cmd $FROM_IMAGE; pwd"},
		"Env": []string{"PATH=/usr/bin:/bin", "FROM_IMAGE=image"}, "WorkingDir": "/srv"}}
	if archive {
		err = imagetest.WriteArchive(filepath.Join(imagesDir, "test", "busybox.tar"), img)
	} else {
		err = imagetest.WriteLayout(filepath.Join(imagesDir, "test", "busybox"), img)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// newImageRuntime returns a Runtime with root views and an images
// directory holding test/busybox:1, or skips the test.
func newImageRuntime(t *testing.T, archive bool) (*harness, string) {
	t.Helper()
	images := filepath.Join(t.TempDir(), "images")
	writeBusyboxImage(t, images, archive)
	return newViewRuntime(t, func(c *Config) { c.ImagesDir = images }), images
}

// A step whose image the images directory holds runs on the image's root:
// it sees the image's files and none of the host's; the command follows
// Kubernetes against the image's config.
func TestImageRoot(t *testing.T) {
	for _, hostOnly := range []string{"/etc/debian_version", "/usr/bin/python3"} {
		if _, err := os.Stat(hostOnly); err != nil {
			t.Skipf("the host has no %s to prove the step does not see it", hostOnly)
		}
	}
	for _, tc := range []struct {
		name    string
		archive bool
		tmpl    string
		want    []string // in the result, in order
	}{
		{"command on the image root", false, `
name: img
container:
  image: test/busybox:1
  command: [sh, -c, "cat /etc/os-release 2>/dev/null; ls /; busybox | head -1; test -e /etc/debian_version || test -e /usr/bin/python3 || echo no-host-files; pwd"]
`, []string{imageOSRelease, "only-in-image", "BusyBox v", "no-host-files", "/srv"}},
		{"archive with entrypoint and cmd and env over the image", true, `
name: img
container:
  image: mirror.example/test/busybox:1
  env: [{name: FROM_IMAGE, value: step}]
`, []string{"from-cmd step", "/srv"}},
		{"args replace cmd in a workingDir the image lacks", false, `
name: img
container:
  image: test/busybox:1
  workingDir: /made/here
  args: ["echo args $FROM_IMAGE; pwd; echo out > /made/here/o"]
outputs:
  parameters:
  - {name: o, valueFrom: {path: /made/here/o}}
`, []string{"args image", "/made/here"}},
		{"script", false, `
name: img
script:
  image: test/busybox:1
  command: [sh]
  source: |
    ls /only-in-image && echo script ran
`, []string{"/only-in-image", "script ran"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, _ := newImageRuntime(t, tc.archive)
			run := newRun(tmpl(t, tc.tmpl))
			run.IncludeResult = true
			ev := final(runToEnd(t, rt, run))
			if ev.Phase != v1alpha1.NodeSucceeded {
				t.Fatalf("%s: %s (log %q)", ev.Phase, ev.Message, readLog(t, rt, run.ID))
			}
			result := *ev.Outputs.Result
			t.Logf("result: %q", result)
			rest := result
			for _, w := range tc.want {
				i := strings.Index(rest, strings.TrimSuffix(w, "\n"))
				if i < 0 {
					t.Fatalf("result %q lacks %q (in order)", result, w)
				}
				rest = rest[i+len(w)-1:]
			}
			if p := paramMap(ev.Outputs); strings.Contains(tc.tmpl, "name: o") && p["o"] != "out" {
				t.Fatalf("output parameter o = %q", p["o"])
			}
		})
	}
}

// An image the images directory does not hold leaves the step on the
// host's root, with the image table, exactly as without one.
func TestImageNotThereRunsOnHost(t *testing.T) {
	if _, err := os.Stat("/etc/debian_version"); err != nil {
		t.Skip("the host has no /etc/debian_version")
	}
	rt, _ := newImageRuntime(t, false)
	got := succeeded(t, rt, `
name: host
container:
  image: busybox:1.36
  command: [sh, -c, "test -e /etc/debian_version && echo host > /tmp/where"]
outputs:
  parameters:
  - {name: where, valueFrom: {path: /tmp/where}}
`)
	if got["where"] != "host" {
		t.Fatalf("where = %q", got["where"])
	}
}

// An image that is there but broken ends the step Error, naming the image
// and the problem.
func TestImageBroken(t *testing.T) {
	rt, images := newImageRuntime(t, false)
	bad := filepath.Join(images, "test", "bad")
	l, err := imagetest.Layer(false, imagetest.File{Name: "../../escape", Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	if err := imagetest.WriteLayout(bad, imagetest.Image{RefName: "1", Layers: [][]byte{l}}); err != nil {
		t.Fatal(err)
	}
	run := newRun(tmpl(t, `{name: bad, container: {image: test/bad:1, command: [sh, -c, "true"]}}`))
	ev := final(runToEnd(t, rt, run))
	if ev.Phase != v1alpha1.NodeError || !strings.Contains(ev.Message, "image test/bad:1") || !strings.Contains(ev.Message, "leaves the root file system") {
		t.Fatalf("%s: %q, want Error naming the image and the unsafe path", ev.Phase, ev.Message)
	}
	run = newRun(tmpl(t, `{name: nocmd, container: {image: test/busybox:1, command: [no-such-command]}}`))
	ev = final(runToEnd(t, rt, run))
	if ev.Phase != v1alpha1.NodeError || !strings.Contains(ev.Message, "no-such-command") || !strings.Contains(ev.Message, "test/busybox:1") {
		t.Fatalf("%s: %q, want Error naming the command and the image", ev.Phase, ev.Message)
	}
}

// Steps that first use an image at the same time share one unpack; each
// writes to its own view, none to the unpacked root.
func TestImageConcurrentFirstUse(t *testing.T) {
	rt, _ := newImageRuntime(t, true)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		wg.Go(func() {
			run := newRun(tmpl(t, fmt.Sprintf(`{name: c, container: {image: test/busybox:1, command: [sh, -c, "echo %d > /only-in-image; cat /only-in-image"]}}`, i)))
			run.IncludeResult = true
			ev := final(runToEnd(t, rt, run))
			if ev.Phase != v1alpha1.NodeSucceeded || *ev.Outputs.Result != fmt.Sprint(i) {
				errs[i] = fmt.Sprintf("%s: %s (result %v)", ev.Phase, ev.Message, ev.Outputs)
			}
		})
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("step %d: %s", i, e)
		}
	}
	roots, err := os.ReadDir(filepath.Join(rt.cfg.DataDir, rootfsDir))
	if err != nil || len(roots) != 1 || strings.HasPrefix(roots[0].Name(), ".") {
		t.Fatalf("unpacked roots: %v, %v; want one", roots, err)
	}
	got, err := os.ReadFile(filepath.Join(rt.cfg.DataDir, rootfsDir, roots[0].Name(), "rootfs", "only-in-image"))
	if err != nil || string(got) != "yes\n" {
		t.Fatalf("the unpacked root changed: %q, %v", got, err)
	}
}

// An output the step did not write is read from the image's root, not the
// host's: the lower layer is the image.
func TestImageOutputFromLowerLayer(t *testing.T) {
	rt, _ := newImageRuntime(t, false)
	out := succeeded(t, rt, `
name: o
container: {image: test/busybox:1, command: [true]}
outputs:
  parameters:
  - {name: release, valueFrom: {path: /etc/os-release}}
`)
	if got := out["release"]; got != strings.TrimSpace(imageOSRelease) {
		t.Errorf("release = %q, want the image's %q", got, imageOSRelease)
	}
}
