package image

import (
	"archive/tar"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"strings"
)

// Media types this package reads.
const (
	mediaOCIIndex      = "application/vnd.oci.image.index.v1+json"
	mediaOCIManifest   = "application/vnd.oci.image.manifest.v1+json"
	mediaDockerList    = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaDockerImage   = "application/vnd.docker.distribution.manifest.v2+json"
	maxJSONBlob        = 8 << 20 // an index, a manifest or a config
	maxNestedIndexes   = 4
	indexFile          = "index.json"
	tarSuffix          = ".tar"
	platformAnnotation = "vnd.docker.reference.type" // attestation manifests carry it
)

// descriptor points at a blob (the OCI descriptor, the fields read here).
type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform,omitempty"`
}

// index is an image index (index.json is one), or a manifest: which one a
// blob is shows in which list it has.
type index struct {
	MediaType string       `json:"mediaType"`
	Manifests []descriptor `json:"manifests"`
	Config    *descriptor  `json:"config"`
	Layers    []descriptor `json:"layers"`
}

// imageConfig is the part of an image's config blob read here.
type imageConfig struct {
	Config Config `json:"config"`
}

// Config is what an image's config says about running it.
type Config struct {
	Entrypoint []string `json:"Entrypoint"`
	Cmd        []string `json:"Cmd"`
	Env        []string `json:"Env"`
	WorkingDir string   `json:"WorkingDir"`
	User       string   `json:"User"`
}

// source is an OCI layout: a directory, or an archive read in place.
type source interface {
	open(name string) (io.ReadCloser, error)
	Close() error
}

type dirSource string

func (d dirSource) open(name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(string(d), filepath.FromSlash(name)))
}

func (dirSource) Close() error { return nil }

// tarSource reads the files of an uncompressed tar in place.
type tarSource struct {
	f     *os.File
	files map[string][2]int64 // offset, size
}

// openTar lists the regular files of the archive at p.
func openTar(p string) (*tarSource, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	s := &tarSource{f: f, files: map[string][2]int64{}}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read the archive %s: %w", p, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		// tar.Reader reads no further than the header: the file's data
		// starts here.
		off, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("read the archive %s: %w", p, err)
		}
		s.files[path.Clean(strings.TrimPrefix(hdr.Name, "/"))] = [2]int64{off, hdr.Size}
	}
	return s, nil
}

func (s *tarSource) open(name string) (io.ReadCloser, error) {
	at, ok := s.files[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
	}
	return io.NopCloser(io.NewSectionReader(s.f, at[0], at[1])), nil
}

func (s *tarSource) Close() error { return s.f.Close() }

// openSource opens the layout or archive at p.
func openSource(p string, archive bool) (source, error) {
	if archive {
		return openTar(p)
	}
	return dirSource(p), nil
}

// blobPath is where a blob lies in a layout; the digest is checked first,
// so that it cannot name another file.
func blobPath(digest string) (string, error) {
	algo, hexPart, ok := strings.Cut(digest, ":")
	var n int
	switch algo {
	case "sha256":
		n = 64
	case "sha512":
		n = 128
	}
	if !ok || n == 0 {
		return "", fmt.Errorf("unsupported digest %q", digest)
	}
	if len(hexPart) != n || strings.Trim(hexPart, "0123456789abcdef") != "" {
		return "", fmt.Errorf("malformed digest %q", digest)
	}
	return "blobs/" + algo + "/" + hexPart, nil
}

// verifier hashes what is read through it and, at the end, checks the
// size and the digest of the descriptor: a mismatch replaces io.EOF.
type verifier struct {
	r    io.Reader
	h    hash.Hash
	d    descriptor
	n    int64
	done error
}

