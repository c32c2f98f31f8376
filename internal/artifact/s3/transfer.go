package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// dirPrefix is the prefix shared by the objects of a "directory" key.
func dirPrefix(key string) string {
	return strings.TrimSuffix(key, "/") + "/"
}

// Load downloads art's object to the file dst, or, when no object has the key (or the key ends in "/"),
// every object under key + "/" into the directory dst. An empty location wraps artifact.ErrNotFound.
func (d *Driver) Load(ctx context.Context, art *v1alpha1.Artifact, dst string) error {
	c, err := d.connect(ctx, art)
	if err != nil {
		return err
	}
	defer c.close()
	if c.loc.Key == "" {
		return c.errorf("no key is set")
	}
	var statErr error
	if !strings.HasSuffix(c.loc.Key, "/") {
		_, statErr = c.client.StatObject(ctx, c.loc.Bucket, c.loc.Key, minio.StatObjectOptions{})
		if statErr == nil {
			return c.download(ctx, c.loc.Key, dst)
		}
		if !isNoSuchKey(statErr) {
			return c.wrap("load", statErr)
		}
	}
	n, err := c.downloadDir(ctx, dst)
	if err != nil {
		return err
	}
	if n == 0 {
		return c.notFound("load", statErr)
	}
	return nil
}

// download copies one object to dst through a temporary file beside it, so a failed download leaves
// nothing at dst.
func (c *conn) download(ctx context.Context, key, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return c.wrap("load", err)
	}
	obj, err := c.client.GetObject(ctx, c.loc.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return c.wrap(fmt.Sprintf("load object %q from", key), err)
	}
	defer obj.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return c.wrap("load", err)
	}
	_, err = io.Copy(tmp, obj)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		if isNoSuchKey(err) {
			return c.notFound("load", err)
		}
		return c.wrap(fmt.Sprintf("load object %q from", key), err)
	}
	return nil
}

// downloadDir downloads every object under key + "/" into the directory dst and returns how many.
func (c *conn) downloadDir(ctx context.Context, dst string) (int, error) {
	prefix := dirPrefix(c.loc.Key)
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	for obj := range c.client.ListObjects(listCtx, c.loc.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return n, c.wrap("list the objects under "+prefix+" of", obj.Err)
		}
		rel := strings.TrimPrefix(obj.Key, prefix)
		if rel == "" || strings.HasSuffix(rel, "/") {
			continue // a "directory marker" object
		}
		local := filepath.FromSlash(rel)
		if !filepath.IsLocal(local) {
			return n, c.errorf("object %q would be written outside the destination directory; refused", obj.Key)
		}
		if err := c.download(ctx, obj.Key, filepath.Join(dst, local)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Save uploads the file src to art's key, or, when src is a directory, each regular file in it to
// key + "/" + its relative path. A directory holding anything but regular files and directories (a
// symlink, a device) is refused. createBucketIfNotPresent creates a missing bucket first.
func (d *Driver) Save(ctx context.Context, src string, art *v1alpha1.Artifact) error {
	c, err := d.connect(ctx, art)
	if err != nil {
		return err
	}
	defer c.close()
	if c.loc.Key == "" {
		return c.errorf("no key is set")
	}
	info, err := os.Stat(src)
	if err != nil {
		return c.wrap("save "+src+" to", err)
	}
	if err := c.ensureBucket(ctx); err != nil {
		return err
	}
	if !info.IsDir() {
		return c.upload(ctx, src, strings.TrimSuffix(c.loc.Key, "/"))
	}
	prefix := dirPrefix(c.loc.Key)
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return c.wrap("save "+src+" to", err)
		}
		if e.IsDir() {
			return nil
		}
		if e.Type()&fs.ModeSymlink != 0 {
			// A link to a regular file inside the directory is saved with
			// the file's content. Any other link (out of the directory, to
			// a directory, dangling) is left out: an output never carries
			// a file from elsewhere on the host.
			if !linkInside(src, p) {
				return nil
			}
		} else if !e.Type().IsRegular() {
			return c.errorf("save: %s is not a regular file or a directory (%s); refused", p, e.Type())
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return c.wrap("save "+p+" to", err)
		}
		return c.upload(ctx, p, path.Join(prefix, filepath.ToSlash(rel)))
	})
}

// ensureBucket creates the bucket when createBucketIfNotPresent is set and it is missing.
func (c *conn) ensureBucket(ctx context.Context) error {
	opts := c.loc.CreateBucketIfNotPresent
	if opts == nil {
		return nil
	}
	ok, err := c.client.BucketExists(ctx, c.loc.Bucket)
	if err != nil {
		return c.wrap("check the bucket of", err)
	}
	if ok {
		return nil
	}
	err = c.client.MakeBucket(ctx, c.loc.Bucket, minio.MakeBucketOptions{Region: c.loc.Region, ObjectLocking: opts.ObjectLocking})
	if err != nil && s3Code(err) != "BucketAlreadyOwnedByYou" {
		return c.wrap("create the bucket of", err)
	}
	return nil
}

