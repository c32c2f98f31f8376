package v1alpha1

import (
	apiv1 "k8s.io/api/core/v1"
)

// Artifacts is a list of artifacts.
type Artifacts []Artifact

// Artifact is a file or directory passed into or out of a template.
type Artifact struct {
	// Name identifies the artifact within its inputs or outputs.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Path is where the artifact sits in the container.
	Path string `json:"path,omitempty" protobuf:"bytes,2,opt,name=path"`
	// Mode is the file mode applied when an input is loaded.
	Mode *int32 `json:"mode,omitempty" protobuf:"varint,3,opt,name=mode"`
	// From takes the artifact from another node ({{steps.x.outputs.artifacts.y}}).
	From string `json:"from,omitempty" protobuf:"bytes,4,opt,name=from"`
	// ArtifactLocation says where the artifact is stored.
	ArtifactLocation `json:",inline" protobuf:"bytes,5,opt,name=artifactLocation"`
	// GlobalName also exports an output as a workflow output artifact.
	GlobalName string `json:"globalName,omitempty" protobuf:"bytes,6,opt,name=globalName"`
	// Archive says how the artifact is packed when saved.
	Archive *ArchiveStrategy `json:"archive,omitempty" protobuf:"bytes,7,opt,name=archive"`
	// Optional tolerates a missing artifact.
	Optional *bool `json:"optional,omitempty" protobuf:"varint,8,opt,name=optional"`
	// SubPath selects a path inside the source.
	SubPath string `json:"subPath,omitempty" protobuf:"bytes,9,opt,name=subPath"`
	// RecurseMode applies Mode to everything inside a directory.
	RecurseMode bool `json:"recurseMode,omitempty" protobuf:"varint,10,opt,name=recurseMode"`
	// FromExpression chooses the artifact with an expression.
	FromExpression string `json:"fromExpression,omitempty" protobuf:"bytes,11,opt,name=fromExpression"`
	// ArtifactGC overrides the workflow's artifact GC for this artifact.
	ArtifactGC *ArtifactGC `json:"artifactGC,omitempty" protobuf:"bytes,12,opt,name=artifactGC"`
	// Deleted records that artifact GC deleted the artifact.
	Deleted bool `json:"deleted,omitempty" protobuf:"varint,13,opt,name=deleted"`
}

// ArtifactLocation is where one artifact, or a template's default archive
// location, is stored. At most one location field is set.
type ArtifactLocation struct {
	// ArchiveLogs saves the main container's logs here.
	ArchiveLogs *bool                `json:"archiveLogs,omitempty" protobuf:"varint,1,opt,name=archiveLogs"`
	S3          *S3Artifact          `json:"s3,omitempty" protobuf:"bytes,2,opt,name=s3"`
	Git         *GitArtifact         `json:"git,omitempty" protobuf:"bytes,3,opt,name=git"`
	HTTP        *HTTPArtifact        `json:"http,omitempty" protobuf:"bytes,4,opt,name=http"`
	Artifactory *ArtifactoryArtifact `json:"artifactory,omitempty" protobuf:"bytes,5,opt,name=artifactory"`
	HDFS        *HDFSArtifact        `json:"hdfs,omitempty" protobuf:"bytes,6,opt,name=hdfs"`
	Raw         *RawArtifact         `json:"raw,omitempty" protobuf:"bytes,7,opt,name=raw"`
	OSS         *OSSArtifact         `json:"oss,omitempty" protobuf:"bytes,8,opt,name=oss"`
	GCS         *GCSArtifact         `json:"gcs,omitempty" protobuf:"bytes,9,opt,name=gcs"`
	Azure       *AzureArtifact       `json:"azure,omitempty" protobuf:"bytes,10,opt,name=azure"`
	Plugin      *PluginArtifact      `json:"plugin,omitempty" protobuf:"bytes,11,opt,name=plugin"`
	// File is a braid extension, not in Argo: a key in the local artifact
	// repository (by default $BRAID_HOME/artifacts), the zero-setup default.
	File *FileArtifact `json:"file,omitempty" protobuf:"bytes,12,opt,name=file"`
}

