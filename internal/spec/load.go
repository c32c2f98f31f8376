package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mode says how strictly documents are decoded.
type Mode int

const (
	// Strict rejects unknown fields, duplicate keys and scalars of the wrong kind.
	Strict Mode = iota
	// Lenient ignores unknown fields and turns numbers and booleans into text where text is expected.
	Lenient
)

// Document is one YAML or JSON document of a file.
type Document struct {
	File       string // the name the document was loaded under
	Index      int    // 0-based position in the file
	Line       int    // line where the document starts
	APIVersion string
	Kind       string
	Name       string // metadata.name, or metadata.generateName when the name is empty
	// Object is the typed object: *v1alpha1.Workflow, *v1alpha1.WorkflowTemplate, ...
	// It is nil when the document is not an Argo kind; Skipped then says why.
	Object  Object
	Skipped string
	// Warnings are problems found while loading that Argo tolerates.
	Warnings Issues

	root *yaml.Node
}

// LineOf returns the line of the field at path (for example
// "spec.templates[2].steps[1][0].template"), or of its nearest present
// ancestor, or 0 when the document has no position information.
func (d *Document) LineOf(path string) int {
	if d == nil || d.root == nil {
		return 0
	}
	return lineOf(d.root, path)
}

// issue builds an Issue about this document.
func (d *Document) issue(path, format string, args ...any) Issue {
	return Issue{File: d.File, Kind: d.Kind, Name: d.Name, Path: path, Line: d.LineOf(path), Message: fmt.Sprintf(format, args...)}
}

// Load decodes every document in data. name is used in messages. It returns
// the documents it could read, and an Issues error for those it could not.
func Load(name string, data []byte, mode Mode) ([]*Document, error) {
	return load(name, data, mode, true)
}

// LoadNoLines is Load for a caller that has no use for line numbers, such
// as the server, which re-encodes what it is sent. Its documents keep no
// YAML tree, so that a big document's tree is freed before its typed
// object is built; the issues that Validate finds in them have no line.
func LoadNoLines(name string, data []byte, mode Mode) ([]*Document, error) {
	return load(name, data, mode, false)
}

func load(name string, data []byte, mode Mode, lines bool) ([]*Document, error) {
	type parsed struct {
		index int
		root  *yaml.Node
	}
	// Every document is parsed first: the decoder holds on to the tree of
	// the last one it read, which must not outlive its conversion.
	var roots []parsed
	var parseErr *Issue
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for i := 0; ; i++ {
		root := new(yaml.Node)
		err := decodeNode(dec, root)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			parseErr = &Issue{File: name, Line: yamlErrorLine(err), Message: cleanYAMLError(err)}
			break
		}
		if !isEmptyDocument(root) {
			roots = append(roots, parsed{i, root})
		}
	}
	dec = nil
	var docs []*Document
	var issues Issues
	for j := range roots {
		doc, errs := decodeDocument(name, roots[j].index, roots[j].root, mode, lines)
		roots[j].root = nil
		issues = append(issues, errs...)
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if parseErr != nil {
		issues = append(issues, *parseErr)
	}
	return docs, issues.Err()
}

// decodeNode reads the next YAML document, turning a parser panic into an error.
func decodeNode(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: cannot parse: %v", r)
		}
	}()
	return dec.Decode(n)
}

func isEmptyDocument(n *yaml.Node) bool {
	if n.Kind == 0 {
		return true
	}
	if n.Kind == yaml.DocumentNode {
		return len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].ShortTag() == "!!null")
	}
	return false
}

// decodeDocument decodes one document; without lines, the document lets
// its YAML tree go once it is converted.
func decodeDocument(file string, index int, root *yaml.Node, mode Mode, lines bool) (*Document, Issues) {
	doc := &Document{File: file, Index: index, Line: root.Line, root: root}
	body := root
	if body.Kind == yaml.DocumentNode {
		body = body.Content[0]
	}
	if body.Kind == yaml.AliasNode && body.Alias != nil {
		body = body.Alias
	}
	if body.Kind != yaml.MappingNode {
		return nil, Issues{{File: file, Line: body.Line, Message: fmt.Sprintf("document %d is not a map: every document needs apiVersion, kind and metadata", index+1)}}
	}
	doc.APIVersion, doc.Kind, doc.Name = header(body)
	var obj Object
	skip := ""
	if doc.Kind != "" {
		obj, skip = newObject(doc.APIVersion, doc.Kind)
	}
	if obj == nil {
		// Not read, but still checked, so that a broken document is
		// reported whatever its kind.
		if _, err := newConverter(false).convert(body, nil, 0); err != nil {
			return nil, Issues{{File: file, Line: body.Line, Message: err.Error()}}
		}
		if doc.Kind == "" {
			return doc, Issues{doc.issue("kind", "the document has no kind")}
		}
		doc.Skipped = skip
		return doc, nil
	}
	c := newConverter(mode == Strict)
	value, err := c.convert(body, reflect.TypeOf(obj), 0)
	if err != nil {
		// The walk does not depend on the type: these errors are those of
		// any document, reported without a kind or name.
		return nil, Issues{{File: file, Line: body.Line, Message: err.Error()}}
	}
	var issues Issues
	for _, fi := range c.issues {
		is := Issue{File: file, Kind: doc.Kind, Name: doc.Name, Path: fi.path, Line: fi.line, Message: fi.msg, Warning: fi.warning}
		if is.Warning {
			doc.Warnings = append(doc.Warnings, is)
		} else {
			issues = append(issues, is)
		}
	}
	if len(issues) > 0 {
		return nil, append(issues, doc.Warnings...)
	}
	if !lines {
		doc.root = nil
	}
	if err := fill(value, obj); err != nil {
		is := doc.issue(jsonErrorPath(err), "%s", cleanJSONError(err))
		if !lines {
			is.Line = doc.Line
		}
		return nil, Issues{is}
	}
	doc.Object = obj
	return doc, nil
}

// LoadFile reads and decodes one file; "-" reads standard input.
func LoadFile(path string, mode Mode) ([]*Document, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return Load(path, data, mode)
}

// SpecFiles expands the given files and directories into the list of spec
// files to read: directories are walked for *.yaml, *.yml and *.json.
func SpecFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && isSpecFile(path) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", p, err)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func isSpecFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

var (
	yamlLineRE       = regexp.MustCompile(`line (\d+)`)
	yamlLinePrefixRE = regexp.MustCompile(`(?m)^\s*line \d+: `)
)

func yamlErrorLine(err error) int {
	m := yamlLineRE.FindStringSubmatch(err.Error())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return "invalid YAML: " + yamlLinePrefixRE.ReplaceAllString(msg, "")
}

func jsonErrorPath(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

func cleanJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("cannot use a JSON %s here (expected %s)", te.Value, te.Type)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// ObjectDocument is the Document of an object that is already typed (an
// API request, decoded from JSON or protobuf): its apiVersion and kind are
// the object's (Argo's when it has none: the protobuf wire carries none),
// and it has no lines.
func ObjectDocument(obj Object) *Document {
	gvk := obj.GetObjectKind().GroupVersionKind()
	doc := &Document{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), Object: obj}
	if doc.Name == "" {
		doc.Name = obj.GetGenerateName()
	}
	return doc
}
