package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The files of the token store, in the data directory (mode 0600).
const (
	// LocalTokenFile holds the secret of the local token, which the braid
	// CLI on this machine sends with no flags.
	LocalTokenFile = "token"
	// TokensFile lists the tokens: names, rights and the SHA-256 of each
	// secret; never a secret.
	TokensFile = "tokens.json"
	// LocalTokenName is the local token's name and subject.
	LocalTokenName = "local"

	secretPrefix = "braid_"
	secretBytes  = 32 // 256 bits
)

// Token is one named token: an identity with its rights, standing in for
// a ServiceAccount and its Roles on one machine.
type Token struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Grant
	// RBACRule and RBACRulePrecedence let SSO users act as this token (see
	// RBACRule).
	RBACRule           string     `json:"rbacRule,omitempty"`
	RBACRulePrecedence int        `json:"rbacRulePrecedence,omitempty"`
	CreatedAt          time.Time  `json:"createdAt"`
	ExpiresAt          *time.Time `json:"expiresAt,omitempty"`
	// SHA256 is the hex SHA-256 of the secret; the secret is not kept.
	SHA256 string `json:"sha256"`
}

// Expired says whether t has expired at now.
func (t *Token) Expired(now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}

type tokensDoc struct {
	Tokens []Token `json:"tokens"`
}

// fileStamp tells a changed file from an unchanged one without reading it.
type fileStamp struct {
	mod  time.Time
	size int64
	ino  uint64
}

// Tokens is the embedded token store: a Verifier of client-mode
// credentials and the source of the SSO RBAC rules. Another process (the
// braid CLI) may change the file; every Verify looks at the file's stamp,
// so a revoked token stops working at the next request.
type Tokens struct {
	dir string
	now func() time.Time

	mu     sync.Mutex
	stamp  fileStamp
	byHash map[string]*Token
	list   []Token
}

var _ Verifier = (*Tokens)(nil)

var tokenName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// OpenTokens opens the token store of a data directory; now may be nil.
func OpenTokens(dir string, now func() time.Time) (*Tokens, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tokens: %w", err)
	}
	t := &Tokens{dir: dir, now: now}
	if err := t.reload(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tokens) path() string { return filepath.Join(t.dir, TokensFile) }

// LocalTokenPath is where a data directory keeps its local token.
func LocalTokenPath(dataDir string) string { return filepath.Join(dataDir, LocalTokenFile) }

// ReadLocalToken reads the local token of a data directory, as the
// Authorization value to send ("Bearer braid_...").
func ReadLocalToken(dataDir string) (string, error) {
	b, err := os.ReadFile(LocalTokenPath(dataDir))
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty", LocalTokenPath(dataDir))
	}
	return "Bearer " + s, nil
}

// reload reads the file again when its stamp changed. Callers hold no lock.
func (t *Tokens) reload() error {
	fi, err := os.Stat(t.path())
	var st fileStamp
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("tokens: %w", err)
	default:
		st = fileStamp{mod: fi.ModTime(), size: fi.Size()}
		if s, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.ino = s.Ino
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if st == t.stamp && t.byHash != nil {
		return nil
	}
	doc, err := readTokens(t.path())
	if err != nil {
		return err
	}
	byHash := make(map[string]*Token, len(doc.Tokens))
	for i := range doc.Tokens {
		byHash[doc.Tokens[i].SHA256] = &doc.Tokens[i]
	}
	t.stamp, t.byHash, t.list = st, byHash, doc.Tokens
	return nil
}

func readTokens(path string) (tokensDoc, error) {
	var doc tokensDoc
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, fmt.Errorf("tokens: %w", err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("tokens: %s: %w", path, err)
	}
	return doc, nil
}

