package kube_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// kubeconfig is the part of a kubeconfig file these tests read.
type kubeconfig struct {
	CurrentContext string `json:"current-context"`
	Clusters       []struct {
		Name    string `json:"name"`
		Cluster struct {
			Server                   string `json:"server"`
			InsecureSkipTLSVerify    bool   `json:"insecure-skip-tls-verify"`
			CertificateAuthorityData string `json:"certificate-authority-data"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Token string `json:"token"`
		} `json:"user"`
	} `json:"users"`
	Contexts []struct {
		Name    string `json:"name"`
		Context struct {
			Cluster string `json:"cluster"`
			User    string `json:"user"`
		} `json:"context"`
	} `json:"contexts"`
}

// apiClient is a minimal client for the kube-apiserver's REST API.
type apiClient struct {
	server string
	token  string
	http   *http.Client
}

// apiError is a response with a status code other than 2xx.
type apiError struct {
	code int
	body string
}

func (e *apiError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.code, e.body) }

// newClient returns a client for KUBECONFIG's current context, or skips the
// test unless BRAID_KUBE=1 and KUBECONFIG are set.
func newClient(t *testing.T) *apiClient {
	t.Helper()
	path := os.Getenv("KUBECONFIG")
	if os.Getenv("BRAID_KUBE") != "1" || path == "" {
		t.Skip("set BRAID_KUBE=1 and KUBECONFIG (make kube-up) to run Kubernetes tests")
	}
	c, err := clientFromKubeconfig(filepath.SplitList(path)[0])
	if err != nil {
		t.Fatalf("kubeconfig: %v", err)
	}
	return c
}

func clientFromKubeconfig(path string) (*apiClient, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	var clusterName, userName string
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			clusterName, userName = c.Context.Cluster, c.Context.User
		}
	}
	c := &apiClient{}
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	for _, cl := range kc.Clusters {
		if cl.Name != clusterName {
			continue
		}
		c.server = strings.TrimSuffix(cl.Cluster.Server, "/")
		tlsConf.InsecureSkipVerify = cl.Cluster.InsecureSkipTLSVerify
		if cl.Cluster.CertificateAuthorityData != "" {
			pemData, err := base64.StdEncoding.DecodeString(cl.Cluster.CertificateAuthorityData)
			if err != nil {
				return nil, fmt.Errorf("certificate-authority-data: %w", err)
			}
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(pemData)
			tlsConf.RootCAs = pool
		}
	}
	for _, u := range kc.Users {
		if u.Name == userName {
			c.token = u.User.Token
		}
	}
	if c.server == "" {
		return nil, fmt.Errorf("%s: no cluster for context %q", path, kc.CurrentContext)
	}
	c.http = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsConf}}
	return c, nil
}

// do sends a request with in (if not nil) as JSON and decodes the response
// into out (if not nil). It returns the raw body.
func (c *apiClient) do(ctx context.Context, method, path string, in, out any) ([]byte, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return data, fmt.Errorf("%s %s: %w", method, path, &apiError{resp.StatusCode, strings.TrimSpace(string(data))})
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return data, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return data, nil
}

// create POSTs obj to path, treating 409 Already Exists as success.
func (c *apiClient) create(ctx context.Context, path string, obj any) error {
	_, err := c.do(ctx, http.MethodPost, path, obj, nil)
	var ae *apiError
	if errors.As(err, &ae) && ae.code == http.StatusConflict {
		return nil
	}
	return err
}

// servingCA returns the certificates the apiserver presents, PEM-encoded:
// on the hack/kube cluster, its self-signed serving certificate and CA, which
// is what the kube-root-ca.crt ConfigMap holds.
func (c *apiClient) servingCA(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.server+"/readyz", nil)
	if err != nil {
		return "", fmt.Errorf("serving CA: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("serving CA: %w", err)
	}
	defer resp.Body.Close()
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
		return "", errors.New("serving CA: the apiserver presented no certificate")
	}
	var b strings.Builder
	for _, cert := range resp.TLS.PeerCertificates {
		if err := pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}); err != nil {
			return "", fmt.Errorf("serving CA: %w", err)
		}
	}
	return b.String(), nil
}
