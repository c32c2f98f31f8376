// Command mkimage writes a one-layer container image archive that `ctr images import` loads,
// without a registry or an image builder. It is a test helper for hack/kube.
//
//	mkimage -o OUT.tar -t NAME:TAG [-t NAME:TAG...] [-entrypoint JSON] [-cmd JSON]
//	        [-busybox-links "sh ls ..."] [-file PATH=TEXT...] SRC=DST...
//
// Each SRC=DST copies a host file into the image at DST, keeping its mode. -busybox-links adds
// /bin/APPLET -> busybox for each applet (except where a file of that name is already given).
// -file writes TEXT (with a newline) at PATH.
//
// The archive has the layout `docker save` writes (manifest.json with RepoTags), because for
// that layout containerd turns a short name such as busybox:1.36 into the fully qualified name
// that the kubelet looks up.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

type options struct {
	out        string
	tags       []string
	entrypoint []string
	cmd        []string
	links      []string
	files      []fileSpec
	texts      map[string]string
}

type fileSpec struct{ src, dst string }

func main() {
	opts, err := parseArgs(os.Args[1:])
	if err == nil {
		err = write(opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func parseArgs(args []string) (options, error) {
	var o options
	var tags, texts listFlag
	var entry, cmd, links string
	fs := flag.NewFlagSet("mkimage", flag.ContinueOnError)
	fs.StringVar(&o.out, "o", "", "output archive")
	fs.Var(&tags, "t", "image name NAME:TAG (repeatable)")
	fs.StringVar(&entry, "entrypoint", "", "entrypoint as a JSON array")
	fs.StringVar(&cmd, "cmd", "", "command as a JSON array")
	fs.StringVar(&links, "busybox-links", "", "busybox applets to link in /bin")
	fs.Var(&texts, "file", "PATH=TEXT written into the image (repeatable)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.out == "" || len(tags) == 0 {
		return o, errors.New("-o and -t are required")
	}
	o.tags = tags
	for _, j := range []struct {
		s   string
		dst *[]string
	}{{entry, &o.entrypoint}, {cmd, &o.cmd}} {
		if j.s == "" {
			continue
		}
		if err := json.Unmarshal([]byte(j.s), j.dst); err != nil {
			return o, fmt.Errorf("parse %q as a JSON array: %w", j.s, err)
		}
	}
	o.links = strings.Fields(links)
	o.texts = map[string]string{}
	for _, t := range texts {
		p, text, ok := strings.Cut(t, "=")
		if !ok {
			return o, fmt.Errorf("-file %q: want PATH=TEXT", t)
		}
		o.texts[strings.TrimPrefix(p, "/")] = text + "\n"
	}
	for _, a := range fs.Args() {
		src, dst, ok := strings.Cut(a, "=")
		if !ok {
			return o, fmt.Errorf("%q: want SRC=DST", a)
		}
		o.files = append(o.files, fileSpec{src, strings.TrimPrefix(dst, "/")})
	}
	return o, nil
}

// write builds the layer, the config and the manifest, and writes the archive.
func write(o options) error {
	layer, err := buildLayer(o)
	if err != nil {
		return err
	}
	diffID := sha256.Sum256(layer)
	cfg := map[string]any{
		"architecture": "amd64",
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC().Format(time.RFC3339),
		"config": map[string]any{
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"Entrypoint": o.entrypoint,
			"Cmd":        o.cmd,
			"WorkingDir": "/",
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(diffID[:])}},
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode config: %w", err)
	}
	cfgSum := sha256.Sum256(cfgJSON)
	cfgName := hex.EncodeToString(cfgSum[:]) + ".json"
	layerName := hex.EncodeToString(diffID[:]) + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{"Config": cfgName, "RepoTags": o.tags, "Layers": []string{layerName}}})
	if err != nil {
		return fmt.Errorf("encode manifest: %w", err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range []struct {
		name string
		data []byte
	}{{layerName, layer}, {cfgName, cfgJSON}, {"manifest.json", manifest}} {
		if err := addBytes(tw, e.name, e.data, 0o644); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("close archive: %w", err)
	}
	if err := os.WriteFile(o.out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", o.out, err)
	}
	return nil
}

// buildLayer returns the image's one layer as an uncompressed tar.
func buildLayer(o options) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	addDir := func(d string) error {
		for _, p := range parents(d) {
			if dirs[p] {
				continue
			}
			dirs[p] = true
			mode := int64(0o755)
			if p == "tmp" {
				mode = 0o1777
			}
			h := &tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: mode, ModTime: time.Unix(0, 0)}
			if err := tw.WriteHeader(h); err != nil {
				return fmt.Errorf("layer: %w", err)
			}
		}
		return nil
	}
	for _, d := range []string{"bin", "dev", "etc", "proc", "sys", "tmp", "root", "var/run"} {
		if err := addDir(d); err != nil {
			return nil, err
		}
	}
	given := map[string]bool{}
	for _, f := range o.files {
		if err := addDir(path.Dir(f.dst)); err != nil {
			return nil, err
		}
		if err := addFile(tw, f.src, f.dst); err != nil {
			return nil, err
		}
		given[f.dst] = true
	}
	names := make([]string, 0, len(o.texts))
	for p := range o.texts {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		if err := addDir(path.Dir(p)); err != nil {
			return nil, err
		}
		if err := addBytes(tw, p, []byte(o.texts[p]), 0o644); err != nil {
			return nil, err
		}
		given[p] = true
	}
	for _, app := range o.links {
		name := "bin/" + app
		if given[name] || app == "busybox" {
			continue
		}
		given[name] = true
		h := &tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: "busybox", Mode: 0o777, ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer: link %s: %w", name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// parents returns d and each of its parent directories, outermost first.
func parents(d string) []string {
	if d == "." || d == "" || d == "/" {
		return nil
	}
	return append(parents(path.Dir(d)), d)
}

func addFile(tw *tar.Writer, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("layer: %w", err)
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: dst, Size: st.Size(), Mode: int64(st.Mode().Perm()), ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("layer: %s: %w", dst, err)
	}
	if _, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("layer: copy %s: %w", src, err)
	}
	return nil
}

func addBytes(tw *tar.Writer, name string, data []byte, mode int64) error {
	h := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: mode, ModTime: time.Unix(0, 0)}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("archive: %s: %w", name, err)
	}
	if _, err := tw.Write(data); err != nil {
		return fmt.Errorf("archive: %s: %w", name, err)
	}
	return nil
}