// ArchiveStrategy says how an artifact is packed: tar (the default), zip or
// none.
type ArchiveStrategy struct {
	Tar  *TarStrategy  `json:"tar,omitempty" protobuf:"bytes,1,opt,name=tar"`
	None *NoneStrategy `json:"none,omitempty" protobuf:"bytes,2,opt,name=none"`
	Zip  *ZipStrategy  `json:"zip,omitempty" protobuf:"bytes,3,opt,name=zip"`
}

// TarStrategy packs as a gzipped tarball.
type TarStrategy struct {
	// CompressionLevel is the gzip level (0 to 9).
	CompressionLevel *int32 `json:"compressionLevel,omitempty" protobuf:"varint,1,opt,name=compressionLevel"`
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
	Strategy ArtifactGCStrategy `json:"strategy,omitempty" protobuf:"bytes,1,opt,name=strategy"`
	// PodMetadata is added to the GC pods.
	PodMetadata *Metadata `json:"podMetadata,omitempty" protobuf:"bytes,2,opt,name=podMetadata"`
	// ServiceAccountName is the GC pods' service account.
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,3,opt,name=serviceAccountName"`
}

// WorkflowLevelArtifactGC is the workflow-wide artifact GC configuration.
type WorkflowLevelArtifactGC struct {
	ArtifactGC `json:",inline" protobuf:"bytes,1,opt,name=artifactGC"`
	// ForceFinalizerRemoval removes the finalizer even when GC fails.
	ForceFinalizerRemoval bool `json:"forceFinalizerRemoval,omitempty" protobuf:"varint,2,opt,name=forceFinalizerRemoval"`
	// PodSpecPatch is a strategic merge patch for the GC pods.
	PodSpecPatch string `json:"podSpecPatch,omitempty" protobuf:"bytes,3,opt,name=podSpecPatch"`
}

// ArtifactRepositoryRef selects an artifact repository from a ConfigMap.
type ArtifactRepositoryRef struct {
	// ConfigMap is the ConfigMap's name (default "artifact-repositories").
	ConfigMap string `json:"configMap,omitempty" protobuf:"bytes,1,opt,name=configMap"`
	// Key is the ConfigMap key (default: the one named by the
	// workflows.argoproj.io/default-artifact-repository annotation).
	Key string `json:"key,omitempty" protobuf:"bytes,2,opt,name=key"`
}

// S3Bucket is the connection to an S3-compatible bucket.
type S3Bucket struct {
	Endpoint                 string                   `json:"endpoint,omitempty" protobuf:"bytes,1,opt,name=endpoint"`
	Bucket                   string                   `json:"bucket,omitempty" protobuf:"bytes,2,opt,name=bucket"`
	Region                   string                   `json:"region,omitempty" protobuf:"bytes,3,opt,name=region"`
	Insecure                 *bool                    `json:"insecure,omitempty" protobuf:"varint,4,opt,name=insecure"`
	AccessKeySecret          *apiv1.SecretKeySelector `json:"accessKeySecret,omitempty" protobuf:"bytes,5,opt,name=accessKeySecret"`
	SecretKeySecret          *apiv1.SecretKeySelector `json:"secretKeySecret,omitempty" protobuf:"bytes,6,opt,name=secretKeySecret"`
	SessionTokenSecret       *apiv1.SecretKeySelector `json:"sessionTokenSecret,omitempty" protobuf:"bytes,12,opt,name=sessionTokenSecret"`
	RoleARN                  string                   `json:"roleARN,omitempty" protobuf:"bytes,7,opt,name=roleARN"`
	UseSDKCreds              bool                     `json:"useSDKCreds,omitempty" protobuf:"varint,8,opt,name=useSDKCreds"`
	CreateBucketIfNotPresent *CreateS3BucketOptions   `json:"createBucketIfNotPresent,omitempty" protobuf:"bytes,9,opt,name=createBucketIfNotPresent"`
	EncryptionOptions        *S3EncryptionOptions     `json:"encryptionOptions,omitempty" protobuf:"bytes,10,opt,name=encryptionOptions"`
	CASecret                 *apiv1.SecretKeySelector `json:"caSecret,omitempty" protobuf:"bytes,11,opt,name=caSecret"`
	// AddressingStyle selects path-style or virtual-hosted-style requests.
	AddressingStyle string `json:"addressingStyle,omitempty" protobuf:"bytes,13,opt,name=addressingStyle"`
}

