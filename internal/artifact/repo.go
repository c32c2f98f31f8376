package artifact

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// DefaultConfigMap is the ConfigMap an artifactRepositoryRef names when it names none.
const DefaultConfigMap = "artifact-repositories"

// DefaultKeyFormat is the key of a step's outputs when the repository sets no keyFormat, as in Argo.
const DefaultKeyFormat = "{{workflow.name}}/{{pod.name}}"

// Repositories is the artifact repository configuration: the default repository, and the named ones an
// artifactRepositoryRef selects (ConfigMap name -> key -> repository), standing in for Argo's
// artifact-repositories ConfigMaps. Default plays the part of the key that the default ConfigMap's
// workflows.argoproj.io/default-artifact-repository annotation picks.
type Repositories struct {
	Default *v1alpha1.ArtifactRepository
	Named   map[string]map[string]v1alpha1.ArtifactRepository
}

// Resolve returns (a copy of) the repository ref selects. A nil ref, or one naming neither a ConfigMap nor
// a key, selects Default; with no Default configured, braid's zero-setup file repository. A ConfigMap
// defaults to "artifact-repositories". A ref with a ConfigMap but no key takes the ConfigMap's only key
// (braid keeps no annotations to pick among several). A missing ConfigMap or key is an error.
func (r Repositories) Resolve(ref *v1alpha1.ArtifactRepositoryRef) (*v1alpha1.ArtifactRepository, error) {
	cm, key := DefaultConfigMap, ""
	if ref != nil {
		if ref.ConfigMap != "" {
			cm = ref.ConfigMap
		}
		key = ref.Key
	}
	if cm == DefaultConfigMap && key == "" {
		if r.Default != nil {
			return r.Default.DeepCopy(), nil
		}
		if len(r.Named[cm]) == 0 {
			return &v1alpha1.ArtifactRepository{File: &v1alpha1.FileArtifactRepository{}}, nil
		}
	}
	keys, ok := r.Named[cm]
	if !ok {
		return nil, fmt.Errorf("artifactRepositoryRef: ConfigMap %q is not configured (configured: %s)",
			cm, list(mapKeys(r.Named)))
	}
	if key == "" {
		if len(keys) != 1 {
			return nil, fmt.Errorf("artifactRepositoryRef: ConfigMap %q has keys %s; set artifactRepositoryRef.key",
				cm, list(mapKeys(keys)))
		}
		for k := range keys {
			key = k
		}
	}
	repo, ok := keys[key]
	if !ok {
		return nil, fmt.Errorf("artifactRepositoryRef: ConfigMap %q has no key %q (keys: %s)", cm, key,
			list(mapKeys(keys)))
	}
	return repo.DeepCopy(), nil
}

// KeyFor returns the key under which a step's output artifacts are saved in repo: the repository's key
// format (keyFormat; for S3 without one, the legacy keyPrefix followed by the default; HDFS's pathFormat;
// Azure's blobNameFormat), or DefaultKeyFormat, with its {{...}} variables substituted from vars.
// Variables are named as in a workflow: workflow.name, workflow.namespace, workflow.uid, pod.name,
// node.id, ...; workflow.creationTimestamp.<c> (strftime character c, s, or RFC3339) is derived from
// vars["workflow.creationTimestamp"] (RFC3339) when vars does not hold it. An unknown variable is an error.
func KeyFor(repo *v1alpha1.ArtifactRepository, vars map[string]string) (string, error) {
	format, err := keyFormat(repo)
	if err != nil {
		return "", err
	}
	if format == "" {
		format = DefaultKeyFormat
	}
	key, err := substitute(format, vars)
	if err != nil {
		return "", fmt.Errorf("artifact repository key format %q: %w", format, err)
	}
	return strings.Trim(path.Clean("/"+key), "/"), nil
}

// keyFormat returns the repository kind's own key format ("" for the default).
func keyFormat(repo *v1alpha1.ArtifactRepository) (string, error) {
	switch {
	case repo == nil:
		return "", fmt.Errorf("no artifact repository")
	case repo.S3 != nil:
		if repo.S3.KeyFormat == "" && repo.S3.KeyPrefix != "" {
			return repo.S3.KeyPrefix + "/" + DefaultKeyFormat, nil
		}
		return repo.S3.KeyFormat, nil
	case repo.File != nil:
		return repo.File.KeyFormat, nil
	case repo.GCS != nil:
		return repo.GCS.KeyFormat, nil
	case repo.OSS != nil:
		return repo.OSS.KeyFormat, nil
	case repo.Artifactory != nil:
		return repo.Artifactory.KeyFormat, nil
	case repo.HDFS != nil:
		return repo.HDFS.PathFormat, nil
	case repo.Azure != nil:
		return repo.Azure.BlobNameFormat, nil
	case repo.Plugin != nil:
		return repo.Plugin.KeyFormat, nil
	}
	return "", fmt.Errorf("the artifact repository sets no location (s3, file, gcs, oss, artifactory, hdfs, azure or plugin)")
}

