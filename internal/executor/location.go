package executor

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/braidwf/braid/internal/artifact"
	"github.com/braidwf/braid/internal/step"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// inherit returns loc completed from the repository, as Argo does for
// key-only artifacts: an s3 location takes the endpoint, bucket, region and
// credentials it leaves unset from an s3 repository; a location that names
// only a key (no bucket or container) of any kind becomes the repository's
// location with that key. Anything else is returned as it is.
func inherit(loc v1alpha1.ArtifactLocation, repo *v1alpha1.ArtifactRepository) v1alpha1.ArtifactLocation {
	if repo == nil {
		return loc
	}
	out := *loc.DeepCopy()
	if out.S3 != nil && repo.S3 != nil {
		fillS3(&out.S3.S3Bucket, &repo.S3.S3Bucket)
		return out
	}
	if out.S3 != nil && repo.File != nil && out.S3.Endpoint == "" {
		// The zero-setup repository stands in for the S3 server a spec
		// assumes: a bucket is a top folder of it.
		key := strings.Trim(path.Join(out.S3.Bucket, out.S3.Key), "/")
		return v1alpha1.ArtifactLocation{ArchiveLogs: out.ArchiveLogs, File: &v1alpha1.FileArtifact{Key: key}}
	}
	key, ok := keyOnly(&out)
	if !ok {
		return out
	}
	base := artifact.OutputLocation(repo, "", key, false)
	if artifact.Kind(&base) == "" {
		return out
	}
	base.ArchiveLogs = out.ArchiveLogs
	return base
}

// fillS3 sets each connection setting that b leaves empty from repo.
func fillS3(b, repo *v1alpha1.S3Bucket) {
	r := repo.DeepCopy()
	if b.Endpoint == "" {
		b.Endpoint = r.Endpoint
	}
	if b.Bucket == "" {
		b.Bucket = r.Bucket
	}
	if b.Region == "" {
		b.Region = r.Region
	}
	if b.Insecure == nil {
		b.Insecure = r.Insecure
	}
	if b.AccessKeySecret == nil && b.SecretKeySecret == nil && !b.UseSDKCreds {
		b.AccessKeySecret, b.SecretKeySecret = r.AccessKeySecret, r.SecretKeySecret
		b.SessionTokenSecret, b.UseSDKCreds = r.SessionTokenSecret, r.UseSDKCreds
		if b.RoleARN == "" {
			b.RoleARN = r.RoleARN
		}
	}
	if b.CreateBucketIfNotPresent == nil {
		b.CreateBucketIfNotPresent = r.CreateBucketIfNotPresent
	}
	if b.EncryptionOptions == nil {
		b.EncryptionOptions = r.EncryptionOptions
	}
	if b.CASecret == nil {
		b.CASecret = r.CASecret
	}
	if b.AddressingStyle == "" {
		b.AddressingStyle = r.AddressingStyle
	}
}

// keyOnly returns the key of a location that names a key and no bucket or
// container.
func keyOnly(loc *v1alpha1.ArtifactLocation) (string, bool) {
	switch {
	case loc.S3 != nil:
		return loc.S3.Key, loc.S3.Key != "" && loc.S3.Bucket == "" && loc.S3.Endpoint == ""
	case loc.GCS != nil:
		return loc.GCS.Key, loc.GCS.Key != "" && loc.GCS.Bucket == ""
	case loc.OSS != nil:
		return loc.OSS.Key, loc.OSS.Key != "" && loc.OSS.Bucket == "" && loc.OSS.Endpoint == ""
	case loc.Azure != nil:
		return loc.Azure.Blob, loc.Azure.Blob != "" && loc.Azure.Container == ""
	}
	return "", false
}

// baseLocation is where a step's outputs without a location go: the
// template's archiveLocation when it names a complete location, else the
// plan's repository, under the plan's key. It returns the location for the
// object name (e.g. "out.tgz" or "main.log").
func baseLocation(tmpl *v1alpha1.Template, plan *step.ArtifactPlan, name string) (v1alpha1.ArtifactLocation, error) {
	if al := tmpl.ArchiveLocation; al != nil && artifact.Kind(al) != "" {
		loc := *al.DeepCopy()
		loc.ArchiveLogs = nil
		if plan != nil {
			loc = inherit(loc, plan.Repository)
		}
		if prefix, ok := artifact.Key(&loc); ok {
			if err := artifact.SetKey(&loc, joinKey(prefix, name)); err == nil {
				return loc, nil
			}
		}
	}
	if plan == nil || plan.Repository == nil {
		return v1alpha1.ArtifactLocation{}, fmt.Errorf("no artifact repository is configured for this step")
	}
	loc := artifact.OutputLocation(plan.Repository, plan.Key, name, false)
	if artifact.Kind(&loc) == "" {
		return v1alpha1.ArtifactLocation{}, fmt.Errorf("the artifact repository sets no location")
	}
	return loc, nil
}

func joinKey(prefix, name string) string {
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return name
	}
	return prefix + "/" + name
}

// where names a location for messages, without credentials: "s3
// bucket/key", "file key", "http URL" (no user info, no query), "git repo".
func where(loc *v1alpha1.ArtifactLocation) string {
	kind := artifact.Kind(loc)
	switch {
	case loc.S3 != nil:
		return fmt.Sprintf("s3 %s", path.Join(loc.S3.Bucket, loc.S3.Key))
	case loc.HTTP != nil:
		return "http " + redactURL(loc.HTTP.URL)
	case loc.Git != nil:
		return "git " + redactURL(loc.Git.Repo)
	case loc.Artifactory != nil:
		return "artifactory " + redactURL(loc.Artifactory.URL)
	case loc.GCS != nil:
		return fmt.Sprintf("gcs %s", path.Join(loc.GCS.Bucket, loc.GCS.Key))
	case loc.OSS != nil:
		return fmt.Sprintf("oss %s", path.Join(loc.OSS.Bucket, loc.OSS.Key))
	case loc.Azure != nil:
		return fmt.Sprintf("azure %s", path.Join(loc.Azure.Container, loc.Azure.Blob))
	}
	if key, ok := artifact.Key(loc); ok {
		return kind + " " + key
	}
	return kind
}

// redactURL drops the user info and the query of a URL, where secrets hide.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if !strings.Contains(raw, "://") {
			return raw // scp-like git@host:repo holds no password
		}
		return "(an unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	u.Fragment = ""
	return u.String()
}