// CreateS3BucketOptions configures creating a missing bucket.
type CreateS3BucketOptions struct {
	ObjectLocking bool `json:"objectLocking,omitempty" protobuf:"varint,3,opt,name=objectLocking"`
}

// S3EncryptionOptions configures server-side encryption.
type S3EncryptionOptions struct {
	KmsKeyID                    string                   `json:"kmsKeyId,omitempty" protobuf:"bytes,1,opt,name=kmsKeyId"`
	KmsEncryptionContext        string                   `json:"kmsEncryptionContext,omitempty" protobuf:"bytes,2,opt,name=kmsEncryptionContext"`
	EnableEncryption            bool                     `json:"enableEncryption,omitempty" protobuf:"varint,3,opt,name=enableEncryption"`
	ServerSideCustomerKeySecret *apiv1.SecretKeySelector `json:"serverSideCustomerKeySecret,omitempty" protobuf:"bytes,4,opt,name=serverSideCustomerKeySecret"`
}

// S3Artifact is an object in an S3-compatible bucket.
type S3Artifact struct {
	S3Bucket `json:",inline" protobuf:"bytes,1,opt,name=s3Bucket"`
	Key      string `json:"key,omitempty" protobuf:"bytes,2,opt,name=key"`
}

// GitArtifact is a git repository checked out as an input.
type GitArtifact struct {
	Repo                  string                   `json:"repo" protobuf:"bytes,1,opt,name=repo"`
	Revision              string                   `json:"revision,omitempty" protobuf:"bytes,2,opt,name=revision"`
	Depth                 *uint64                  `json:"depth,omitempty" protobuf:"varint,3,opt,name=depth"`
	Fetch                 []string                 `json:"fetch,omitempty" protobuf:"bytes,4,rep,name=fetch"`
	UsernameSecret        *apiv1.SecretKeySelector `json:"usernameSecret,omitempty" protobuf:"bytes,5,opt,name=usernameSecret"`
	PasswordSecret        *apiv1.SecretKeySelector `json:"passwordSecret,omitempty" protobuf:"bytes,6,opt,name=passwordSecret"`
	SSHPrivateKeySecret   *apiv1.SecretKeySelector `json:"sshPrivateKeySecret,omitempty" protobuf:"bytes,7,opt,name=sshPrivateKeySecret"`
	InsecureIgnoreHostKey bool                     `json:"insecureIgnoreHostKey,omitempty" protobuf:"varint,8,opt,name=insecureIgnoreHostKey"`
	DisableSubmodules     bool                     `json:"disableSubmodules,omitempty" protobuf:"varint,9,opt,name=disableSubmodules"`
	SingleBranch          bool                     `json:"singleBranch,omitempty" protobuf:"varint,10,opt,name=singleBranch"`
	Branch                string                   `json:"branch,omitempty" protobuf:"bytes,11,opt,name=branch"`
	InsecureSkipTLS       bool                     `json:"insecureSkipTLS,omitempty" protobuf:"varint,12,opt,name=insecureSkipTLS"`
}