func newVerifier(r io.Reader, d descriptor) *verifier {
	var h hash.Hash = sha256.New()
	if strings.HasPrefix(d.Digest, "sha512:") {
		h = sha512.New()
	}
	return &verifier{r: r, h: h, d: d}
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.done != nil {
		return 0, v.done
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.d.Size > 0 && v.n > v.d.Size {
		v.done = fmt.Errorf("blob %s is larger than its descriptor's %d bytes", v.d.Digest, v.d.Size)
		return n, v.done
	}
	if errors.Is(err, io.EOF) {
		v.done = v.check()
		return n, v.done
	}
	return n, err
}

func (v *verifier) check() error {
	if v.d.Size > 0 && v.n != v.d.Size {
		return fmt.Errorf("blob %s has %d bytes, its descriptor says %d", v.d.Digest, v.n, v.d.Size)
	}
	algo, _, _ := strings.Cut(v.d.Digest, ":")
	if got := algo + ":" + hex.EncodeToString(v.h.Sum(nil)); got != v.d.Digest {
		return fmt.Errorf("blob %s does not match its digest (it is %s)", v.d.Digest, got)
	}
	return io.EOF
}

// openBlob opens the blob d points at, checked as it is read.
func openBlob(src source, d descriptor) (io.ReadCloser, *verifier, error) {
	p, err := blobPath(d.Digest)
	if err != nil {
		return nil, nil, err
	}
	f, err := src.open(p)
	if err != nil {
		return nil, nil, fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	v := newVerifier(f, d)
	return f, v, nil
}

// readJSON reads and decodes the small blob d points at.
func readJSON(src source, d descriptor, into any) error {
	f, v, err := openBlob(src, d)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(v, maxJSONBlob+1))
	if err != nil {
		return err
	}
	if len(data) > maxJSONBlob {
		return fmt.Errorf("blob %s is larger than %d bytes", d.Digest, maxJSONBlob)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("blob %s: %w", d.Digest, err)
	}
	return nil
}

// readIndex reads a layout's index.json.
func readIndex(src source) (index, error) {
	f, err := src.open(indexFile)
	if err != nil {
		return index{}, err
	}
	defer f.Close()
	var idx index
	data, err := io.ReadAll(io.LimitReader(f, maxJSONBlob+1))
	if err == nil && len(data) > maxJSONBlob {
		err = fmt.Errorf("larger than %d bytes", maxJSONBlob)
	}
	if err == nil {
		err = json.Unmarshal(data, &idx)
	}
	if err != nil {
		return index{}, fmt.Errorf("%s: %w", indexFile, err)
	}
	return idx, nil
}

// resolved is an image's manifest, read and checked.
type resolved struct {
	digest string // the manifest's
	config Config
	layers []descriptor
}

// resolve follows d (a manifest, or an index of manifests) to this
// platform's manifest, and reads its config.
func resolve(src source, d descriptor) (resolved, error) {
	for range maxNestedIndexes {
		var m index
		if err := readJSON(src, d, &m); err != nil {
			return resolved{}, err
		}
		mt := d.MediaType
		if mt == "" {
			mt = m.MediaType
		}
		isIndex := mt == mediaOCIIndex || mt == mediaDockerList || (mt == "" && m.Config == nil && len(m.Manifests) > 0)
		if isIndex {
			next, err := pickPlatform(m.Manifests)
			if err != nil {
				return resolved{}, fmt.Errorf("index %s: %w", d.Digest, err)
			}
			d = next
			continue
		}
		if mt != "" && mt != mediaOCIManifest && mt != mediaDockerImage {
			return resolved{}, fmt.Errorf("manifest %s: unsupported media type %q", d.Digest, mt)
		}
		if m.Config == nil {
			return resolved{}, fmt.Errorf("manifest %s has no config", d.Digest)
		}
		var cfg imageConfig
		if err := readJSON(src, *m.Config, &cfg); err != nil {
			return resolved{}, fmt.Errorf("config: %w", err)
		}
		return resolved{digest: d.Digest, config: cfg.Config, layers: m.Layers}, nil
	}
	return resolved{}, fmt.Errorf("more than %d nested indexes", maxNestedIndexes)
}

// pickPlatform picks this machine's manifest among an index's, or its only
// one (attestations aside).
func pickPlatform(ms []descriptor) (descriptor, error) {
	var usable []descriptor
	for _, m := range ms {
		if m.Annotations[platformAnnotation] != "" {
			continue
		}
		usable = append(usable, m)
		if p := m.Platform; p != nil && p.OS == "linux" && p.Architecture == goruntime.GOARCH {
			return m, nil
		}
	}
	if len(usable) == 1 {
		return usable[0], nil
	}
	return descriptor{}, fmt.Errorf("no manifest for linux/%s among %d", goruntime.GOARCH, len(usable))
}
