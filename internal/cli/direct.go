package cli

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc/test/bufconn"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/runtime/local"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store/sqlite"
	"github.com/braidwf/braid/pkg/apiclient/client"
)

// Direct mode: with no server to talk to, a command starts braid's API
// server in-process on the data directory's store, on an in-memory
// listener, and talks to it with the same client (gRPC, or REST with
// --argo-http1) as to a remote server. Nothing runs workflows there: a
// workflow submitted in direct mode runs once `braid server` is started on
// the same data directory.

// directAddress is the name the in-process server is dialled by.
const directAddress = "braid-direct"

func (g *globalFlags) openDirect(ctx context.Context, cfg *config.Config) (*session, error) {
	if err := makeDataDir(cfg.DataDir, warnLogger()); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, cfg.StorePath(), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the embedded store: %w", err)
	}
	dataDir := cfg.DataDir
	srv, err := server.New(server.Options{Store: st, Artifacts: artifactDrivers(cfg),
		LogPath:        func(ns, wf, pod string) string { return local.LogPath(dataDir, ns, wf, pod) },
		ForgetWorkflow: func(ns, wf string) error { return local.RemoveWorkflowFiles(dataDir, ns, wf) },
		SyncLimits:     &embeddedLimits{store: st, live: config.NewLive(cfg)},
		// In-process, on an in-memory listener only this command reaches:
		// server mode, and the name it is dialled by.
		Browser: auth.BrowserConfig{AllowedHosts: []string{directAddress}}})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	lis := bufconn.Listen(1 << 20)
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, lis) }()

	o, err := g.clientOptions(directAddress)
	if err != nil {
		cancel()
		return nil, errors.Join(err, <-served, st.Close())
	}
	o.Secure, o.BaseHref = false, ""
	o.Dial = func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	c, err := client.New(o)
	if err != nil {
		cancel()
		return nil, errors.Join(err, <-served, st.Close())
	}
	closeFn := func() error {
		cerr := c.Close()
		cancel()
		return errors.Join(cerr, <-served, st.Close())
	}
	return &session{Client: c, namespace: g.ns(), direct: true, dataDir: cfg.DataDir, address: directAddress, closeFn: closeFn}, nil
}