// HTTPArtifact is a file fetched (or uploaded) over HTTP.
type HTTPArtifact struct {
	URL     string    `json:"url" protobuf:"bytes,1,opt,name=url"`
	Headers []Header  `json:"headers,omitempty" protobuf:"bytes,2,rep,name=headers"`
	Auth    *HTTPAuth `json:"auth,omitempty" protobuf:"bytes,3,opt,name=auth"`
	// SaveStreamViaFile buffers an upload in a file before sending it.
	SaveStreamViaFile bool `json:"saveStreamViaFile,omitempty" protobuf:"varint,4,opt,name=saveStreamViaFile"`
}

// Header is one HTTP header of an HTTP artifact.
type Header struct {
	Name  string `json:"name" protobuf:"bytes,1,opt,name=name"`
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}

// HTTPAuth is the authentication of an HTTP artifact.
type HTTPAuth struct {
	ClientCert ClientCertAuth `json:"clientCert,omitzero" protobuf:"bytes,1,opt,name=clientCert"`
	OAuth2     OAuth2Auth     `json:"oauth2,omitzero" protobuf:"bytes,2,opt,name=oauth2"`
	BasicAuth  BasicAuth      `json:"basicAuth,omitzero" protobuf:"bytes,3,opt,name=basicAuth"`
}

// BasicAuth is HTTP basic authentication.
type BasicAuth struct {
	UsernameSecret *apiv1.SecretKeySelector `json:"usernameSecret,omitempty" protobuf:"bytes,1,opt,name=usernameSecret"`
	PasswordSecret *apiv1.SecretKeySelector `json:"passwordSecret,omitempty" protobuf:"bytes,2,opt,name=passwordSecret"`
}

// ClientCertAuth is TLS client certificate authentication.
type ClientCertAuth struct {
	ClientCertSecret *apiv1.SecretKeySelector `json:"clientCertSecret,omitempty" protobuf:"bytes,1,opt,name=clientCertSecret"`
	ClientKeySecret  *apiv1.SecretKeySelector `json:"clientKeySecret,omitempty" protobuf:"bytes,2,opt,name=clientKeySecret"`
}

// OAuth2Auth is OAuth2 client-credentials authentication.
type OAuth2Auth struct {
	ClientIDSecret     *apiv1.SecretKeySelector `json:"clientIDSecret,omitempty" protobuf:"bytes,1,opt,name=clientIDSecret"`
	ClientSecretSecret *apiv1.SecretKeySelector `json:"clientSecretSecret,omitempty" protobuf:"bytes,2,opt,name=clientSecretSecret"`
	TokenURLSecret     *apiv1.SecretKeySelector `json:"tokenURLSecret,omitempty" protobuf:"bytes,3,opt,name=tokenURLSecret"`
	Scopes             []string                 `json:"scopes,omitempty" protobuf:"bytes,5,rep,name=scopes"`
	EndpointParams     []OAuth2EndpointParam    `json:"endpointParams,omitempty" protobuf:"bytes,6,rep,name=endpointParams"`
}

// OAuth2EndpointParam is an extra parameter of the token request.
type OAuth2EndpointParam struct {
	Key   string `json:"key" protobuf:"bytes,1,opt,name=key"`
	Value string `json:"value,omitempty" protobuf:"bytes,2,opt,name=value"`
}

// ArtifactoryAuth is the credentials of an Artifactory repository.
type ArtifactoryAuth struct {
	UsernameSecret *apiv1.SecretKeySelector `json:"usernameSecret,omitempty" protobuf:"bytes,1,opt,name=usernameSecret"`
	PasswordSecret *apiv1.SecretKeySelector `json:"passwordSecret,omitempty" protobuf:"bytes,2,opt,name=passwordSecret"`
}

// ArtifactoryArtifact is a file in Artifactory.
type ArtifactoryArtifact struct {
	URL             string `json:"url" protobuf:"bytes,1,opt,name=url"`
	ArtifactoryAuth `json:",inline" protobuf:"bytes,2,opt,name=artifactoryAuth"`
}

