package kube

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	apiv1 "k8s.io/api/core/v1"

	"github.com/braidwf/braid/internal/config"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// secretRefs returns one env var per secret key the template's artifacts
// and the repository refer to (accessKeySecret, passwordSecret,
// sshPrivateKeySecret, ...), named config.SecretEnv(name, key) and filled
// by a secretKeyRef, for the emissary's drivers. It finds them by shape: a
// field whose name ends in "Secret" holding {name, key}.
func secretRefs(tmpl *v1alpha1.Template, repo *v1alpha1.ArtifactRepository) ([]apiv1.EnvVar, error) {
	seen := map[string]apiv1.EnvVar{}
	for _, v := range []any{tmpl.Inputs.Artifacts, tmpl.Outputs.Artifacts, tmpl.ArchiveLocation, repo} {
		data, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("find secrets: %w", err)
		}
		var tree any
		if err := json.Unmarshal(data, &tree); err != nil {
			return nil, fmt.Errorf("find secrets: %w", err)
		}
		walkSecrets(tree, seen)
	}
	out := make([]apiv1.EnvVar, 0, len(seen))
	for _, k := range slices.Sorted(maps.Keys(seen)) {
		out = append(out, seen[k])
	}
	return out, nil
}

func walkSecrets(v any, seen map[string]apiv1.EnvVar) {
	switch t := v.(type) {
	case map[string]any:
		for field, val := range t {
			if sel, ok := val.(map[string]any); ok && strings.HasSuffix(strings.ToLower(field), "secret") {
				name, _ := sel["name"].(string)
				key, _ := sel["key"].(string)
				if name != "" && key != "" {
					env := config.SecretEnv(name, key)
					seen[env] = apiv1.EnvVar{Name: env, ValueFrom: &apiv1.EnvVarSource{SecretKeyRef: &apiv1.SecretKeySelector{
						LocalObjectReference: apiv1.LocalObjectReference{Name: name}, Key: key}}}
					continue
				}
			}
			walkSecrets(val, seen)
		}
	case []any:
		for _, e := range t {
			walkSecrets(e, seen)
		}
	}
}
