package client

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/braidwf/braid/pkg/apiclient/clusterworkflowtemplate"
	"github.com/braidwf/braid/pkg/apiclient/cronworkflow"
	"github.com/braidwf/braid/pkg/apiclient/event"
	"github.com/braidwf/braid/pkg/apiclient/info"
	syncapi "github.com/braidwf/braid/pkg/apiclient/sync"
	"github.com/braidwf/braid/pkg/apiclient/workflow"
	"github.com/braidwf/braid/pkg/apiclient/workflowarchive"
	"github.com/braidwf/braid/pkg/apiclient/workflowtemplate"
	"github.com/braidwf/braid/pkg/wirecodec"
)

// Options say how to reach a server.
type Options struct {
	// Address is host:port, without a scheme.
	Address string
	// Secure uses TLS (https for HTTP/1).
	Secure bool
	// InsecureSkipVerify turns off the verification of the server's
	// certificate.
	InsecureSkipVerify bool
	// CertFingerprint pins the server's certificate (with Secure): the
	// client accepts exactly the server whose leaf certificate has this
	// SHA-256 fingerprint (hex, upper or lower case, colons allowed), and
	// no other, whoever signed it and whatever names it holds. Chain and
	// host name verification are replaced by this comparison, which is
	// how the braid CLI trusts the self-signed certificate of a local
	// `braid server` (recorded in its server.json). Empty: no pinning.
	CertFingerprint string
	// CACertFile is a PEM file of the certificate authorities to verify
	// the server's certificate with, instead of the system's. Empty: the
	// system's.
	CACertFile string
	// HTTP1 talks REST (argo-server's /api/v1 JSON) instead of gRPC.
	HTTP1 bool
	// BaseHref is put between host:port and /api/v1 (HTTP/1 only), verbatim.
	BaseHref string
	// Token is sent verbatim as the Authorization header ("Bearer ...").
	// Empty: no header.
	Token string
	// Headers are extra HTTP/1 request headers.
	Headers http.Header
	// Dial replaces the network dialer (for in-process servers). Nil: TCP.
	Dial func(ctx context.Context, address string) (net.Conn, error)
}

// Client holds one client per service, all on one connection.
type Client struct {
	Workflow                workflow.WorkflowServiceClient
	WorkflowTemplate        workflowtemplate.WorkflowTemplateServiceClient
	ClusterWorkflowTemplate clusterworkflowtemplate.ClusterWorkflowTemplateServiceClient
	CronWorkflow            cronworkflow.CronWorkflowServiceClient
	Archive                 workflowarchive.ArchivedWorkflowServiceClient
	Event                   event.EventServiceClient
	Info                    info.InfoServiceClient
	Sync                    syncapi.SyncServiceClient

	conn  grpc.ClientConnInterface
	close func() error
	// rest serves plain HTTP requests (the artifact routes), whatever the
	// transport of the services.
	rest *restConn
}

// New connects as o says. The connection is lazy: an unreachable server
// shows up as an Unavailable error on the first call.
func New(o Options) (*Client, error) {
	if o.Address == "" {
		return nil, errors.New("client: no server address")
	}
	tc, err := TLSConfig(o)
	if err != nil {
		return nil, err
	}
	rc, err := newRESTConn(o, tc)
	if err != nil {
		return nil, err
	}
	if o.HTTP1 {
		c := NewConn(rc, rc.Close)
		c.rest = rc
		return c, nil
	}
	dopts := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), CallCodec()),
	}
	if o.Secure {
		dopts = append(dopts, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
	} else {
		dopts = append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if o.Token != "" {
		dopts = append(dopts,
			grpc.WithUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				return invoker(withToken(ctx, o.Token), method, req, reply, cc, opts...)
			}),
			grpc.WithStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				return streamer(withToken(ctx, o.Token), desc, cc, method, opts...)
			}))
	}
	target := o.Address
	if o.Dial != nil {
		dopts = append(dopts, grpc.WithContextDialer(o.Dial))
		target = "passthrough:///" + o.Address
	}
	cc, err := grpc.NewClient(target, dopts...)
	if err != nil {
		return nil, fmt.Errorf("client: connect to %s: %w", o.Address, err)
	}
	c := NewConn(cc, func() error { return errors.Join(cc.Close(), rc.Close()) })
	c.rest = rc
	return c, nil
}

