package image

import "strings"

// reference is an image reference reduced to what is compared: the name
// (without its registry host and "library/"), the tag ("latest" when it has
// neither a tag nor a digest) and the digest.
type reference struct {
	name, tag, digest string
}

// parseReference normalises an image reference.
func parseReference(ref string) reference {
	var r reference
	ref = strings.TrimSpace(ref)
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref, r.digest = ref[:i], ref[i+1:]
	}
	// A colon after the last slash starts the tag; one before it is a
	// registry port (localhost:5000/tool).
	if i := strings.LastIndexByte(ref, ':'); i >= 0 && i > strings.LastIndexByte(ref, '/') {
		ref, r.tag = ref[:i], ref[i+1:]
	}
	// The registry host (a first element with a '.' or a ':', or
	// localhost) is dropped: images kept here are named by their path.
	if host, rest, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(host, ".:") || host == "localhost") {
		ref = rest
	}
	r.name = strings.TrimPrefix(ref, "library/")
	if r.tag == "" && r.digest == "" {
		r.tag = "latest"
	}
	return r
}

// String is the reference as it is compared.
func (r reference) String() string {
	s := r.name
	if r.tag != "" {
		s += ":" + r.tag
	}
	if r.digest != "" {
		s += "@" + r.digest
	}
	return s
}

// matches reports whether the entry named e, whose descriptor has the
// digest d, is the image a step asks for as r.
func (r reference) matches(e reference, d string) bool {
	if r.name != e.name {
		return false
	}
	if r.digest != "" {
		return r.digest == d
	}
	return r.tag == e.tag
}

// Annotations of an index's manifests that name an image.
const (
	annotationRefName       = "org.opencontainers.image.ref.name"
	annotationContainerName = "io.containerd.image.name"
)

// indexEntryName is the reference an index entry stands for; ok is false when
// it names none. layoutName is the layout's path below the images
// directory ("" for the images directory itself); single says the index
// has one manifest.
func indexEntryName(annotations map[string]string, layoutName string, single bool) (reference, bool) {
	if full := annotations[annotationContainerName]; full != "" {
		return parseReference(full), true
	}
	ref := annotations[annotationRefName]
	switch {
	case strings.ContainsAny(ref, ":/@"):
		return parseReference(ref), true
	case ref != "" && layoutName == "":
		return parseReference(ref), true
	case ref != "":
		return parseReference(layoutName + ":" + ref), true
	case layoutName != "" && single:
		return parseReference(layoutName), true
	}
	return reference{}, false
}