// upload streams the file src to key. An *os.File lets minio-go send each part straight from the file
// (a section reader per part), so memory does not grow with the file.
func (c *conn) upload(ctx context.Context, src, key string) error {
	f, err := os.Open(src)
	if err != nil {
		return c.wrap("save "+src+" to", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return c.wrap("save "+src+" to", err)
	}
	_, err = c.client.PutObject(ctx, c.loc.Bucket, key, f, info.Size(), minio.PutObjectOptions{
		PartSize:    partSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return c.wrap(fmt.Sprintf("save %s as object %q to", src, key), err)
	}
	return nil
}

// OpenStream opens art's object for reading. A missing object wraps artifact.ErrNotFound. Closing the
// stream releases the connection.
func (d *Driver) OpenStream(ctx context.Context, art *v1alpha1.Artifact) (io.ReadCloser, error) {
	c, err := d.connect(ctx, art)
	if err != nil {
		return nil, err
	}
	if c.loc.Key == "" {
		c.close()
		return nil, c.errorf("no key is set")
	}
	obj, err := c.client.GetObject(ctx, c.loc.Bucket, c.loc.Key, minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			_ = obj.Close()
		}
		c.close()
		if isNoSuchKey(err) {
			return nil, c.notFound("open", err)
		}
		return nil, c.wrap("open", err)
	}
	return &stream{Object: obj, c: c}, nil
}

// stream is an open object; Close also releases its connection.
type stream struct {
	*minio.Object
	c *conn
}

// Stat describes the object as *os.File.Stat describes a file (its size and last-modified time), so that
// a reader that needs the size before the bytes (a tar entry) can have it.
func (s *stream) Stat() (fs.FileInfo, error) {
	info, err := s.Object.Stat()
	if err != nil {
		return nil, err
	}
	return objectInfo{info}, nil
}

// objectInfo is an object's information as an fs.FileInfo.
type objectInfo struct{ minio.ObjectInfo }

func (o objectInfo) Name() string       { return path.Base(o.Key) }
func (o objectInfo) Size() int64        { return o.ObjectInfo.Size }
func (o objectInfo) Mode() fs.FileMode  { return 0o644 }
func (o objectInfo) ModTime() time.Time { return o.LastModified }
func (o objectInfo) IsDir() bool        { return false }
func (o objectInfo) Sys() any           { return nil }

func (s *stream) Close() error {
	err := s.Object.Close()
	s.c.close()
	return err
}

// Delete removes art's object and every object under key + "/". Removing what is absent, even a missing
// bucket, is not an error.
func (d *Driver) Delete(ctx context.Context, art *v1alpha1.Artifact) error {
	c, err := d.connect(ctx, art)
	if err != nil {
		return err
	}
	defer c.close()
	if c.loc.Key == "" {
		return c.errorf("no key is set")
	}
	if !strings.HasSuffix(c.loc.Key, "/") {
		err := c.client.RemoveObject(ctx, c.loc.Bucket, c.loc.Key, minio.RemoveObjectOptions{})
		if err != nil && !isAbsent(err) {
			return c.wrap("delete", err)
		}
	}
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	objects := c.client.ListObjects(listCtx, c.loc.Bucket, minio.ListObjectsOptions{Prefix: dirPrefix(c.loc.Key), Recursive: true})
	var listErr error
	toRemove := make(chan minio.ObjectInfo)
	go func() {
		defer close(toRemove)
		for obj := range objects {
			if obj.Err != nil {
				if !isAbsent(obj.Err) {
					listErr = obj.Err
				}
				return
			}
			select {
			case toRemove <- obj:
			case <-listCtx.Done():
				return
			}
		}
	}()
	var errs []error
	for rerr := range c.client.RemoveObjects(ctx, c.loc.Bucket, toRemove, minio.RemoveObjectsOptions{}) {
		if !isAbsent(rerr.Err) {
			errs = append(errs, fmt.Errorf("object %q: %w", rerr.ObjectName, rerr.Err))
		}
	}
	cancel()
	for range toRemove { // wait for the lister, so listErr is safe to read
	}
	if listErr != nil {
		errs = append(errs, listErr)
	}
	if err := errors.Join(errs...); err != nil {
		return c.wrap("delete the objects under "+dirPrefix(c.loc.Key)+" of", err)
	}
	return nil
}

// isAbsent: the error says the object or bucket is not there.
func isAbsent(err error) bool {
	code := s3Code(err)
	return code == minio.NoSuchKey || code == minio.NoSuchBucket || code == "NotFound"
}

// linkInside reports whether the link p resolves to a regular file under
// root.
func linkInside(root, p string) bool {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	st, err := os.Stat(target)
	return err == nil && st.Mode().IsRegular()
}
