package v1alpha1

import (
	apiv1 "k8s.io/api/core/v1"
)

// Artifacts is a list of artifacts.
type Artifacts []Artifact

// Artifact is a file or directory passed into or out of a template.
type Artifact struct {
	// Name identifies the artifact within its inputs or outputs.
	Name string `json:"name"`
	// Path is where the artifact sits in the container.
	Path string `json:"path,omitempty"`
	// Mode is the file mode applied when an input is loaded.
	Mode *int32 `json:"mode,omitempty"`
	// From takes the artifact from another node ({{steps.x.outputs.artifacts.y}}).
	From string `json:"from,omitempty"`
	// ArtifactLocation says where the artifact is stored.
	ArtifactLocation `json:",inline"`
	// GlobalName also exports an output as a workflow output artifact.
	GlobalName string `json:"globalName,omitempty"`
	// Archive says how the artifact is packed when saved.
	Archive *ArchiveStrategy `json:"archive,omitempty"`
	// Optional tolerates a missing artifact.
	Optional *bool `json:"optional,omitempty"`
	// SubPath selects a path inside the source.
	SubPath string `json:"subPath,omitempty"`
	// RecurseMode applies Mode to everything inside a directory.
	RecurseMode bool `json:"recurseMode,omitempty"`
	// FromExpression chooses the artifact with an expression.
	FromExpression string `json:"fromExpression,omitempty"`
	// ArtifactGC overrides the workflow's artifact GC for this artifact.
	ArtifactGC *ArtifactGC `json:"artifactGC,omitempty"`
	// Deleted records that artifact GC deleted the artifact.
	Deleted bool `json:"deleted,omitempty"`
}

// ArtifactLocation is where one artifact, or a template's default archive
// location, is stored. At most one location field is set.
type ArtifactLocation struct {
	// ArchiveLogs saves the main container's logs here.
	ArchiveLogs *bool                `json:"archiveLogs,omitempty"`
	S3          *S3Artifact          `json:"s3,omitempty"`
	Git         *GitArtifact         `json:"git,omitempty"`
	HTTP        *HTTPArtifact        `json:"http,omitempty"`
	Artifactory *ArtifactoryArtifact `json:"artifactory,omitempty"`
	HDFS        *HDFSArtifact        `json:"hdfs,omitempty"`
	Raw         *RawArtifact         `json:"raw,omitempty"`
	OSS         *OSSArtifact         `json:"oss,omitempty"`
	GCS         *GCSArtifact         `json:"gcs,omitempty"`
	Azure       *AzureArtifact       `json:"azure,omitempty"`
	Plugin      *PluginArtifact      `json:"plugin,omitempty"`
	// File is a braid extension, not in Argo: a key in the local artifact
	// repository (by default $BRAID_HOME/artifacts), the zero-setup default.
	File *FileArtifact `json:"file,omitempty"`
}

// ArchiveStrategy says how an artifact is packed: tar (the default), zip or
// none.
type ArchiveStrategy struct {
	Tar  *TarStrategy  `json:"tar,omitempty"`
	None *NoneStrategy `json:"none,omitempty"`
	Zip  *ZipStrategy  `json:"zip,omitempty"`
}

// TarStrategy packs as a gzipped tarball.
type TarStrategy struct {
	// CompressionLevel is the gzip level (0 to 9).
	CompressionLevel *int32 `json:"compressionLevel,omitempty"`
}

// ZipStrategy packs as a zip file.
type ZipStrategy struct{}

// NoneStrategy stores the file as it is.
type NoneStrategy struct{}

// ArtifactGCStrategy says when output artifacts are deleted.
type ArtifactGCStrategy string

// Artifact GC strategies.
const (
	ArtifactGCOnWorkflowCompletion ArtifactGCStrategy = "OnWorkflowCompletion"
	ArtifactGCOnWorkflowDeletion   ArtifactGCStrategy = "OnWorkflowDeletion"
	ArtifactGCNever                ArtifactGCStrategy = "Never"
	ArtifactGCStrategyUndefined    ArtifactGCStrategy = ""
)

// ArtifactGC configures artifact deletion.
type ArtifactGC struct {
	// Strategy says when artifacts are deleted.
	Strategy ArtifactGCStrategy `json:"strategy,omitempty"`
	// PodMetadata is added to the GC pods.
	PodMetadata *Metadata `json:"podMetadata,omitempty"`
	// ServiceAccountName is the GC pods' service account.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
}

