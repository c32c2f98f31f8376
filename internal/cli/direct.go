package cli

import (
	"context"
	"errors"

	"github.com/braidwf/braid/internal/app"
	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/pkg/apiclient/client"
)

// Direct mode: with no server to talk to, a command starts braid's API
// server in-process on the data directory's store, on an in-memory
// listener (app.StartDirect), and talks to it with the same client (gRPC,
// or REST with --argo-http1) as to a remote server. Nothing runs workflows
// there: a workflow submitted in direct mode runs once `braid server` is
// started on the same data directory.

// directAddress is the name the in-process server is dialled by.
const directAddress = "braid-direct"

func (g *globalFlags) openDirect(ctx context.Context, cfg *config.Config) (*session, error) {
	d, err := app.StartDirect(ctx, cfg, directAddress)
	if err != nil {
		return nil, err
	}
	o, err := g.clientOptions(directAddress)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	o.Secure, o.BaseHref = false, ""
	o.Dial = d.Dial
	c, err := client.New(o)
	if err != nil {
		return nil, errors.Join(err, d.Close())
	}
	closeFn := func() error { return errors.Join(c.Close(), d.Close()) }
	return &session{Client: c, namespace: g.ns(), direct: true, dataDir: cfg.DataDir, address: directAddress, closeFn: closeFn}, nil
}
