// Package config parses braid's settings once, from flags, then the
// environment, then an optional config file, into a Config value that is
// passed down. Nothing else in braid reads the environment for settings.
package config
