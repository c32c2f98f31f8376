package app

import (
	"context"
	"errors"
	"fmt"
	"net"

	"google.golang.org/grpc/test/bufconn"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/internal/server"
	"github.com/braidwf/braid/internal/server/auth"
	"github.com/braidwf/braid/internal/store/sqlite"
)

// Direct is braid's API server in this process on the data directory's
// store, on an in-memory listener that only this process reaches (a
// command's direct mode). Nothing runs workflows there: a workflow
// submitted in direct mode runs once braid server is started on the same
// data directory.
type Direct struct {
	lis    *bufconn.Listener
	store  *sqlite.Store
	cancel context.CancelFunc
	served chan error
}

// StartDirect serves the API on cfg's data directory, in server auth mode
// (every caller has the server's rights), to clients that dial it by the
// name host.
func StartDirect(ctx context.Context, cfg *config.Config, host string) (*Direct, error) {
	if err := makeDataDir(cfg.DataDir, warnLogger()); err != nil {
		return nil, err
	}
	st, err := sqlite.Open(ctx, cfg.StorePath(), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open the embedded store: %w", err)
	}
	opts := embeddedServerOptions(cfg, st, artifactDrivers(cfg), &embeddedLimits{store: st, live: config.NewLive(cfg)})
	opts.Browser = auth.BrowserConfig{AllowedHosts: []string{host}}
	srv, err := server.New(opts)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	d := &Direct{lis: bufconn.Listen(1 << 20), store: st, served: make(chan error, 1)}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	d.cancel = cancel
	go func() { d.served <- srv.Serve(sctx, d.lis) }()
	return d, nil
}

// Dial connects to the server (a client's dialer; the address is ignored).
func (d *Direct) Dial(ctx context.Context, _ string) (net.Conn, error) { return d.lis.DialContext(ctx) }

// Close stops the server and closes the store.
func (d *Direct) Close() error {
	d.cancel()
	return errors.Join(<-d.served, d.store.Close())
}