// OutputLocation is where the output artifact artName of the step whose key is key is saved in repo:
// key/artName.tgz when archived, key/artName otherwise, with the repository's connection settings.
func OutputLocation(repo *v1alpha1.ArtifactRepository, key string, artName string, archived bool) v1alpha1.ArtifactLocation {
	name := artName
	if archived {
		name += ".tgz"
	}
	k := name
	if key != "" {
		k = key + "/" + name
	}
	var loc v1alpha1.ArtifactLocation
	switch {
	case repo == nil:
	case repo.S3 != nil:
		loc.S3 = &v1alpha1.S3Artifact{S3Bucket: *repo.S3.S3Bucket.DeepCopy(), Key: k}
	case repo.File != nil:
		loc.File = &v1alpha1.FileArtifact{Key: k}
	case repo.GCS != nil:
		loc.GCS = &v1alpha1.GCSArtifact{GCSBucket: *repo.GCS.GCSBucket.DeepCopy(), Key: k}
	case repo.OSS != nil:
		loc.OSS = &v1alpha1.OSSArtifact{OSSBucket: *repo.OSS.OSSBucket.DeepCopy(), Key: k}
	case repo.Artifactory != nil:
		u := k
		if base := strings.TrimSuffix(repo.Artifactory.RepoURL, "/"); base != "" {
			u = base + "/" + k
		}
		loc.Artifactory = &v1alpha1.ArtifactoryArtifact{URL: u, ArtifactoryAuth: *repo.Artifactory.ArtifactoryAuth.DeepCopy()}
	case repo.HDFS != nil:
		loc.HDFS = &v1alpha1.HDFSArtifact{HDFSConfig: *repo.HDFS.HDFSConfig.DeepCopy(), Path: "/" + k, Force: repo.HDFS.Force}
	case repo.Azure != nil:
		loc.Azure = &v1alpha1.AzureArtifact{AzureBlobContainer: *repo.Azure.AzureBlobContainer.DeepCopy(), Blob: k}
	case repo.Plugin != nil:
		loc.Plugin = &v1alpha1.PluginArtifact{Name: repo.Plugin.Name, Configuration: repo.Plugin.Configuration, Key: k}
	}
	return loc
}

// substitute replaces each {{name}} in s with vars[name].
func substitute(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for {
		start := strings.Index(s, "{{")
		if start < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		end := strings.Index(s[start:], "}}")
		if end < 0 {
			return "", fmt.Errorf("unclosed {{ in %q", s[start:])
		}
		name := strings.TrimSpace(s[start+2 : start+end])
		val, err := lookup(name, vars)
		if err != nil {
			return "", err
		}
		b.WriteString(s[:start])
		b.WriteString(val)
		s = s[start+end+2:]
	}
}

// lookup resolves one variable, deriving the creation timestamp forms.
func lookup(name string, vars map[string]string) (string, error) {
	if v, ok := vars[name]; ok {
		return v, nil
	}
	const ts = "workflow.creationTimestamp"
	if f, ok := strings.CutPrefix(name, ts+"."); ok {
		raw, ok := vars[ts]
		if !ok {
			return "", fmt.Errorf("{{%s}}: %s is not known here", name, ts)
		}
		t, err := time.Parse(time.RFC3339, raw)
		if err != nil {
			return "", fmt.Errorf("{{%s}}: %s %q is not RFC3339: %w", name, ts, raw, err)
		}
		if v, ok := formatTime(t, f); ok {
			return v, nil
		}
		return "", fmt.Errorf("{{%s}}: unknown time format %q", name, f)
	}
	return "", fmt.Errorf("unknown variable {{%s}}", name)
}

// formatTime formats t by one strftime character (the ones Argo documents), "s" or "RFC3339".
func formatTime(t time.Time, f string) (string, bool) {
	switch f {
	case "s":
		return strconv.FormatInt(t.Unix(), 10), true
	case "RFC3339":
		return t.Format(time.RFC3339), true
	}
	layouts := map[string]string{
		"B": "January", "b": "Jan", "m": "01", "A": "Monday", "a": "Mon", "d": "02",
		"H": "15", "I": "03", "M": "04", "S": "05", "Y": "2006", "y": "06",
		"p": "PM", "Z": "MST", "z": "-0700", "L": ".000",
	}
	layout, ok := layouts[f]
	if !ok {
		return "", false
	}
	return t.Format(layout), true
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func list(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
