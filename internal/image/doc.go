// Package image finds container images kept on this machine and unpacks
// their root file systems, so that the local runtime can run a step on its
// image's root instead of the host's. It also holds the image table
// (Table, table.go): what the config file's `images` map says an image does
// when a host runtime cannot pull it; internal/config parses it, and the
// runtimes and internal/executor read it.
//
// # Where images are
//
// A Store looks in one directory (braid's imagesDir) for
//
//   - OCI image layouts: a directory holding index.json (and oci-layout and
//     blobs/<algorithm>/<hex>), as `skopeo copy ... oci:DIR` writes. The
//     images directory itself may be one, and so may any directory below
//     it, up to four levels down;
//   - OCI archives: a file NAME.tar holding such a layout, as `ctr export`
//     and `skopeo copy ... oci-archive:NAME.tar` write. Only uncompressed
//     tar is read; blobs are read in place, never extracted.
//
// Each entry of an index.json's manifests names an image: its
// io.containerd.image.name annotation, else its
// org.opencontainers.image.ref.name annotation. A ref name holding ':' or
// '/' is a whole reference ("busybox:1.36", "myorg/tool:1"); a bare word is
// a tag of the image named after the layout's path below the images
// directory, less ".tar" (images/myorg/tool.tar with ref name "1" is
// myorg/tool:1), or, in a layout that is the images directory itself, the
// image's name (tag latest). A layout below the images directory whose
// index has one manifest and no names is <path>:latest. References are
// compared by path: the registry host (a first element
// holding '.' or ':', or localhost) and "library/" are dropped, and no tag
// means latest; a reference with @digest matches the entry whose
// descriptor has that digest.
//
// # What is read
//
// An entry that is an image index picks the manifest for this machine's
// platform (linux and runtime.GOARCH), or its only manifest. The
// manifest's config gives the image's Entrypoint, Cmd, Env, WorkingDir and
// User (Config). Every blob read is checked against its digest and size;
// a mismatch, a missing or unreadable blob, or an unsupported media type
// is an error naming the image.
//
// # Unpacking
//
// The layers are applied in order (tar, gzip-compressed or not; zstd is
// refused) into <cache>/<algorithm>-<hex of the manifest digest>/rootfs:
// whiteouts (.wh.NAME) delete what a lower layer made, an opaque marker
// (.wh..wh..opq) empties its directory of what lower layers made; hard
// links, symbolic links (kept as they are: they are read inside the
// image's root), owners (when this process is root), modes and mtimes are
// kept; device nodes are made only by root and skipped otherwise. No entry
// lands outside the root file system: a name or a hard link target with
// ".." that leaves it is refused, and the parent directories of every
// entry are resolved inside the root (a symbolic link to /usr in the image
// means the image's /usr). A root is unpacked once: into a temporary
// directory beside it, then renamed into place; steps asking at the same
// time wait for one unpack, and a second braid that lost the rename race
// uses the winner's. A root once in place is never changed.
//
// The package imports only the standard library. It must not import the
// runtime, the executor or anything above them.
package image
