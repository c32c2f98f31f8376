package spec

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// lineOf walks a field path such as `spec.templates[2].steps[1][0].template`
// or `metadata.labels["a/b"]` down the YAML tree and returns the line of the
// deepest node it reaches.
func lineOf(n *yaml.Node, path string) int {
	line := n.Line
	for _, seg := range splitPath(path) {
		n = deref(n)
		if n == nil {
			break
		}
		if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
			n = deref(n.Content[0])
		}
		next := child(n, seg)
		if next == nil {
			break
		}
		n = next
		line = n.Line
	}
	return line
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func child(n *yaml.Node, seg string) *yaml.Node {
	if idx, err := strconv.Atoi(seg); err == nil && n.Kind == yaml.SequenceNode {
		if idx >= 0 && idx < len(n.Content) {
			return n.Content[idx]
		}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	pairs, err := mergedPairs(n, 0, nil)
	if err != nil {
		return nil
	}
	for _, p := range pairs {
		if deref(p.key).Value == seg {
			return p.value
		}
	}
	return nil
}

// splitPath splits `a.b[2]["x.y"]` into a, b, 2, x.y.
func splitPath(path string) []string {
	var segs []string
	for len(path) > 0 {
		switch path[0] {
		case '.':
			path = path[1:]
		case '[':
			end := strings.IndexByte(path, ']')
			if len(path) > 1 && path[1] == '"' {
				if s, rest, ok := quotedSegment(path[1:]); ok {
					segs = append(segs, s)
					path = rest
					continue
				}
			}
			if end < 0 {
				return append(segs, path[1:])
			}
			segs = append(segs, path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				end = len(path)
			}
			segs = append(segs, path[:end])
			path = path[end:]
		}
	}
	return segs
}

// quotedSegment reads `"x.y"]rest` and returns x.y and rest.
func quotedSegment(s string) (string, string, bool) {
	q, err := strconv.QuotedPrefix(s)
	if err != nil || !strings.HasPrefix(s[len(q):], "]") {
		return "", "", false
	}
	v, err := strconv.Unquote(q)
	if err != nil {
		return "", "", false
	}
	return v, s[len(q)+1:], true
}

// fieldPath is a field path under construction, kept as a stack of
// segments so that walking a big document costs no string per field: the
// text (see String) is built only for a field that has something to report.
type fieldPath struct {
	base string
	segs []pathSeg
}

// pathSeg is a map key or struct field name, or a list index when isIndex.
type pathSeg struct {
	key     string
	index   int
	isIndex bool
}

func (p *fieldPath) push(key string) { p.segs = append(p.segs, pathSeg{key: key}) }
func (p *fieldPath) pushIndex(i int) { p.segs = append(p.segs, pathSeg{index: i, isIndex: true}) }
func (p *fieldPath) pop()            { p.segs = p.segs[:len(p.segs)-1] }

// String is the path as issues show it: `spec.templates[2].steps[1][0]`,
// `metadata.labels["a/b"]`.
func (p *fieldPath) String() string {
	path := p.base
	for _, s := range p.segs {
		if s.isIndex {
			path = path + "[" + strconv.Itoa(s.index) + "]"
		} else {
			path = joinPath(path, s.key)
		}
	}
	return path
}