// CallCodec is the call option that carries the generated messages (plain
// Go structs, pkg/apis/v1alpha1 objects) in Argo's protobuf wire format
// (pkg/wirecodec) with the "proto" content-subtype. New sets it on every
// call, whatever codec is registered globally; a connection given to
// NewConn needs it as a default call option too.
func CallCodec() grpc.CallOption { return grpc.ForceCodecV2(wirecodec.CodecV2{}) }

// TLSConfig is the client TLS configuration New uses for o (with Secure):
// the system's roots (or CACertFile's), no verification with
// InsecureSkipVerify, and the pinning of CertFingerprint.
func TLSConfig(o Options) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: o.InsecureSkipVerify} //nolint:gosec // the user asked for it
	if o.CACertFile != "" {
		pem, err := os.ReadFile(o.CACertFile)
		if err != nil {
			return nil, fmt.Errorf("client: CA certificates: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("client: CA certificates %s: no PEM certificate in the file", o.CACertFile)
		}
	}
	if o.CertFingerprint == "" {
		return tc, nil
	}
	want := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(o.CertFingerprint), ":", ""))
	if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
		return nil, fmt.Errorf("client: certificate fingerprint %q: want the 64 hex digits of a SHA-256", o.CertFingerprint)
	}
	// Pinning: the chain is not verified (InsecureSkipVerify); instead
	// VerifyConnection, which crypto/tls calls on every handshake, accepts
	// exactly the leaf certificate with the pinned fingerprint.
	tc.InsecureSkipVerify = true //nolint:gosec // replaced by the fingerprint check below
	tc.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the server sent no certificate to compare with the pinned fingerprint")
		}
		sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
		if got := hex.EncodeToString(sum[:]); got != want {
			return fmt.Errorf("the server's certificate has SHA-256 fingerprint %s, not the pinned %s "+
				"(was the server's certificate replaced, or is this another server?)", got, want)
		}
		return nil
	}
	return tc, nil
}

// Get sends a plain HTTP GET for path (the artifact routes, which are not
// part of the API) to the server, with the client's headers and TLS
// settings. The caller closes the body; a status other than 200 is the
// caller's to judge.
func (c *Client) Get(ctx context.Context, path string) (*http.Response, error) {
	if c.rest == nil {
		return nil, errors.New("client: this connection cannot send plain HTTP requests")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.rest.base+path, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range c.rest.header {
		req.Header[k] = append([]string(nil), v...)
	}
	return c.rest.hc.Do(req)
}

func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", token)
}

// NewConn builds a Client on a connection the caller made; closeFn (may be
// nil) is called by Close. A *grpc.ClientConn must be dialled with
// grpc.WithDefaultCallOptions(CallCodec()) unless wirecodec.Register has
// replaced gRPC's "proto" codec: the messages are not protobuf-go messages.
func NewConn(cc grpc.ClientConnInterface, closeFn func() error) *Client {
	return &Client{
		Workflow:                workflow.NewWorkflowServiceClient(cc),
		WorkflowTemplate:        workflowtemplate.NewWorkflowTemplateServiceClient(cc),
		ClusterWorkflowTemplate: clusterworkflowtemplate.NewClusterWorkflowTemplateServiceClient(cc),
		CronWorkflow:            cronworkflow.NewCronWorkflowServiceClient(cc),
		Archive:                 workflowarchive.NewArchivedWorkflowServiceClient(cc),
		Event:                   event.NewEventServiceClient(cc),
		Info:                    info.NewInfoServiceClient(cc),
		Sync:                    syncapi.NewSyncServiceClient(cc),
		conn:                    cc,
		close:                   closeFn,
	}
}

// Conn is the connection under the clients.
func (c *Client) Conn() grpc.ClientConnInterface { return c.conn }

// Close closes the connection.
func (c *Client) Close() error {
	if c.close == nil {
		return nil
	}
	return c.close()
}

// baseURL is scheme://address + base href.
func baseURL(o Options) string {
	scheme := "http"
	if o.Secure {
		scheme = "https"
	}
	return scheme + "://" + o.Address + strings.TrimSpace(o.BaseHref)
}