// HDFSKrbConfig is the Kerberos configuration of an HDFS connection.
type HDFSKrbConfig struct {
	KrbCCacheSecret         *apiv1.SecretKeySelector    `json:"krbCCacheSecret,omitempty" protobuf:"bytes,1,opt,name=krbCCacheSecret"`
	KrbKeytabSecret         *apiv1.SecretKeySelector    `json:"krbKeytabSecret,omitempty" protobuf:"bytes,2,opt,name=krbKeytabSecret"`
	KrbUsername             string                      `json:"krbUsername,omitempty" protobuf:"bytes,3,opt,name=krbUsername"`
	KrbRealm                string                      `json:"krbRealm,omitempty" protobuf:"bytes,4,opt,name=krbRealm"`
	KrbConfigConfigMap      *apiv1.ConfigMapKeySelector `json:"krbConfigConfigMap,omitempty" protobuf:"bytes,5,opt,name=krbConfigConfigMap"`
	KrbServicePrincipalName string                      `json:"krbServicePrincipalName,omitempty" protobuf:"bytes,6,opt,name=krbServicePrincipalName"`
}

// HDFSConfig is the connection to an HDFS cluster.
type HDFSConfig struct {
	HDFSKrbConfig          `json:",inline" protobuf:"bytes,1,opt,name=hDFSKrbConfig"`
	Addresses              []string `json:"addresses,omitempty" protobuf:"bytes,2,rep,name=addresses"`
	HDFSUser               string   `json:"hdfsUser,omitempty" protobuf:"bytes,3,opt,name=hdfsUser"`
	DataTransferProtection string   `json:"dataTransferProtection,omitempty" protobuf:"bytes,4,opt,name=dataTransferProtection"`
}

// HDFSArtifact is a file in HDFS.
type HDFSArtifact struct {
	HDFSConfig `json:",inline" protobuf:"bytes,1,opt,name=hDFSConfig"`
	Path       string `json:"path" protobuf:"bytes,2,opt,name=path"`
	// Force overwrites an existing file.
	Force bool `json:"force,omitempty" protobuf:"varint,3,opt,name=force"`
}

// RawArtifact is an input artifact given inline.
type RawArtifact struct {
	Data string `json:"data" protobuf:"bytes,1,opt,name=data"`
}

// OSSLifecycleRule is the lifecycle rule of an OSS bucket.
type OSSLifecycleRule struct {
	MarkInfrequentAccessAfterDays int32 `json:"markInfrequentAccessAfterDays,omitempty" protobuf:"varint,1,opt,name=markInfrequentAccessAfterDays"`
	MarkDeletionAfterDays         int32 `json:"markDeletionAfterDays,omitempty" protobuf:"varint,2,opt,name=markDeletionAfterDays"`
}

// OSSBucket is the connection to an Alibaba Cloud OSS bucket.
type OSSBucket struct {
	Endpoint                 string                   `json:"endpoint,omitempty" protobuf:"bytes,1,opt,name=endpoint"`
	Bucket                   string                   `json:"bucket,omitempty" protobuf:"bytes,2,opt,name=bucket"`
	AccessKeySecret          *apiv1.SecretKeySelector `json:"accessKeySecret,omitempty" protobuf:"bytes,3,opt,name=accessKeySecret"`
	SecretKeySecret          *apiv1.SecretKeySelector `json:"secretKeySecret,omitempty" protobuf:"bytes,4,opt,name=secretKeySecret"`
	CreateBucketIfNotPresent bool                     `json:"createBucketIfNotPresent,omitempty" protobuf:"varint,5,opt,name=createBucketIfNotPresent"`
	SecurityToken            string                   `json:"securityToken,omitempty" protobuf:"bytes,6,opt,name=securityToken"`
	LifecycleRule            *OSSLifecycleRule        `json:"lifecycleRule,omitempty" protobuf:"bytes,7,opt,name=lifecycleRule"`
	UseSDKCreds              bool                     `json:"useSDKCreds,omitempty" protobuf:"varint,8,opt,name=useSDKCreds"`
}

