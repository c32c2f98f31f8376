package webhook

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// SecretName is the name of the Secret that lists the webhook clients.
const SecretName = "argo-workflows-webhook-clients"

// The client types, as written in a client's `type` field.
const (
	TypeGitHub          = "github"
	TypeGitLab          = "gitlab"
	TypeBitbucket       = "bitbucket"
	TypeBitbucketServer = "bitbucketserver"
)

// Client is one webhook sender: Name is the service account the request
// acts as (the Secret's data key), Type picks the signature scheme and
// Secret is the shared secret the sender was configured with.
type Client struct {
	Name, Type, Secret string
}

// clientValue is the YAML held under each data key.
type clientValue struct {
	Type   string `json:"type"`
	Secret string `json:"secret"`
}

// ParseClients reads the Secret's data (service-account name → YAML value)
// into clients sorted by name, so Match tries them in a stable order. A
// value that is not valid YAML, names an unknown type or has an empty
// secret is an error naming its key. Empty data gives no clients.
func ParseClients(data map[string]string) ([]Client, error) {
	names := make([]string, 0, len(data))
	for name := range data {
		names = append(names, name)
	}
	sort.Strings(names)

	clients := make([]Client, 0, len(names))
	for _, name := range names {
		c, err := parseClient(name, data[name])
		if err != nil {
			return nil, fmt.Errorf("webhook client %q in secret %s: %w", name, SecretName, err)
		}
		clients = append(clients, c)
	}
	return clients, nil
}

func parseClient(name, value string) (Client, error) {
	if name == "" {
		return Client{}, fmt.Errorf("empty service-account name")
	}
	var v clientValue
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return Client{}, fmt.Errorf("invalid YAML: %w", err)
	}
	if _, ok := checks[v.Type]; !ok {
		return Client{}, fmt.Errorf("unknown type %q (want one of %s)", v.Type, strings.Join(knownTypes(), ", "))
	}
	if v.Secret == "" {
		return Client{}, fmt.Errorf("empty secret")
	}
	return Client{Name: name, Type: v.Type, Secret: v.Secret}, nil
}

// knownTypes lists the supported types in sorted order, for messages.
func knownTypes() []string {
	types := make([]string, 0, len(checks))
	for t := range checks {
		types = append(types, t)
	}
	sort.Strings(types)
	return types
}
