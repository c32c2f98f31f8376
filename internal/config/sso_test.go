package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSSOConfigValidate(t *testing.T) {
	valid := `sso:
  issuer: https://login.example/
  clientId: {name: sso, key: id}
  clientSecret: {name: sso, key: secret}
  redirectUrl: https://braid.example/oauth2/callback
`
	for _, tc := range []struct{ extra, want string }{
		{"", ""},
		{"  sessionExpiry: 240h\n  scopes: [groups, email]\n  rbac: {enabled: true}\n  filterGroupsRegex: ['^argo-']\n", ""},
		{"  customGroupClaimName: roles\n  userInfoPath: /userinfo\n  insecureSkipVerify: true\n  issuerAlias: https://a.example/x\n", ""},
		{"  rootCA: |\n" + indent(testCAPEM(t), "    "), ""},
		{"  sessionExpiry: forever\n", "sso.sessionExpiry"},
		{"  sessionExpiry: -1h\n", "sso.sessionExpiry"},
		{"  filterGroupsRegex: ['(']\n", "sso.filterGroupsRegex[0]"},
		{"  rootCA: not pem\n", "sso.rootCA"},
		{"  issuerAlias: login\n", "sso.issuerAlias"},
	} {
		cfg := loadText(t, valid+tc.extra)
		err := cfg.SSO.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%q: %v, want %q", tc.extra, err, tc.want)
		}
	}
	cfg := loadText(t, "sso:\n  issuer: login.example\n  clientId: {name: sso}\n")
	err := cfg.SSO.Validate()
	for _, want := range []string{"sso.issuer:", "sso.redirectUrl: required", "sso.clientId.key: required",
		"sso.clientSecret.name: required", "sso.clientSecret.key: required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in %v", want, err)
		}
	}
	if d, err := loadText(t, valid).SSO.Expiry(); err != nil || d != 10*time.Hour {
		t.Errorf("default expiry %v %v", d, err)
	}
	if cfg := loadText(t, valid); cfg.SSO.RBACEnabled() || cfg.SSO.ClientSecret.Key != "secret" {
		t.Errorf("%+v", cfg.SSO)
	}
}

func loadText(t *testing.T, text string) *Config {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Sources{DataDirFlag: dir, ConfigFlag: file})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pre) + "\n"
}

func testCAPEM(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
