package v1alpha1

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// crdDir is where hack/gen.sh writes the CRDs, relative to this package.
const crdDir = "../../../manifests/base/crds"

type crdInfo struct {
	kind       string
	scope      string
	shortNames []string
	schema     map[string]any
}

var crdCache struct {
	sync.Mutex
	crds map[string]crdInfo
}

// loadCRDs parses the generated CRDs once per test binary.
func loadCRDs(t *testing.T) map[string]crdInfo {
	t.Helper()
	crdCache.Lock()
	defer crdCache.Unlock()
	if crdCache.crds == nil {
		crdCache.crds = parseCRDs(t)
	}
	return crdCache.crds
}

func parseCRDs(t *testing.T) map[string]crdInfo {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(crdDir, "argoproj.io_*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (run hack/gen.sh): %v", crdDir, err)
	}
	out := map[string]crdInfo{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names struct {
					Kind       string   `json:"kind"`
					ShortNames []string `json:"shortNames"`
				} `json:"names"`
				Scope    string `json:"scope"`
				Versions []struct {
					Name   string `json:"name"`
					Schema struct {
						OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := sigsyaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != VersionName {
			t.Fatalf("%s: want the single version %s", f, VersionName)
		}
		schema, err := decodeGeneric(crd.Spec.Versions[0].Schema.OpenAPIV3Schema)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[crd.Spec.Names.Kind] = crdInfo{
			kind:       crd.Spec.Names.Kind,
			scope:      crd.Spec.Scope,
			shortNames: crd.Spec.Names.ShortNames,
			schema:     schema.(map[string]any),
		}
	}
	return out
}

func TestCRDNames(t *testing.T) {
	crds := loadCRDs(t)
	want := map[string]struct {
		scope string
		short string
	}{
		WorkflowKind:                {"Namespaced", WorkflowShortName},
		WorkflowTemplateKind:        {"Namespaced", WorkflowTemplateShortName},
		ClusterWorkflowTemplateKind: {"Cluster", ClusterWorkflowTemplateShortName},
		CronWorkflowKind:            {"Namespaced", CronWorkflowShortName},
		WorkflowEventBindingKind:    {"Namespaced", WorkflowEventBindingShortName},
	}
	if len(crds) != len(want) {
		t.Errorf("got %d CRDs, want %d", len(crds), len(want))
	}
	for kind, w := range want {
		c, ok := crds[kind]
		if !ok {
			t.Errorf("no CRD for %s", kind)
			continue
		}
		if c.scope != w.scope {
			t.Errorf("%s: scope %s, want %s", kind, c.scope, w.scope)
		}
		if !slices.Contains(c.shortNames, w.short) {
			t.Errorf("%s: short names %v lack %s", kind, c.shortNames, w.short)
		}
	}
}

// TestCRDSchemasAcceptCorpus checks the generated schemas against every Argo
// document of the corpus, both as written and as this package re-encodes it:
// a field the schema does not declare would be pruned by the API server, and
// a missing required field or a wrong type would be rejected.
func TestCRDSchemasAcceptCorpus(t *testing.T) {
	dir := filepath.Join(conformanceDir(t), "examples")
	if _, err := os.Stat(dir); err != nil {
		skipNoCorpus(t, err)
	}
	crds := loadCRDs(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(dir, "*", "*.yaml"))
	files = append(files, more...)
	sort.Strings(files)
	checked := 0
	for _, file := range files {
		rel, _ := filepath.Rel(dir, file)
		docs, err := splitDocuments(file)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for i, doc := range docs {
			original, err := decodeGeneric(doc)
			if err != nil {
				t.Fatalf("%s#%d: %v", rel, i, err)
			}
			kind, _ := original.(map[string]any)["kind"].(string)
			crd, ok := crds[kind]
			if !ok {
				continue
			}
			obj := newObject(kind)
			if err := json.Unmarshal(doc, obj); err != nil {
				t.Fatalf("%s#%d: %v", rel, i, err)
			}
			encoded, _ := json.Marshal(obj)
			reencoded, _ := decodeGeneric(encoded)
			for _, v := range []struct {
				what string
				doc  any
			}{{"as written", original}, {"re-encoded", reencoded}} {
				var problems []string
				checkSchema(crd.schema, v.doc, "", &problems)
				for _, p := range problems {
					t.Errorf("%s#%d (%s): %s", rel, i, v.what, p)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no Argo documents checked")
	}
	t.Logf("checked %d documents against the CRD schemas", checked)
}

// checkSchema is a small structural-schema validator: declared properties,
// required fields and basic types. Nulls are skipped, as the API server drops
// nulls of non-nullable fields before validating.
func checkSchema(schema map[string]any, value any, path string, problems *[]string) {
	if value == nil {
		return
	}
	report := func(format string, args ...any) {
		*problems = append(*problems, orRoot(path)+": "+fmt.Sprintf(format, args...))
	}
	if schema["x-kubernetes-int-or-string"] == true {
		switch value.(type) {
		case string, json.Number:
		default:
			report("want an int or a string, got %s", describe(value))
		}
		return
	}
	preserve := schema["x-kubernetes-preserve-unknown-fields"] == true
	typ, _ := schema["type"].(string)
	switch typ {
	case "":
		if !preserve {
			report("schema has no type")
		}
	case "object":
		obj, ok := value.(map[string]any)
		if !ok {
			report("want an object, got %s", describe(value))
			return
		}
		if path == ".metadata" {
			return // the API server handles ObjectMeta itself
		}
		for _, r := range asList(schema["required"]) {
			if obj[r.(string)] == nil {
				report("required field %q is missing", r)
			}
		}
		props, _ := schema["properties"].(map[string]any)
		additional, _ := schema["additionalProperties"].(map[string]any)
		for k, v := range obj {
			switch {
			case props[k] != nil:
				checkSchema(props[k].(map[string]any), v, path+"."+k, problems)
			case additional != nil:
				checkSchema(additional, v, path+"."+k, problems)
			case !preserve:
				report("field %q is not in the schema and would be pruned", k)
			}
		}
	case "array":
		list, ok := value.([]any)
		if !ok {
			report("want a list, got %s", describe(value))
			return
		}
		items, _ := schema["items"].(map[string]any)
		for i, e := range list {
			checkSchema(items, e, fmt.Sprintf("%s[%d]", path, i), problems)
		}
	case "string":
		if _, ok := value.(string); !ok {
			report("want a string, got %s", describe(value))
		}
	case "boolean":
		if _, ok := value.(bool); !ok {
			report("want a boolean, got %s", describe(value))
		}
	case "integer":
		n, ok := value.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			report("want an integer, got %s", describe(value))
		}
	case "number":
		if _, ok := value.(json.Number); !ok {
			report("want a number, got %s", describe(value))
		}
	default:
		report("unknown schema type %q", typ)
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestCRDsMatchTypes is a cheap guard that the CRDs were regenerated after
// the types changed: every JSON field of WorkflowSpec and Template must be in
// the Workflow schema.
func TestCRDsMatchTypes(t *testing.T) {
	crds := loadCRDs(t)
	spec := crds[WorkflowKind].schema["properties"].(map[string]any)["spec"].(map[string]any)
	specProps := spec["properties"].(map[string]any)
	tmplProps := specProps["templates"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	for _, c := range []struct {
		where string
		typ   reflect.Type
		props map[string]any
	}{
		{"spec", reflect.TypeFor[WorkflowSpec](), specProps},
		{"spec.templates[]", reflect.TypeFor[Template](), tmplProps},
	} {
		for _, name := range jsonFieldNames(c.typ) {
			if c.props[name] == nil {
				t.Errorf("%s.%s is missing from the Workflow CRD: run hack/gen.sh", c.where, name)
			}
		}
	}
}

// jsonFieldNames lists the JSON names of a struct's fields, following
// inlined embedded structs.
func jsonFieldNames(typ reflect.Type) []string {
	var names []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-":
		case name == "" && (f.Anonymous || strings.Contains(opts, "inline")):
			names = append(names, jsonFieldNames(f.Type)...)
		case name != "":
			names = append(names, name)
		}
	}
	return names
}

func TestCheckSchemaReports(t *testing.T) {
	schema, _ := decodeGeneric([]byte(`{"type":"object","required":["name"],"properties":{
		"name":{"type":"string"},
		"n":{"type":"integer"},
		"s":{"x-kubernetes-int-or-string":true},
		"free":{"x-kubernetes-preserve-unknown-fields":true},
		"list":{"type":"array","items":{"type":"boolean"}}}}`))
	doc, _ := decodeGeneric([]byte(`{"n":1.5,"s":true,"free":{"x":[1]},"list":[true,"no"],"extra":1}`))
	var problems []string
	checkSchema(schema.(map[string]any), doc, "", &problems)
	sort.Strings(problems)
	want := []string{
		`.: field "extra" is not in the schema and would be pruned`,
		`.: required field "name" is missing`,
		`.list[1]: want a boolean, got "no"`,
		`.n: want an integer, got 1.5`,
		`.s: want an int or a string, got true`,
	}
	if !slices.Equal(problems, want) {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(problems, "\n"), strings.Join(want, "\n"))
	}
}