// OSSArtifact is an object in an OSS bucket.
type OSSArtifact struct {
	OSSBucket `json:",inline" protobuf:"bytes,1,opt,name=oSSBucket"`
	Key       string `json:"key" protobuf:"bytes,2,opt,name=key"`
}

// GCSBucket is the connection to a Google Cloud Storage bucket.
type GCSBucket struct {
	Bucket                  string                   `json:"bucket,omitempty" protobuf:"bytes,1,opt,name=bucket"`
	ServiceAccountKeySecret *apiv1.SecretKeySelector `json:"serviceAccountKeySecret,omitempty" protobuf:"bytes,2,opt,name=serviceAccountKeySecret"`
}

// GCSArtifact is an object in a GCS bucket.
type GCSArtifact struct {
	GCSBucket `json:",inline" protobuf:"bytes,1,opt,name=gCSBucket"`
	Key       string `json:"key" protobuf:"bytes,2,opt,name=key"`
}

// AzureBlobContainer is the connection to an Azure Blob Storage container.
type AzureBlobContainer struct {
	Endpoint         string                   `json:"endpoint" protobuf:"bytes,1,opt,name=endpoint"`
	Container        string                   `json:"container" protobuf:"bytes,2,opt,name=container"`
	AccountKeySecret *apiv1.SecretKeySelector `json:"accountKeySecret,omitempty" protobuf:"bytes,3,opt,name=accountKeySecret"`
	UseSDKCreds      bool                     `json:"useSDKCreds,omitempty" protobuf:"varint,4,opt,name=useSDKCreds"`
}

// AzureArtifact is a blob in an Azure container.
type AzureArtifact struct {
	AzureBlobContainer `json:",inline" protobuf:"bytes,1,opt,name=azureBlobContainer"`
	Blob               string `json:"blob" protobuf:"bytes,2,opt,name=blob"`
}

// FileArtifact is a braid extension, not in Argo: a file or directory in the
// local artifact repository.
type FileArtifact struct {
	// Key is the artifact's path relative to the repository root.
	Key string `json:"key" protobuf:"bytes,1,opt,name=key"`
}

// PluginArtifact is an artifact handled by an artifact driver plugin.
type PluginArtifact struct {
	// Name is the plugin's name in the controller configuration.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Configuration is passed to the plugin as it is (usually YAML).
	Configuration string `json:"configuration,omitempty" protobuf:"bytes,2,opt,name=configuration"`
	// ConnectionTimeoutSeconds bounds the connection to the plugin.
	ConnectionTimeoutSeconds int32 `json:"connectionTimeoutSeconds,omitempty" protobuf:"varint,3,opt,name=connectionTimeoutSeconds"`
	// Key is the artifact's key within the plugin's storage.
	Key string `json:"key,omitempty" protobuf:"bytes,4,opt,name=key"`
}

// ArtifactRepository is a default location for artifacts, as configured in
// the controller or an artifact-repositories ConfigMap.
type ArtifactRepository struct {
	ArchiveLogs *bool                          `json:"archiveLogs,omitempty" protobuf:"varint,1,opt,name=archiveLogs"`
	S3          *S3ArtifactRepository          `json:"s3,omitempty" protobuf:"bytes,2,opt,name=s3"`
	Artifactory *ArtifactoryArtifactRepository `json:"artifactory,omitempty" protobuf:"bytes,3,opt,name=artifactory"`
	HDFS        *HDFSArtifactRepository        `json:"hdfs,omitempty" protobuf:"bytes,4,opt,name=hdfs"`
	OSS         *OSSArtifactRepository         `json:"oss,omitempty" protobuf:"bytes,5,opt,name=oss"`
	GCS         *GCSArtifactRepository         `json:"gcs,omitempty" protobuf:"bytes,6,opt,name=gcs"`
	Azure       *AzureArtifactRepository       `json:"azure,omitempty" protobuf:"bytes,7,opt,name=azure"`
	// Plugin is an artifact driver plugin's repository.
	Plugin *PluginArtifactRepository `json:"plugin,omitempty" protobuf:"bytes,8,opt,name=plugin"`
	// File is a braid extension, not in Argo: the local artifact repository
	// (by default $BRAID_HOME/artifacts).
	File *FileArtifactRepository `json:"file,omitempty" protobuf:"bytes,9,opt,name=file"`
}

