package imagetest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"time"
)

// BusyboxPath is where the Debian package busybox-static installs busybox.
const BusyboxPath = "/bin/busybox"

// File is one entry of a layer.
type File struct {
	Name string
	Type byte // tar.TypeReg when 0
	Mode int64
	Body []byte
	Link string // a symbolic or hard link's target
}

// Image is one image of a layout.
type Image struct {
	// RefName is the org.opencontainers.image.ref.name annotation ("" for
	// none).
	RefName string
	// Layers are layer blobs (Layer makes one).
	Layers [][]byte
	// Config is the image config's "config" object (Entrypoint, Cmd, Env,
	// WorkingDir, User).
	Config map[string]any
	// Index wraps the manifest in an image index with a second manifest
	// for another platform, as a multi-platform image has.
	Index bool
}

// Layer returns a gzip-compressed layer tar of files (uncompressed when
// plain is true).
func Layer(plain bool, files ...File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Name, Typeflag: f.Type, Mode: f.Mode, Linkname: f.Link, ModTime: time.Unix(1700000000, 0)}
		if hdr.Typeflag == 0 {
			hdr.Typeflag = tar.TypeReg
		}
		if hdr.Mode == 0 {
			hdr.Mode = 0o644
			if hdr.Typeflag == tar.TypeDir {
				hdr.Mode = 0o755
			}
		}
		if hdr.Typeflag == tar.TypeReg {
			hdr.Size = int64(len(f.Body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if plain {
		return buf.Bytes(), nil
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return gz.Bytes(), nil
}

// Busybox returns the files of a minimal busybox root: /bin/busybox (the
// host's static one) and a symbolic link to it for sh and each applet.
// It fails when busybox-static is not installed.
func Busybox(applets ...string) ([]File, error) {
	body, err := os.ReadFile(BusyboxPath)
	if err != nil {
		return nil, fmt.Errorf("busybox-static is not installed: %w", err)
	}
	files := []File{{Name: "bin/", Type: tar.TypeDir}, {Name: "bin/busybox", Mode: 0o755, Body: body}}
	for _, a := range append([]string{"sh"}, applets...) {
		files = append(files, File{Name: "bin/" + a, Type: tar.TypeSymlink, Link: "busybox"})
	}
	return files, nil
}

// blobs collects the blobs of a layout.
type blobs map[string][]byte

func (b blobs) add(mediaType string, data []byte) map[string]any {
	sum := sha256.Sum256(data)
	d := "sha256:" + hex.EncodeToString(sum[:])
	b[d] = data
	return map[string]any{"mediaType": mediaType, "digest": d, "size": len(data)}
}

func (b blobs) addJSON(mediaType string, v any) (map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b.add(mediaType, data), nil
}

// files returns the layout's files: oci-layout, index.json and the blobs.
func files(images ...Image) (map[string][]byte, error) {
	b := blobs{}
	var manifests []any
	for _, img := range images {
		d, err := b.manifest(img)
		if err != nil {
			return nil, err
		}
		if img.RefName != "" {
			d["annotations"] = map[string]string{"org.opencontainers.image.ref.name": img.RefName}
		}
		manifests = append(manifests, d)
	}
	index, err := json.Marshal(map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests})
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{"oci-layout": []byte(`{"imageLayoutVersion":"1.0.0"}`), "index.json": index}
	for d, data := range b {
		out["blobs/sha256/"+d[len("sha256:"):]] = data
	}
	return out, nil
}

// manifest adds the blobs of img and returns its descriptor: a manifest's,
// or an index's when img.Index.
func (b blobs) manifest(img Image) (map[string]any, error) {
	var layers []any
	var diffIDs []string
	for _, l := range img.Layers {
		mt := "application/vnd.oci.image.layer.v1.tar+gzip"
		if len(l) < 2 || l[0] != 0x1f || l[1] != 0x8b {
			mt = "application/vnd.oci.image.layer.v1.tar"
		}
		layers = append(layers, b.add(mt, l))
		diffIDs = append(diffIDs, "sha256:unchecked")
	}
	cfg, err := b.addJSON("application/vnd.oci.image.config.v1+json", map[string]any{
		"architecture": runtime.GOARCH, "os": "linux", "config": img.Config,
		"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs}})
	if err != nil {
		return nil, err
	}
	m, err := b.addJSON("application/vnd.oci.image.manifest.v1+json", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg, "layers": layers})
	if err != nil {
		return nil, err
	}
	if !img.Index {
		return m, nil
	}
	m["platform"] = map[string]string{"os": "linux", "architecture": runtime.GOARCH}
	other, err := b.addJSON("application/vnd.oci.image.manifest.v1+json", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json", "config": cfg, "layers": []any{}})
	if err != nil {
		return nil, err
	}
	other["platform"] = map[string]string{"os": "linux", "architecture": "s390x-not-this"}
	return b.addJSON("application/vnd.oci.image.index.v1+json", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{other, m}})
}

// WriteLayout writes an OCI image layout of images into dir.
func WriteLayout(dir string, images ...Image) error {
	fs, err := files(images...)
	if err != nil {
		return err
	}
	for name, data := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// WriteArchive writes an OCI archive (a tar of the layout) of images at p.
func WriteArchive(p string, images ...Image) error {
	fs, err := files(images...)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(fs))
	for name := range fs {
		names = append(names, name)
	}
	sort.Strings(names)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	for _, name := range names {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(fs[name])), ModTime: time.Unix(1700000000, 0)}); err != nil {
			f.Close()
			return err
		}
		if _, err := tw.Write(fs[name]); err != nil {
			f.Close()
			return err
		}
	}
	if err := tw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
