// Package artifact moves artifact bytes between a step's files and an artifact repository.
//
// It owns:
//   - the Driver interface, one implementation per location kind: file/ (braid's zero-setup local
//     repository), s3/, git/, http/ and raw/; Drivers picks the one for a location;
//   - packing (Pack, PackSource: tar+gzip of a file or a directory, or none; a directory is a Tree, read
//     without following links, which are stored as links; CopySource stages one for a driver; Limits bound
//     each artifact's bytes and entries) and safe unpacking (Unpack refuses any entry that would land
//     outside its destination);
//   - repositories (Repositories.Resolve for artifactRepositoryRef, KeyFor for keyFormat templating,
//     OutputLocation for where an output artifact is saved);
//   - listing (the optional Lister, which file/ and s3/ implement, for data templates' artifactPaths), and
//     directories saved with archive none served as a tar stream (OpenDir, Dir.WriteTar; OpenStream of one
//     fails with ErrIsDirectory on the file repository, ErrNotFound on S3);
//   - garbage collection (Collect deletes the outputs an artifactGC strategy names).
//
// Drivers stream: no artifact is ever held in memory whole. Errors name the artifact and its location but
// never credentials. ErrNotFound marks a location that holds nothing, so callers can honour `optional`.
//
// It imports pkg/apis/v1alpha1 and libraries only; never engine, controller, store, runtime or server.
package artifact
