// Package file is the artifact driver for braid's local repository (the `file` location kind): a
// directory, by default $BRAID_HOME/artifacts, holding each artifact at its key. It is the zero-setup
// default repository.
//
// Keys are relative paths; a key that would leave the root (absolute, "..", or through a symbolic link) is
// refused, and every file system call goes through an os.Root. Save writes to a temporary name and renames,
// so a reader never sees half an artifact. Everything streams.
//
// It imports internal/artifact and pkg/apis/v1alpha1 only.
package file
