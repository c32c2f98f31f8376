package git

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/braidwf/braid/internal/artifact"
)

const (
	// maxAttempts bounds the tries of one network operation that fails transiently.
	maxAttempts = 5
	// firstBackoff is the wait after the first failed try; it doubles after each.
	firstBackoff = 100 * time.Millisecond
	// fetchedRevision is where a revision fetched by its commit hash is kept.
	fetchedRevision = "refs/braid/revision"
)

// clone clones into dst, fetches the extra refspecs, checks out the revision and updates submodules.
func (c *checkout) clone(ctx context.Context, dst string) error {
	ref, err := c.cloneRef(ctx)
	if err != nil {
		return err
	}
	opts := &gogit.CloneOptions{
		URL:               c.loc.Repo,
		Auth:              c.auth,
		ReferenceName:     ref,
		SingleBranch:      c.loc.SingleBranch,
		Depth:             c.depth(),
		InsecureSkipTLS:   c.loc.InsecureSkipTLS,
		RecurseSubmodules: gogit.NoRecurseSubmodules,
	}
	var repo *gogit.Repository
	err = c.retry(ctx, func() error {
		cleanDir(dst, false)
		var err error
		repo, err = gogit.PlainCloneContext(ctx, dst, false, opts)
		return err
	})
	if err != nil {
		return c.wrap("clone", err)
	}
	if len(c.loc.Fetch) > 0 {
		if err := c.fetch(ctx, repo, c.loc.Fetch); err != nil {
			return c.wrap("fetch "+strings.Join(c.loc.Fetch, " "), err)
		}
	}
	if c.loc.Revision != "" {
		if err := c.checkoutRevision(ctx, repo); err != nil {
			return err
		}
	}
	if c.loc.DisableSubmodules {
		return nil
	}
	return c.updateSubmodules(ctx, repo)
}

func (c *checkout) depth() int {
	if c.loc.Depth == nil {
		return 0
	}
	if *c.loc.Depth > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(*c.loc.Depth)
}

// cloneRef picks the reference to clone: the branch, or the revision when the remote has a branch or a tag
// of that name (so a shallow clone holds it), or "" for the remote's HEAD.
func (c *checkout) cloneRef(ctx context.Context) (plumbing.ReferenceName, error) {
	if c.loc.Branch != "" {
		return plumbing.NewBranchReferenceName(c.loc.Branch), nil
	}
	rev := c.loc.Revision
	if rev == "" {
		return "", nil
	}
	remote := gogit.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{c.loc.Repo}})
	var refs []*plumbing.Reference
	err := c.retry(ctx, func() error {
		var err error
		refs, err = remote.ListContext(ctx, &gogit.ListOptions{Auth: c.auth, InsecureSkipTLS: c.loc.InsecureSkipTLS})
		return err
	})
	if err != nil {
		return "", c.wrap("list the references of", err)
	}
	wanted := []plumbing.ReferenceName{
		plumbing.ReferenceName(rev), plumbing.NewBranchReferenceName(rev), plumbing.NewTagReferenceName(rev),
	}
	for _, w := range wanted {
		for _, r := range refs {
			if r.Name() == w && (w.IsBranch() || w.IsTag()) {
				return w, nil
			}
		}
	}
	return "", nil
}

// fetch fetches refspecs from origin; already having them is fine.
func (c *checkout) fetch(ctx context.Context, repo *gogit.Repository, refspecs []string) error {
	specs := make([]config.RefSpec, 0, len(refspecs))
	for _, s := range refspecs {
		spec := config.RefSpec(s)
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("refspec %q: %w", s, err)
		}
		specs = append(specs, spec)
	}
	return c.retry(ctx, func() error {
		err := repo.FetchContext(ctx, &gogit.FetchOptions{
			RemoteName: "origin", RefSpecs: specs, Depth: c.depth(), Auth: c.auth,
			InsecureSkipTLS: c.loc.InsecureSkipTLS, Force: true,
		})
		if errors.Is(err, gogit.NoErrAlreadyUpToDate) {
			return nil
		}
		return err
	})
}

