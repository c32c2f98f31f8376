// Package git is the artifact driver for git locations, built on go-git: an input artifact that is a
// checkout of a repository.
//
// It owns Load: clone `repo` into the artifact's path and check out `revision` (a branch, a tag, a commit
// hash or any expression go-git resolves, such as HEAD~1), honouring `depth`, the extra `fetch` refspecs,
// `singleBranch` and `branch`, `insecureSkipTLS`, and the submodules unless `disableSubmodules`. A branch
// or tag revision is cloned directly, so `depth: 1` fetches just that commit. Credentials come from
// usernameSecret/passwordSecret (basic auth over HTTP(S), password auth over SSH) or sshPrivateKeySecret
// (with insecureIgnoreHostKey to skip host-key checking).
//
// Save, OpenStream and Delete wrap artifact.ErrUnsupported: a git location is input-only. A revision that
// does not resolve wraps artifact.ErrNotFound. Network failures are retried a bounded number of times.
// Errors name the artifact, the repository (with any password in its URL redacted) and the revision, never
// a credential.
//
// It imports internal/artifact, pkg/apis/v1alpha1 and libraries only.
package git