// update changes the file under an exclusive lock, so that two braid
// processes never lose each other's change.
func (t *Tokens) update(fn func(*tokensDoc) error) error {
	lock, err := os.OpenFile(filepath.Join(t.dir, TokensFile+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("tokens: lock: %w", err)
	}
	doc, err := readTokens(t.path())
	if err != nil {
		return err
	}
	if err := fn(&doc); err != nil {
		return err
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(t.path(), append(b, '\n')); err != nil {
		return fmt.Errorf("tokens: %w", err)
	}
	return t.reload()
}

// WriteFileAtomic writes data to path with mode 0600, through a temporary
// file in the same directory.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func newSecret() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return secretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// EnsureLocal makes the local token on first use: a random secret in
// <dir>/token (0600) and its entry, with every right. It returns the
// Authorization value to send.
func (t *Tokens) EnsureLocal() (string, error) {
	if tok, err := ReadLocalToken(t.dir); err == nil {
		if err := t.reload(); err != nil {
			return "", err
		}
		t.mu.Lock()
		_, known := t.byHash[hashSecret(strings.TrimPrefix(tok, "Bearer "))]
		t.mu.Unlock()
		if known {
			return tok, nil
		}
	}
	secret, err := newSecret()
	if err != nil {
		return "", err
	}
	err = t.update(func(doc *tokensDoc) error {
		doc.Tokens = slices.DeleteFunc(doc.Tokens, func(x Token) bool { return x.Name == LocalTokenName })
		doc.Tokens = append(doc.Tokens, Token{Name: LocalTokenName, Subject: LocalTokenName, Grant: *FullGrant(),
			CreatedAt: t.now().UTC().Truncate(time.Second), SHA256: hashSecret(secret)})
		return WriteFileAtomic(LocalTokenPath(t.dir), []byte(secret+"\n"))
	})
	if err != nil {
		return "", err
	}
	return "Bearer " + secret, nil
}

// Create adds a named token and returns its secret, the only time it is
// shown. The name must be new.
func (t *Tokens) Create(spec Token, ttl time.Duration) (string, error) {
	if !tokenName.MatchString(spec.Name) {
		return "", fmt.Errorf("token name %q: want lower-case letters, digits and '-', at most 63", spec.Name)
	}
	if len(spec.Namespaces) == 0 && !spec.Cluster {
		return "", fmt.Errorf("token %q: give at least one --namespace (or '*' for all)", spec.Name)
	}
	if len(spec.Verbs) == 0 {
		return "", fmt.Errorf("token %q: give at least one --verb (or '*' for all)", spec.Name)
	}
	for _, v := range spec.Verbs {
		if v != AllVerbs && !slices.Contains(Verbs, v) {
			return "", fmt.Errorf("token %q: unknown verb %q (want one of %s, or '*')", spec.Name, v, strings.Join(Verbs, ", "))
		}
	}
	if spec.Subject == "" {
		spec.Subject = spec.Name
	}
	secret, err := newSecret()
	if err != nil {
		return "", err
	}
	now := t.now().UTC().Truncate(time.Second)
	spec.CreatedAt, spec.SHA256 = now, hashSecret(secret)
	if ttl > 0 {
		exp := now.Add(ttl)
		spec.ExpiresAt = &exp
	}
	err = t.update(func(doc *tokensDoc) error {
		if slices.ContainsFunc(doc.Tokens, func(x Token) bool { return x.Name == spec.Name }) {
			return fmt.Errorf("token %q already exists", spec.Name)
		}
		doc.Tokens = append(doc.Tokens, spec)
		return nil
	})
	if err != nil {
		return "", err
	}
	return "Bearer " + secret, nil
}

// Revoke removes a named token; it stops working at once.
func (t *Tokens) Revoke(name string) error {
	return t.update(func(doc *tokensDoc) error {
		n := len(doc.Tokens)
		doc.Tokens = slices.DeleteFunc(doc.Tokens, func(x Token) bool { return x.Name == name })
		if len(doc.Tokens) == n {
			return fmt.Errorf("token %q not found", name)
		}
		if name == LocalTokenName {
			_ = os.Remove(LocalTokenPath(t.dir))
		}
		return nil
	})
}

// List is every token, without secrets.
func (t *Tokens) List() ([]Token, error) {
	if err := t.reload(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.list), nil
}

// Rules are the SSO RBAC rules of the tokens that have one.
func (t *Tokens) Rules() []RBACRule {
	list, err := t.List()
	if err != nil {
		return nil
	}
	var out []RBACRule
	now := t.now()
	for i := range list {
		tok := &list[i]
		if tok.RBACRule == "" || tok.Expired(now) {
			continue
		}
		g := tok.Grant
		out = append(out, RBACRule{Name: tok.Name, Rule: tok.RBACRule, Precedence: tok.RBACRulePrecedence, Grant: &g})
	}
	return out
}

// Verify implements Verifier for "Bearer <secret>" and "Basic
// base64(name:secret)".
func (t *Tokens) Verify(_ context.Context, authorization string) (*Identity, error) {
	secret, user, err := credential(authorization)
	if err != nil {
		return nil, err
	}
	if err := t.reload(); err != nil {
		return nil, err
	}
	t.mu.Lock()
	tok := t.byHash[hashSecret(secret)]
	t.mu.Unlock()
	if tok == nil || (user != "" && user != tok.Name) {
		return nil, Unauthenticated("unknown or revoked token")
	}
	if tok.Expired(t.now()) {
		return nil, Unauthenticated("token %q expired at %s", tok.Name, tok.ExpiresAt.Format(time.RFC3339))
	}
	g := tok.Grant
	return &Identity{Mode: ModeClient, Issuer: "braid", Subject: tok.Subject, ServiceAccountName: tok.Name, Grant: &g}, nil
}

// credential splits "Bearer s" or "Basic base64(user:s)".
func credential(authorization string) (secret, user string, err error) {
	if s, ok := strings.CutPrefix(authorization, "Bearer "); ok {
		return strings.TrimSpace(s), "", nil
	}
	if b, ok := strings.CutPrefix(authorization, "Basic "); ok {
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b))
		if err != nil {
			return "", "", Unauthenticated("malformed Basic credential")
		}
		u, p, ok := strings.Cut(string(raw), ":")
		if !ok {
			return "", "", Unauthenticated("malformed Basic credential: want user:token")
		}
		return p, u, nil
	}
	return "", "", Unauthenticated(`want "Bearer <token>" or "Basic <credential>"`)
}

// IdentityOf is the identity of the named token (a webhook client acts as
// the token of its name).
func (t *Tokens) IdentityOf(name string) (*Identity, error) {
	list, err := t.List()
	if err != nil {
		return nil, err
	}
	for i := range list {
		tok := &list[i]
		if tok.Name != name {
			continue
		}
		if tok.Expired(t.now()) {
			return nil, Unauthenticated("token %q expired at %s", tok.Name, tok.ExpiresAt.Format(time.RFC3339))
		}
		g := tok.Grant
		return &Identity{Mode: ModeClient, Issuer: "braid", Subject: tok.Subject, ServiceAccountName: tok.Name, Grant: &g}, nil
	}
	return nil, Unauthenticated("no token named %q", name)
}