// checkoutRevision resolves the revision (as given, then as a remote branch, then by fetching a full
// commit hash the clone lacks) and checks it out.
func (c *checkout) checkoutRevision(ctx context.Context, repo *gogit.Repository) error {
	rev := c.loc.Revision
	hash, ok := resolve(repo, rev)
	if !ok && isFullHash(rev) {
		if err := c.fetch(ctx, repo, []string{rev + ":" + fetchedRevision}); err == nil {
			hash, ok = resolve(repo, rev)
		}
	}
	if !ok {
		note := ""
		if c.depth() > 0 {
			note = fmt.Sprintf(" (depth %d fetched only the latest commits; a commit hash needs a deeper clone)", c.depth())
		}
		return c.newError(fmt.Sprintf("%s: revision %q not found in the repository%s", c.prefix(), rev, note),
			fmt.Errorf("revision %q: %w", rev, artifact.ErrNotFound))
	}
	wt, err := repo.Worktree()
	if err == nil {
		err = wt.Checkout(&gogit.CheckoutOptions{Hash: hash, Force: true})
	}
	if err != nil {
		return c.wrap("check out "+hash.String()+" of", err)
	}
	return nil
}

func resolve(repo *gogit.Repository, rev string) (plumbing.Hash, bool) {
	for _, r := range []string{rev, "refs/remotes/origin/" + rev} {
		if h, err := repo.ResolveRevision(plumbing.Revision(r)); err == nil {
			return *h, true
		}
	}
	return plumbing.ZeroHash, false
}

func isFullHash(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// updateSubmodules initialises and updates the submodules, recursively.
func (c *checkout) updateSubmodules(ctx context.Context, repo *gogit.Repository) error {
	wt, err := repo.Worktree()
	if err != nil {
		return c.wrap("open the worktree of", err)
	}
	subs, err := wt.Submodules()
	if err != nil {
		return c.wrap("read the submodules of", err)
	}
	if len(subs) == 0 {
		return nil
	}
	err = c.retry(ctx, func() error {
		return subs.UpdateContext(ctx, &gogit.SubmoduleUpdateOptions{
			Init: true, RecurseSubmodules: gogit.DefaultSubmoduleRecursionDepth, Auth: c.auth,
		})
	})
	if err != nil {
		return c.wrap("update the submodules (set disableSubmodules to skip them) of", err)
	}
	return nil
}

// retry runs op up to maxAttempts times while it fails with a network error, backing off exponentially.
func (c *checkout) retry(ctx context.Context, op func() error) error {
	wait := firstBackoff
	var err error
	for attempt := 1; ; attempt++ {
		if err = op(); err == nil || !transient(err) {
			return err
		}
		if attempt == maxAttempts {
			return fmt.Errorf("gave up after %d attempts: %w", maxAttempts, err)
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// transient: err is a network failure worth another try (not a missing repository, a refused login, a
// missing reference or a cancelled context).
func transient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF)
}

// opError is a driver error: a message naming the artifact and its repository (credentials scrubbed) over
// the error chain callers test with errors.Is.
type opError struct {
	msg string
	err error
}

func (e *opError) Error() string { return e.msg }
func (e *opError) Unwrap() error { return e.err }

func (c *checkout) prefix() string {
	rev := ""
	if c.loc.Revision != "" {
		rev = fmt.Sprintf(", revision %q", c.loc.Revision)
	}
	return fmt.Sprintf("git artifact %q (%s%s)", c.art.Name, redactURL(c.loc.Repo), rev)
}

func (c *checkout) errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return c.newError(c.prefix()+": "+err.Error(), err)
}

// wrap reports a failed operation with a hint for the common causes; a missing repository or reference
// wraps artifact.ErrNotFound.
func (c *checkout) wrap(op string, err error) error {
	hint := ""
	switch {
	case errors.Is(err, transport.ErrRepositoryNotFound):
		hint, err = "the repository does not exist: ", fmt.Errorf("%w: %w", artifact.ErrNotFound, err)
	case errors.Is(err, plumbing.ErrReferenceNotFound), errors.As(err, new(gogit.NoMatchingRefSpecError)):
		hint, err = "the reference does not exist: ", fmt.Errorf("%w: %w", artifact.ErrNotFound, err)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		hint = "access denied (check usernameSecret/passwordSecret or sshPrivateKeySecret): "
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		hint = "the repository is empty: "
	case transient(err):
		hint = "cannot reach the repository: "
	}
	return c.newError(fmt.Sprintf("%s: %s: %s%v", c.prefix(), op, hint, err), err)
}

func (c *checkout) newError(msg string, err error) error {
	for _, s := range c.secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "***")
		}
	}
	return &opError{msg: redactText(msg, c.loc.Repo), err: err}
}

// redactURL hides the password of a URL with user information.
func redactURL(repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return repo
	}
	return u.Redacted()
}

// redactText replaces repo's password, wherever it appears in msg.
func redactText(msg, repo string) string {
	u, err := url.Parse(repo)
	if err != nil || u.User == nil {
		return msg
	}
	if pass, ok := u.User.Password(); ok && pass != "" {
		msg = strings.ReplaceAll(msg, pass, "xxxxx")
	}
	return msg
}
