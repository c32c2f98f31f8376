package config

import (
	"context"
	"fmt"
	"strings"
)

// Secret resolves a Kubernetes secret reference on one machine, where
// there are no Secrets: from the config file's secrets, else from the
// environment variable BRAID_SECRET_<NAME>_<KEY>, with the name and key
// upper-cased and every character that is not a letter or a digit turned
// into "_" (secret my-s3-credentials, key accessKey:
// BRAID_SECRET_MY_S3_CREDENTIALS_ACCESSKEY). The namespace is not used.
func (c *Config) Secret(_ context.Context, _, name, key string) (string, error) {
	if v, ok := c.Secrets[name][key]; ok {
		return v, nil
	}
	env := SecretEnv(name, key)
	getenv := c.getenv
	if getenv != nil {
		if v := getenv(env); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("secret %q has no key %q: add it under secrets in the config file, or set %s", name, key, env)
}

// SecretEnv is the environment variable that holds a secret's key.
func SecretEnv(name, key string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 'a' + 'A'
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
				return r
			}
			return '_'
		}, s)
	}
	return "BRAID_SECRET_" + clean(name) + "_" + clean(key)
}

// ConfigMapValue resolves a ConfigMap key on one machine, from the config
// file's configMaps: "namespace/name" first, then the bare name. ok is
// false when there is no such map or key.
func (c *Config) ConfigMapValue(namespace, name, key string) (value string, ok bool) {
	if m, found := c.ConfigMaps[namespace+"/"+name]; found {
		value, ok = m[key]
		return value, ok
	}
	value, ok = c.ConfigMaps[name][key]
	return value, ok
}
