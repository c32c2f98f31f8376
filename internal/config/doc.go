// Package config parses braid's settings once into a Config value that is
// passed down; no other package reads the config file.
//
// # What it owns
//
//   - Load (config.go): the data directory (--data-dir, then $BRAID_HOME,
//     then ~/.braid) and the YAML config file (--config, else
//     <data dir>/config.yaml when it exists), read strictly and checked
//     once (isolation mode, limits, the archive's TTL). The Config holds
//     the image table's additions (image.Table), the artifact
//     repositories, the stand-ins for Secrets and ConfigMaps on one
//     machine, the isolation mode and images directory, parallelism,
//     database semaphore limits, the retention policy, workflowDefaults,
//     persistence (the archive) and SSO.
//   - Limits (limits.go): what one workflow may make the server build,
//     whose defaults are the engine's and the expression evaluator's own.
//   - Secret and ConfigMapValue (secrets.go): a secret reference resolved
//     from the file's secrets, else from BRAID_SECRET_<NAME>_<KEY>; a
//     ConfigMap key from the file's configMaps.
//   - Live (live.go): the config of a long-running server, read again when
//     the file changes; only the semaphore limits take effect at once.
//   - ServerInfo (server.go): what a running server records in its data
//     directory (server.json) so that the CLI finds it.
//   - SSOConfig (sso.go): the sso key, checked by Validate.
//
// # Must not import
//
// It imports the API types, internal/engine and internal/expr (for their
// default limits) and internal/image (the image table's type). It sits
// below everything that takes a Config, so it must not import the executor,
// the runtimes, the store, the controller, the server, the CLI or the
// wiring (internal/app).
package config