// PluginArtifactRepository is an artifact driver plugin's repository.
type PluginArtifactRepository struct {
	// Name is the plugin's name in the controller configuration.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// KeyFormat is the key template for new artifacts.
	KeyFormat string `json:"keyFormat,omitempty" protobuf:"bytes,2,opt,name=keyFormat"`
	// Configuration is passed to the plugin as it is (usually YAML).
	Configuration string `json:"configuration" protobuf:"bytes,3,opt,name=configuration"`
}

// S3ArtifactRepository is an S3 artifact repository.
type S3ArtifactRepository struct {
	S3Bucket `json:",inline" protobuf:"bytes,1,opt,name=s3Bucket"`
	// KeyFormat is the key template for new artifacts.
	KeyFormat string `json:"keyFormat,omitempty" protobuf:"bytes,2,opt,name=keyFormat"`
	// KeyPrefix is the legacy form of KeyFormat.
	KeyPrefix string `json:"keyPrefix,omitempty" protobuf:"bytes,3,opt,name=keyPrefix"`
}

// OSSArtifactRepository is an OSS artifact repository.
type OSSArtifactRepository struct {
	OSSBucket `json:",inline" protobuf:"bytes,1,opt,name=oSSBucket"`
	KeyFormat string `json:"keyFormat,omitempty" protobuf:"bytes,2,opt,name=keyFormat"`
}

// GCSArtifactRepository is a GCS artifact repository.
type GCSArtifactRepository struct {
	GCSBucket `json:",inline" protobuf:"bytes,1,opt,name=gCSBucket"`
	KeyFormat string `json:"keyFormat,omitempty" protobuf:"bytes,2,opt,name=keyFormat"`
}

// ArtifactoryArtifactRepository is an Artifactory artifact repository.
type ArtifactoryArtifactRepository struct {
	ArtifactoryAuth `json:",inline" protobuf:"bytes,1,opt,name=artifactoryAuth"`
	RepoURL         string `json:"repoURL,omitempty" protobuf:"bytes,2,opt,name=repoURL"`
	KeyFormat       string `json:"keyFormat,omitempty" protobuf:"bytes,3,opt,name=keyFormat"`
}

// HDFSArtifactRepository is an HDFS artifact repository.
type HDFSArtifactRepository struct {
	HDFSConfig `json:",inline" protobuf:"bytes,1,opt,name=hDFSConfig"`
	PathFormat string `json:"pathFormat,omitempty" protobuf:"bytes,2,opt,name=pathFormat"`
	Force      bool   `json:"force,omitempty" protobuf:"varint,3,opt,name=force"`
}

// AzureArtifactRepository is an Azure Blob Storage artifact repository.
type AzureArtifactRepository struct {
	AzureBlobContainer `json:",inline" protobuf:"bytes,1,opt,name=blobContainer"`
	BlobNameFormat     string `json:"blobNameFormat,omitempty" protobuf:"bytes,2,opt,name=blobNameFormat"`
}

// FileArtifactRepository is a braid extension, not in Argo: the local
// artifact repository, rooted at $BRAID_HOME/artifacts by default.
type FileArtifactRepository struct {
	// KeyFormat is the key template for new artifacts.
	KeyFormat string `json:"keyFormat,omitempty" protobuf:"bytes,1,opt,name=keyFormat"`
}

// HasLocation reports whether any location field is set.
func (l *ArtifactLocation) HasLocation() bool {
	return l.S3 != nil || l.Git != nil || l.HTTP != nil || l.Artifactory != nil || l.HDFS != nil ||
		l.Raw != nil || l.OSS != nil || l.GCS != nil || l.Azure != nil || l.Plugin != nil || l.File != nil
}
