package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/braidwf/braid/internal/config"
	cronsched "github.com/braidwf/braid/internal/controller/cron"
	"github.com/braidwf/braid/internal/server"
)

// configPoll is how often braid server looks for a change of its config file.
const configPoll = 2 * time.Second

// Listen says where and how braid server serves its API.
type Listen struct {
	// Address and Port are where to listen ("" or 0.0.0.0: every interface).
	Address string
	Port    int
	// TLS serves TLS; nil: plain.
	TLS *tls.Config
	// Fingerprint is TLS's certificate's SHA-256, which the embedded server
	// records in server.json for the CLI to pin.
	Fingerprint string
	// Logger receives the server's log; nil: discard.
	Logger *slog.Logger
	// Configure sets the options the caller owns (auth, the UI) on what
	// app built, before the server is made; nil: none.
	Configure func(*server.Options)
	// Listening is told the address once the port is open (to print a
	// login URL); nil: nothing.
	Listening func(addr string)
}

// newServer builds the API server from opts, with l's options on top.
func (c Listen) newServer(opts server.Options) (*server.Server, error) {
	opts.Logger, opts.TLS = c.Logger, c.TLS
	if c.Configure != nil {
		c.Configure(&opts)
	}
	return server.New(opts)
}

// listen opens the port.
func (c Listen) listen() (net.Listener, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(c.Address, strconv.Itoa(c.Port)))
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return l, nil
}

func (c Listen) logger() *slog.Logger {
	if c.Logger == nil {
		return warnLogger()
	}
	return c.Logger
}

// Serve is braid server on one machine until ctx ends: it drives every
// workflow (the Manager, which first takes back what a previous server
// left unfinished), schedules CronWorkflows, follows the config file's
// semaphore limits and serves the API, recording its address in the data
// directory's server.json while it serves. The caller closes e.
func (e *Embedded) Serve(ctx context.Context, c Listen) error {
	log := c.logger()
	mgr, err := e.newManager()
	if err != nil {
		return err
	}
	opts := embeddedServerOptions(e.Config, e.Store, e.Artifacts, e.limits)
	opts.Ready = mgr.Ready
	srv, err := c.newServer(opts)
	if err != nil {
		return err
	}
	l, err := c.listen()
	if err != nil {
		return err
	}
	info := config.ServerFile(e.Config.DataDir)
	if err := config.WriteServerInfo(info, config.ServerInfo{Address: l.Addr().String(), PID: os.Getpid(),
		Secure: c.TLS != nil, Fingerprint: c.Fingerprint}); err != nil {
		log.Warn("cannot record the server's address", "file", info, "err", err)
	}
	defer os.Remove(info)
	if c.Listening != nil {
		c.Listening(l.Addr().String())
	}

	mctx, cancel := context.WithCancel(ctx)
	mdone := make(chan error, 1)
	go func() { mdone <- mgr.Run(mctx) }()
	// Only the server schedules CronWorkflows (braid run does not).
	sched, err := cronsched.New(cronsched.Options{Store: e.Store, Logger: log.With("component", "cron")})
	if err != nil {
		cancel()
		return errors.Join(err, <-mdone, l.Close())
	}
	cdone := make(chan error, 1)
	go func() { cdone <- sched.Run(mctx) }()
	// Semaphore limits follow the config file, as Argo's follow its ConfigMaps.
	go e.live.Watch(mctx, configPoll, log, func(*config.Config) { e.Controller.LimitsChanged() })
	serr := srv.Serve(ctx, l)
	cancel()
	return errors.Join(serr, <-mdone, <-cdone)
}

// Serve is braid server on a cluster until ctx ends: it serves the API on
// the cluster's custom resources, and the pods' logs, and, with an
// election, drives workflows too while this replica holds the Lease (k
// must then have been opened WithController). The caller closes k.
func (k *Kube) Serve(ctx context.Context, c Listen, drive *Election) (err error) {
	logs, err := k.podLogs()
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, logs.Close()) }()
	opts := k.serverOptions()
	opts.StepLogs = logs
	srv, err := c.newServer(opts)
	if err != nil {
		return err
	}
	l, err := c.listen()
	if err != nil {
		return err
	}
	if c.Listening != nil {
		c.Listening(l.Addr().String())
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ddone := make(chan error, 1)
	if drive != nil {
		go func() { ddone <- k.Drive(sctx, *drive) }()
	} else {
		ddone <- nil
	}
	serr := srv.Serve(ctx, l)
	cancel()
	return errors.Join(serr, <-ddone)
}