// WorkflowLevelArtifactGC is the workflow-wide artifact GC configuration.
type WorkflowLevelArtifactGC struct {
	ArtifactGC `json:",inline"`
	// ForceFinalizerRemoval removes the finalizer even when GC fails.
	ForceFinalizerRemoval bool `json:"forceFinalizerRemoval,omitempty"`
	// PodSpecPatch is a strategic merge patch for the GC pods.
	PodSpecPatch string `json:"podSpecPatch,omitempty"`
}

// ArtifactRepositoryRef selects an artifact repository from a ConfigMap.
type ArtifactRepositoryRef struct {
	// ConfigMap is the ConfigMap's name (default "artifact-repositories").
	ConfigMap string `json:"configMap,omitempty"`
	// Key is the ConfigMap key (default: the one named by the
	// workflows.argoproj.io/default-artifact-repository annotation).
	Key string `json:"key,omitempty"`
}

// S3Bucket is the connection to an S3-compatible bucket.
type S3Bucket struct {
	Endpoint                 string                   `json:"endpoint,omitempty"`
	Bucket                   string                   `json:"bucket,omitempty"`
	Region                   string                   `json:"region,omitempty"`
	Insecure                 *bool                    `json:"insecure,omitempty"`
	AccessKeySecret          *apiv1.SecretKeySelector `json:"accessKeySecret,omitempty"`
	SecretKeySecret          *apiv1.SecretKeySelector `json:"secretKeySecret,omitempty"`
	SessionTokenSecret       *apiv1.SecretKeySelector `json:"sessionTokenSecret,omitempty"`
	RoleARN                  string                   `json:"roleARN,omitempty"`
	UseSDKCreds              bool                     `json:"useSDKCreds,omitempty"`
	CreateBucketIfNotPresent *CreateS3BucketOptions   `json:"createBucketIfNotPresent,omitempty"`
	EncryptionOptions        *S3EncryptionOptions     `json:"encryptionOptions,omitempty"`
	CASecret                 *apiv1.SecretKeySelector `json:"caSecret,omitempty"`
	// AddressingStyle selects path-style or virtual-hosted-style requests.
	AddressingStyle string `json:"addressingStyle,omitempty"`
}

// CreateS3BucketOptions configures creating a missing bucket.
type CreateS3BucketOptions struct {
	ObjectLocking bool `json:"objectLocking,omitempty"`
}

// S3EncryptionOptions configures server-side encryption.
type S3EncryptionOptions struct {
	KmsKeyID                    string                   `json:"kmsKeyId,omitempty"`
	KmsEncryptionContext        string                   `json:"kmsEncryptionContext,omitempty"`
	EnableEncryption            bool                     `json:"enableEncryption,omitempty"`
	ServerSideCustomerKeySecret *apiv1.SecretKeySelector `json:"serverSideCustomerKeySecret,omitempty"`
}

// S3Artifact is an object in an S3-compatible bucket.
type S3Artifact struct {
	S3Bucket `json:",inline"`
	Key      string `json:"key,omitempty"`
}

// GitArtifact is a git repository checked out as an input.
type GitArtifact struct {
	Repo                  string                   `json:"repo"`
	Revision              string                   `json:"revision,omitempty"`
	Depth                 *uint64                  `json:"depth,omitempty"`
	Fetch                 []string                 `json:"fetch,omitempty"`
	UsernameSecret        *apiv1.SecretKeySelector `json:"usernameSecret,omitempty"`
	PasswordSecret        *apiv1.SecretKeySelector `json:"passwordSecret,omitempty"`
	SSHPrivateKeySecret   *apiv1.SecretKeySelector `json:"sshPrivateKeySecret,omitempty"`
	InsecureIgnoreHostKey bool                     `json:"insecureIgnoreHostKey,omitempty"`
	DisableSubmodules     bool                     `json:"disableSubmodules,omitempty"`
	SingleBranch          bool                     `json:"singleBranch,omitempty"`
	Branch                string                   `json:"branch,omitempty"`
	InsecureSkipTLS       bool                     `json:"insecureSkipTLS,omitempty"`
}

// HTTPArtifact is a file fetched (or uploaded) over HTTP.
type HTTPArtifact struct {
	URL     string    `json:"url"`
	Headers []Header  `json:"headers,omitempty"`
	Auth    *HTTPAuth `json:"auth,omitempty"`
	// SaveStreamViaFile buffers an upload in a file before sending it.
	SaveStreamViaFile bool `json:"saveStreamViaFile,omitempty"`
}

