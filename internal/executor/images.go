package executor

import "github.com/braidwf/braid/internal/image"

// Image says what a host runtime needs to know about an image it cannot
// pull (image.Entry: the config file's `images` map holds them).
type Image = image.Entry

// ImageTable maps an image reference to what the image does (image.Table,
// which documents the keys and how Lookup matches them).
type ImageTable = image.Table

// BuiltinImages is the table for the images of Argo's examples. self is the
// braid executable, which supplies the argosay and cowsay programs as the
// hidden commands `braid argosay` and `braid cowsay`.
func BuiltinImages(self string) ImageTable {
	argosay := []string{self, "argosay"}
	cowsay := []string{self, "cowsay"}
	shell := Image{Args: []string{"sh"}}
	bash := Image{Args: []string{"bash"}}
	python := Image{Args: []string{"python3"}, Aliases: map[string][]string{"python": {"python3"}}}
	argosayV2 := Image{Command: argosay, Aliases: map[string][]string{"argosay": argosay, "cowsay": cowsay}}
	cow := Image{Command: cowsay, Aliases: map[string][]string{"cowsay": cowsay}}
	return ImageTable{
		// argosay:v2 (and later tags) is a script whose verbs are
		// builtins.Argosay; v1 is a cowsay image.
		"argoproj/argosay":         argosayV2,
		"quay.io/argoproj/argosay": argosayV2,
		"argoproj/argosay:v1":      cow,
		"docker/whalesay":          cow,
		"python":                   python,
		"alpine":                   shell,
		"busybox":                  shell,
		"debian":                   bash,
		"ubuntu":                   bash,
	}
}

// MergeImageTable returns builtin with user's entries added; a user entry
// replaces the builtin entry of the same key. Neither input is modified.
func MergeImageTable(builtin, user ImageTable) ImageTable { return image.MergeTable(builtin, user) }
