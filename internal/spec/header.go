package spec

import (
	"encoding/json"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// header reads a document's apiVersion, kind and name (metadata.name, or
// metadata.generateName when the name is empty) straight from its YAML
// mapping, as the converter would give them, without converting the rest.
// A field that is absent or not a string is "".
func header(body *yaml.Node) (apiVersion, kind, name string) {
	apiVersion = stringField(body, "apiVersion")
	kind = stringField(body, "kind")
	if md := field(body, "metadata"); md != nil {
		if name = stringField(md, "name"); name == "" {
			name = stringField(md, "generateName")
		}
	}
	return apiVersion, kind, name
}

// field returns the value of key in mapping n, with the converter's rules:
// the last of the keys written in the mapping wins, and a merged key (<<)
// counts only when none is written. It is nil when n is not a mapping or
// has no such key.
func field(n *yaml.Node, key string) *yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var buf [8]pair
	pairs, err := mergedPairs(n, 0, buf[:0])
	if err != nil {
		return nil
	}
	var found *yaml.Node
	for _, p := range pairs {
		k := deref(p.key)
		if k.Kind != yaml.ScalarNode || k.Value != key {
			continue
		}
		if p.merged && found != nil {
			break
		}
		found = p.value
		if p.merged {
			break
		}
	}
	return deref(found)
}

// stringField is the text of the string scalar at key in mapping n, or "".
func stringField(n *yaml.Node, key string) string {
	v := field(n, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	s, _ := scalarValue(v)
	text, _ := s.(string)
	return text
}

// fill decodes a JSON-compatible value into obj through encoding/json, so
// that every type's own JSON rules (IntOrString, Quantity, ...) apply.
func fill(value any, obj Object) error {
	data, err := json.Marshal(value)
	if err != nil {
		return err
	}
	presize(reflect.ValueOf(obj).Elem(), value, 0)
	return json.Unmarshal(data, obj)
}

// presizeMin is the length from which presize sets a list's capacity.
const presizeMin = 64

// presize gives each long list among the fields of struct v, and of the
// structs it holds by value (spec.templates, spec.workflowSpec.templates,
// spec.arguments.parameters, ...), the capacity its JSON value needs.
// encoding/json would grow it a quarter at a time, allocating about five
// times its size for a list of 45,000 templates.
func presize(v reflect.Value, value any, depth int) {
	m, ok := value.(map[string]any)
	if !ok || v.Kind() != reflect.Struct || depth > 8 {
		return
	}
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" || !sf.IsExported() {
			continue
		}
		if strings.Contains(","+opts+",", ",inline,") || (sf.Anonymous && name == "") {
			presize(v.Field(i), value, depth+1)
			continue
		}
		if name == "" {
			name = sf.Name
		}
		switch sub := m[name].(type) {
		case []any:
			if sf.Type.Kind() == reflect.Slice && len(sub) >= presizeMin {
				v.Field(i).Set(reflect.MakeSlice(sf.Type, 0, len(sub)))
			}
		case map[string]any:
			presize(v.Field(i), sub, depth+1)
		}
	}
}