// Header is one HTTP header of an HTTP artifact.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// HTTPAuth is the authentication of an HTTP artifact.
type HTTPAuth struct {
	ClientCert ClientCertAuth `json:"clientCert,omitzero"`
	OAuth2     OAuth2Auth     `json:"oauth2,omitzero"`
	BasicAuth  BasicAuth      `json:"basicAuth,omitzero"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	UsernameSecret *apiv1.SecretKeySelector `json:"usernameSecret,omitempty"`
	PasswordSecret *apiv1.SecretKeySelector `json:"passwordSecret,omitempty"`
}

// ClientCertAuth is TLS client certificate authentication.
type ClientCertAuth struct {
	ClientCertSecret *apiv1.SecretKeySelector `json:"clientCertSecret,omitempty"`
	ClientKeySecret  *apiv1.SecretKeySelector `json:"clientKeySecret,omitempty"`
}

// OAuth2Auth is OAuth2 client-credentials authentication.
type OAuth2Auth struct {
	ClientIDSecret     *apiv1.SecretKeySelector `json:"clientIDSecret,omitempty"`
	ClientSecretSecret *apiv1.SecretKeySelector `json:"clientSecretSecret,omitempty"`
	TokenURLSecret     *apiv1.SecretKeySelector `json:"tokenURLSecret,omitempty"`
	Scopes             []string                 `json:"scopes,omitempty"`
	EndpointParams     []OAuth2EndpointParam    `json:"endpointParams,omitempty"`
}

// OAuth2EndpointParam is an extra parameter of the token request.
type OAuth2EndpointParam struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// ArtifactoryAuth is the credentials of an Artifactory repository.
type ArtifactoryAuth struct {
	UsernameSecret *apiv1.SecretKeySelector `json:"usernameSecret,omitempty"`
	PasswordSecret *apiv1.SecretKeySelector `json:"passwordSecret,omitempty"`
}

// ArtifactoryArtifact is a file in Artifactory.
type ArtifactoryArtifact struct {
	URL             string `json:"url"`
	ArtifactoryAuth `json:",inline"`
}

// HDFSKrbConfig is the Kerberos configuration of an HDFS connection.
type HDFSKrbConfig struct {
	KrbCCacheSecret         *apiv1.SecretKeySelector    `json:"krbCCacheSecret,omitempty"`
	KrbKeytabSecret         *apiv1.SecretKeySelector    `json:"krbKeytabSecret,omitempty"`
	KrbUsername             string                      `json:"krbUsername,omitempty"`
	KrbRealm                string                      `json:"krbRealm,omitempty"`
	KrbConfigConfigMap      *apiv1.ConfigMapKeySelector `json:"krbConfigConfigMap,omitempty"`
	KrbServicePrincipalName string                      `json:"krbServicePrincipalName,omitempty"`
}

// HDFSConfig is the connection to an HDFS cluster.
type HDFSConfig struct {
	HDFSKrbConfig          `json:",inline"`
	Addresses              []string `json:"addresses,omitempty"`
	HDFSUser               string   `json:"hdfsUser,omitempty"`
	DataTransferProtection string   `json:"dataTransferProtection,omitempty"`
}

// HDFSArtifact is a file in HDFS.
type HDFSArtifact struct {
	HDFSConfig `json:",inline"`
	Path       string `json:"path"`
	// Force overwrites an existing file.
	Force bool `json:"force,omitempty"`
}

// RawArtifact is an input artifact given inline.
type RawArtifact struct {
	Data string `json:"data"`
}

// OSSLifecycleRule is the lifecycle rule of an OSS bucket.
type OSSLifecycleRule struct {
	MarkInfrequentAccessAfterDays int32 `json:"markInfrequentAccessAfterDays,omitempty"`
	MarkDeletionAfterDays         int32 `json:"markDeletionAfterDays,omitempty"`
}

// OSSBucket is the connection to an Alibaba Cloud OSS bucket.
type OSSBucket struct {
	Endpoint                 string                   `json:"endpoint,omitempty"`
	Bucket                   string                   `json:"bucket,omitempty"`
	AccessKeySecret          *apiv1.SecretKeySelector `json:"accessKeySecret,omitempty"`
	SecretKeySecret          *apiv1.SecretKeySelector `json:"secretKeySecret,omitempty"`
	CreateBucketIfNotPresent bool                     `json:"createBucketIfNotPresent,omitempty"`
	SecurityToken            string                   `json:"securityToken,omitempty"`
	LifecycleRule            *OSSLifecycleRule        `json:"lifecycleRule,omitempty"`
	UseSDKCreds              bool                     `json:"useSDKCreds,omitempty"`
}

// OSSArtifact is an object in an OSS bucket.
type OSSArtifact struct {
	OSSBucket `json:",inline"`
	Key       string `json:"key"`
}

// GCSBucket is the connection to a Google Cloud Storage bucket.
type GCSBucket struct {
	Bucket                  string                   `json:"bucket,omitempty"`
	ServiceAccountKeySecret *apiv1.SecretKeySelector `json:"serviceAccountKeySecret,omitempty"`
}

// GCSArtifact is an object in a GCS bucket.
type GCSArtifact struct {
	GCSBucket `json:",inline"`
	Key       string `json:"key"`
}

// AzureBlobContainer is the connection to an Azure Blob Storage container.
type AzureBlobContainer struct {
	Endpoint         string                   `json:"endpoint"`
	Container        string                   `json:"container"`
	AccountKeySecret *apiv1.SecretKeySelector `json:"accountKeySecret,omitempty"`
	UseSDKCreds      bool                     `json:"useSDKCreds,omitempty"`
}

// AzureArtifact is a blob in an Azure container.
type AzureArtifact struct {
	AzureBlobContainer `json:",inline"`
	Blob               string `json:"blob"`
}

// FileArtifact is a braid extension, not in Argo: a file or directory in the
// local artifact repository.
type FileArtifact struct {
	// Key is the artifact's path relative to the repository root.
	Key string `json:"key"`
}

// PluginArtifact is an artifact handled by an artifact driver plugin.
type PluginArtifact struct {
	// Name is the plugin's name in the controller configuration.
	Name string `json:"name"`
	// Configuration is passed to the plugin as it is (usually YAML).
	Configuration string `json:"configuration,omitempty"`
	// ConnectionTimeoutSeconds bounds the connection to the plugin.
	ConnectionTimeoutSeconds int32 `json:"connectionTimeoutSeconds,omitempty"`
	// Key is the artifact's key within the plugin's storage.
	Key string `json:"key,omitempty"`
}

// ArtifactRepository is a default location for artifacts, as configured in
// the controller or an artifact-repositories ConfigMap.
type ArtifactRepository struct {
	ArchiveLogs *bool                          `json:"archiveLogs,omitempty"`
	S3          *S3ArtifactRepository          `json:"s3,omitempty"`
	Artifactory *ArtifactoryArtifactRepository `json:"artifactory,omitempty"`
	HDFS        *HDFSArtifactRepository        `json:"hdfs,omitempty"`
	OSS         *OSSArtifactRepository         `json:"oss,omitempty"`
	GCS         *GCSArtifactRepository         `json:"gcs,omitempty"`
	Azure       *AzureArtifactRepository       `json:"azure,omitempty"`
	// File is a braid extension, not in Argo: the local artifact repository
	// (by default $BRAID_HOME/artifacts).
	File *FileArtifactRepository `json:"file,omitempty"`
}

// S3ArtifactRepository is an S3 artifact repository.
type S3ArtifactRepository struct {
	S3Bucket `json:",inline"`
	// KeyFormat is the key template for new artifacts.
	KeyFormat string `json:"keyFormat,omitempty"`
	// KeyPrefix is the legacy form of KeyFormat.
	KeyPrefix string `json:"keyPrefix,omitempty"`
}

// OSSArtifactRepository is an OSS artifact repository.
type OSSArtifactRepository struct {
	OSSBucket `json:",inline"`
	KeyFormat string `json:"keyFormat,omitempty"`
}

// GCSArtifactRepository is a GCS artifact repository.
type GCSArtifactRepository struct {
	GCSBucket `json:",inline"`
	KeyFormat string `json:"keyFormat,omitempty"`
}

// ArtifactoryArtifactRepository is an Artifactory artifact repository.
type ArtifactoryArtifactRepository struct {
	ArtifactoryAuth `json:",inline"`
	RepoURL         string `json:"repoURL,omitempty"`
	KeyFormat       string `json:"keyFormat,omitempty"`
}

// HDFSArtifactRepository is an HDFS artifact repository.
type HDFSArtifactRepository struct {
	HDFSConfig `json:",inline"`
	PathFormat string `json:"pathFormat,omitempty"`
	Force      bool   `json:"force,omitempty"`
}

// AzureArtifactRepository is an Azure Blob Storage artifact repository.
type AzureArtifactRepository struct {
	AzureBlobContainer `json:",inline"`
	BlobNameFormat     string `json:"blobNameFormat,omitempty"`
}

// FileArtifactRepository is a braid extension, not in Argo: the local
// artifact repository, rooted at $BRAID_HOME/artifacts by default.
type FileArtifactRepository struct {
	// KeyFormat is the key template for new artifacts.
	KeyFormat string `json:"keyFormat,omitempty"`
}

// HasLocation reports whether any location field is set.
func (l *ArtifactLocation) HasLocation() bool {
	return l.S3 != nil || l.Git != nil || l.HTTP != nil || l.Artifactory != nil || l.HDFS != nil ||
		l.Raw != nil || l.OSS != nil || l.GCS != nil || l.Azure != nil || l.Plugin != nil || l.File != nil
}
