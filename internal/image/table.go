package image

import (
	"maps"
	"path"
	"strings"
)

// The image table: what the config file's `images` map says about images
// that a host runtime cannot pull (internal/config holds one, the runtimes
// and internal/executor read it).

// Entry says what a host runtime needs to know about an image it cannot
// pull. It is what the config file's `images` map holds:
//
//	images:
//	  myorg/tool:1: {command: [/usr/bin/tool]}
//	  myorg/base:   {args: [sh], aliases: {tool: [/opt/tool/bin/tool]}}
type Entry struct {
	// Command is the image's entrypoint: the argv prefix used when a
	// container sets no command (Docker's ENTRYPOINT).
	Command []string `json:"command,omitempty" yaml:"command,omitempty"`
	// Args are the default arguments used when a container sets neither
	// command nor args (Docker's CMD).
	Args []string `json:"args,omitempty" yaml:"args,omitempty"`
	// Aliases supply commands the image has and the host may lack: when a
	// command's first word is not found on PATH, it is replaced by its alias
	// (for example cowsay -> [braid, cowsay], python -> [python3]). A host
	// binary of the same name always wins.
	Aliases map[string][]string `json:"aliases,omitempty" yaml:"aliases,omitempty"`
}

// Table maps an image reference to what the image does. A key is one of
//
//   - name:tag, matching that tag only ("argoproj/argosay:v1");
//   - a pattern with * ("python:alpine*", "*/argosay:v2"), matched with
//     path.Match against name:tag;
//   - a name without a tag ("docker/whalesay"), matching every tag.
//
// When several keys match, an exact name:tag wins, then the longest
// pattern, then the bare name. Names are compared after normalisation:
// "docker.io/", "index.docker.io/" and "library/" are dropped, a digest is
// ignored, and a reference without a tag means ":latest". So the key
// "python" matches "python:alpine3.6", "docker.io/library/python" and
// "python@sha256:...".
type Table map[string]Entry

// Lookup returns the entry for image and the key that matched.
func (t Table) Lookup(image string) (Entry, string, bool) {
	if image == "" || len(t) == 0 {
		return Entry{}, "", false
	}
	name, tag := splitImage(image)
	ref := name + ":" + tag
	var (
		bestKey   string
		bestRank  = 0 // 3 exact, 2 pattern, 1 bare name
		bestLen   = 0
		bestImage Entry
	)
	for key, img := range t {
		kname, ktag := splitKey(key)
		rank, length := 0, 0
		switch {
		case strings.Contains(key, "*"):
			pattern := kname
			if ktag != "" {
				pattern += ":" + ktag
			}
			if ok, _ := path.Match(pattern, ref); ok {
				rank, length = 2, len(pattern)
			} else if ok, _ := path.Match(pattern, name); ok && ktag == "" {
				rank, length = 2, len(pattern)
			}
		case ktag != "":
			if kname == name && ktag == tag {
				rank = 3
			}
		default:
			if kname == name {
				rank = 1
			}
		}
		if rank == 0 {
			continue
		}
		// Ties (two spellings of one key) are broken by the key text so that
		// the result never depends on map order.
		if rank > bestRank || (rank == bestRank && length > bestLen) ||
			(rank == bestRank && length == bestLen && key < bestKey) {
			bestKey, bestRank, bestLen, bestImage = key, rank, length, img
		}
	}
	return bestImage, bestKey, bestRank > 0
}

// splitImage normalises an image reference into its name and tag; the tag
// is "latest" when the reference has none.
func splitImage(image string) (name, tag string) {
	name, tag = splitKey(image)
	if tag == "" {
		tag = "latest"
	}
	return name, tag
}

// splitKey normalises a reference or a table key into its name and tag; the
// tag is "" when there is none.
func splitKey(ref string) (name, tag string) {
	ref = strings.TrimSpace(ref)
	if i := strings.IndexByte(ref, '@'); i >= 0 {
		ref = ref[:i]
	}
	// A colon after the last slash starts the tag; one before it is a
	// registry port (localhost:5000/tool).
	if i := strings.LastIndexByte(ref, ':'); i >= 0 && i > strings.LastIndexByte(ref, '/') {
		ref, tag = ref[:i], ref[i+1:]
	}
	for _, prefix := range []string{"docker.io/", "index.docker.io/", "registry-1.docker.io/"} {
		ref = strings.TrimPrefix(ref, prefix)
	}
	ref = strings.TrimPrefix(ref, "library/")
	return ref, tag
}

// MergeTable returns builtin with user's entries added; a user entry
// replaces the builtin entry of the same key. Neither input is modified.
func MergeTable(builtin, user Table) Table {
	out := make(Table, len(builtin)+len(user))
	maps.Copy(out, builtin)
	maps.Copy(out, user)
	return out
}
