package compat

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// protoField is one field of a message in Argo's generated.proto.
type protoField struct {
	label, typ string // label: optional, repeated or map
	num        int
}

// argoMessages parses Argo's v1alpha1 generated.proto from the module cache:
// message name → field name → field.
func argoMessages(t *testing.T) map[string]map[string]protoField {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-workflows/v4").Output()
	if err != nil {
		t.Fatalf("locate Argo's module: %v", err)
	}
	f, err := os.Open(filepath.Join(strings.TrimSpace(string(out)), "pkg/apis/workflow/v1alpha1/generated.proto"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	msgs := map[string]map[string]protoField{}
	reMsg := regexp.MustCompile(`^message (\w+) \{`)
	reField := regexp.MustCompile(`^\s+(optional|repeated) ([\w.]+) (\w+)\s*=\s*(\d+);`)
	reMap := regexp.MustCompile(`^\s+map<([\w.]+), ([\w.]+)> (\w+)\s*=\s*(\d+);`)
	var cur map[string]protoField
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if m := reMsg.FindStringSubmatch(l); m != nil {
			cur = map[string]protoField{}
			msgs[m[1]] = cur
		} else if m := reField.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[4])
			cur[m[3]] = protoField{m[1], m[2], n}
		} else if m := reMap.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[4])
			cur[m[3]] = protoField{"map", m[1] + "," + m[2], n}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// braidField is one tagged field of a struct in braid's pkg/apis/v1alpha1.
type braidField struct {
	goName, wire, label, key, val string
	num                           int
}

// braidStructs parses braid's v1alpha1 sources (braid's module is not
// imported: its Kubernetes versions differ from Argo's client's) and
// returns struct name → protobuf name → field.
func braidStructs(t *testing.T) map[string]map[string]braidField {
	t.Helper()
	files, err := filepath.Glob("../../pkg/apis/v1alpha1/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("braid's v1alpha1 sources: %v", err)
	}
	out := map[string]map[string]braidField{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			fields := map[string]braidField{}
			for _, fl := range st.Fields.List {
				if fl.Tag == nil {
					continue
				}
				raw, _ := strconv.Unquote(fl.Tag.Value)
				tag := reflect.StructTag(raw)
				pb := strings.Split(tag.Get("protobuf"), ",")
				if len(pb) < 4 {
					continue
				}
				num, _ := strconv.Atoi(pb[1])
				bf := braidField{wire: pb[0], num: num, label: pb[2], key: tag.Get("protobuf_key"), val: tag.Get("protobuf_val")}
				if len(fl.Names) > 0 {
					bf.goName = fl.Names[0].Name
				}
				fields[strings.TrimPrefix(pb[3], "name=")] = bf
			}
			out[ts.Name.Name] = fields
			return false
		})
	}
	return out
}

// wireOf is the wire type of a proto field type.
func wireOf(typ string) string {
	switch typ {
	case "bool", "int32", "int64", "uint32", "uint64":
		return "varint"
	case "double":
		return "fixed64"
	case "float":
		return "fixed32"
	}
	return "bytes"
}

// TestFieldNumbers: every field of every Argo v1alpha1 message that braid
// models is on braid's type with the same number, wire type and
// repetition; a field braid adds takes a number Argo does not use.
func TestFieldNumbers(t *testing.T) {
	argo := argoMessages(t)
	braid := braidStructs(t)
	// Argo messages braid does not model: the executor's and the
	// controller's internal kinds, never sent through argo-server.
	internal := map[string]bool{}
	for _, n := range []string{"WorkflowTaskSet", "WorkflowTaskSetSpec", "WorkflowTaskSetStatus", "WorkflowTaskResult",
		"WorkflowTaskResultList", "WorkflowTaskSetList", "WorkflowArtifactGCTask", "WorkflowArtifactGCTaskList",
		"ArtifactGCSpec", "ArtifactGCStatus", "ArtifactNodeSpec", "ArtifactResult", "ArtifactResultNodeStatus",
		"NodeResult", "ParallelSteps", "SubmitOpts", "Version", "WorkflowLevelArtifactGC", "ArtifactSearchQuery",
		"ArtifactSearchResult", "ArtifactSearchResults", "NodeFlag", "TTLStrategy"} {
		internal[n] = true
	}
	checked := 0
	for name, fields := range argo {
		bs, ok := braid[name]
		if !ok {
			if !internal[name] {
				t.Errorf("Argo's message %s has no braid type", name)
			}
			continue
		}
		used := map[int]string{}
		for fname, pf := range fields {
			used[pf.num] = fname
			bf, ok := bs[fname]
			if !ok {
				t.Errorf("%s.%s (= %d): no braid field has this protobuf name", name, fname, pf.num)
				continue
			}
			checked++
			if bf.num != pf.num {
				t.Errorf("%s.%s: braid's number %d, Argo's %d", name, fname, bf.num, pf.num)
			}
			wantLabel := "opt"
			if pf.label != "optional" {
				wantLabel = "rep"
			}
			if bf.label != wantLabel {
				t.Errorf("%s.%s: braid's label %s, Argo's %s", name, fname, bf.label, pf.label)
			}
			if pf.label == "map" {
				kv := strings.Split(pf.typ, ",")
				if !strings.HasPrefix(bf.key, wireOf(kv[0])+",1,") || !strings.HasPrefix(bf.val, wireOf(kv[1])+",2,") {
					t.Errorf("%s.%s: map<%s> but braid's key %q value %q", name, fname, pf.typ, bf.key, bf.val)
				}
			} else if bf.wire != wireOf(pf.typ) {
				t.Errorf("%s.%s: braid's wire type %s, Argo's %s (%s)", name, fname, bf.wire, wireOf(pf.typ), pf.typ)
			}
		}
		for fname, bf := range bs {
			if _, ok := fields[fname]; ok {
				continue
			}
			if other, clash := used[bf.num]; clash {
				t.Errorf("%s.%s: braid's extra field takes %d, Argo's %s", name, fname, bf.num, other)
			}
		}
	}
	if checked < 500 {
		t.Errorf("only %d fields compared: the parsers missed something", checked)
	}
	t.Logf("%d fields of %d messages compared", checked, len(argo))
}
