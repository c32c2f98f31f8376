package compat

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bufbuild/protocompile"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// serviceProtos pairs Argo's service protos (in its module) with braid's
// (under api/proto). Argo's artifact, eventsource and sensor services are
// not braid's.
var serviceProtos = []struct{ argo, braid string }{
	{"pkg/apiclient/workflow/workflow.proto", "braid/workflow/workflow.proto"},
	{"pkg/apiclient/workflowtemplate/workflow-template.proto", "braid/workflowtemplate/workflowtemplate.proto"},
	{"pkg/apiclient/clusterworkflowtemplate/cluster-workflow-template.proto", "braid/clusterworkflowtemplate/clusterworkflowtemplate.proto"},
	{"pkg/apiclient/cronworkflow/cron-workflow.proto", "braid/cronworkflow/cronworkflow.proto"},
	{"pkg/apiclient/workflowarchive/workflow-archive.proto", "braid/workflowarchive/workflowarchive.proto"},
	{"pkg/apiclient/event/event.proto", "braid/event/event.proto"},
	{"pkg/apiclient/info/info.proto", "braid/info/info.proto"},
	{"pkg/apiclient/sync/sync.proto", "braid/sync/sync.proto"},
}

// braidOnlyMethods are the RPCs braid adds to Argo's services.
var braidOnlyMethods = []string{
	"event.EventService.CreateWorkflowEventBinding",
	"event.EventService.GetWorkflowEventBinding",
	"event.EventService.UpdateWorkflowEventBinding",
	"event.EventService.DeleteWorkflowEventBinding",
	"workflow.WorkflowService.WatchWorkflowNodes",           // the UI's stream of changed nodes
	"cronworkflow.CronWorkflowService.BackfillCronWorkflow", // the UI's and the CLI's backfill
}

// braidOnlyFirst is the first field number braid may give a field of its
// own in one of Argo's messages: far above Argo's, so they cannot collide.
const braidOnlyFirst = 1001

const v1alpha1Pkg = "github.com.argoproj.argo_workflows.v4.pkg.apis.workflow.v1alpha1"

// TestProtosMatchArgo compares braid's service protos with Argo v4.0.5's,
// both parsed from source: every service and method (name, streaming, input
// and output message, REST rule), and every field (name, number, label,
// type) of every message the methods reach, down to the v1alpha1 messages.
// Kubernetes messages are skipped: both sides import the same k8s files.
func TestProtosMatchArgo(t *testing.T) {
	argo := compileProtos(t, argoAccessor(t), argoFiles())
	braid := compileProtos(t, braidAccessor(), braidFiles())
	var c protoDiff
	for _, p := range serviceProtos {
		a, errA := argo.FindFileByPath(p.argo)
		b, errB := braid.FindFileByPath(p.braid)
		if errA != nil || errB != nil {
			t.Fatalf("compiled files: %v, %v", errA, errB)
		}
		if a.Package() != b.Package() {
			c.errorf("%s: package %s, Argo's is %s", p.braid, b.Package(), a.Package())
		}
		c.compareServices(a, b, braid)
	}
	c.compareReachable(argo, braid)
	for _, e := range c.errs {
		t.Error(e)
	}
	if len(c.missing) > 0 {
		t.Logf("%d fields of Argo's v1alpha1 messages are not in braid's:\n  %s",
			len(c.missing), strings.Join(c.missing, "\n  "))
	}
	if len(c.extra) > 0 {
		t.Logf("%d fields of braid's v1alpha1 messages are not in Argo v4.0.5's (their numbers are free there):\n  %s",
			len(c.extra), strings.Join(c.extra, "\n  "))
	}
	if c.compared == 0 {
		t.Fatal("compared no fields")
	}
	t.Logf("compared %d methods and %d fields", c.methods, c.compared)
}

type protoDiff struct {
	errs     []string
	missing  []string // v1alpha1 fields braid does not carry
	extra    []string // braid's v1alpha1 fields that Argo v4.0.5 lacks
	queue    []protoreflect.FullName
	queued   map[protoreflect.FullName]bool
	methods  int
	compared int
}

func (c *protoDiff) errorf(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *protoDiff) reach(name protoreflect.FullName) {
	if c.queued == nil {
		c.queued = map[protoreflect.FullName]bool{}
	}
	if !c.queued[name] {
		c.queued[name] = true
		c.queue = append(c.queue, name)
	}
}

func (c *protoDiff) compareServices(a, b protoreflect.FileDescriptor, braid *protoregistry.Files) {
	for i := range a.Services().Len() {
		as := a.Services().Get(i)
		bs := b.Services().ByName(as.Name())
		if bs == nil {
			c.errorf("service %s: missing in %s", as.FullName(), b.Path())
			continue
		}
		for j := range as.Methods().Len() {
			c.compareMethod(as.Methods().Get(j), bs.Methods().ByName(as.Methods().Get(j).Name()))
		}
		for j := range bs.Methods().Len() {
			m := bs.Methods().Get(j)
			if as.Methods().ByName(m.Name()) == nil && !slices.Contains(braidOnlyMethods, string(m.FullName())) {
				c.errorf("method %s: not Argo's and not in braidOnlyMethods", m.FullName())
			}
		}
	}
	for i := range b.Services().Len() {
		if a.Services().ByName(b.Services().Get(i).Name()) == nil {
			c.errorf("service %s: not Argo's", b.Services().Get(i).FullName())
		}
	}
}

func (c *protoDiff) compareMethod(am, bm protoreflect.MethodDescriptor) {
	if bm == nil {
		c.errorf("method %s: missing", am.FullName())
		return
	}
	c.methods++
	if am.IsStreamingClient() != bm.IsStreamingClient() || am.IsStreamingServer() != bm.IsStreamingServer() {
		c.errorf("method %s: streaming client=%v server=%v, Argo's client=%v server=%v", am.FullName(),
			bm.IsStreamingClient(), bm.IsStreamingServer(), am.IsStreamingClient(), am.IsStreamingServer())
	}
	for _, io := range []struct {
		what string
		a, b protoreflect.MessageDescriptor
	}{{"input", am.Input(), bm.Input()}, {"output", am.Output(), bm.Output()}} {
		if io.a.FullName() != io.b.FullName() {
			c.errorf("method %s: %s %s, Argo's is %s", am.FullName(), io.what, io.b.FullName(), io.a.FullName())
		}
		c.reach(io.a.FullName())
	}
	if ar, br := httpRule(am), httpRule(bm); !proto.Equal(ar, br) {
		c.errorf("method %s: google.api.http %v, Argo's is %v", am.FullName(), br, ar)
	}
}

// compareReachable compares every message the methods reach (through
// message fields), except Kubernetes' and Google's.
func (c *protoDiff) compareReachable(argo, braid *protoregistry.Files) {
	for len(c.queue) > 0 {
		name := c.queue[0]
		c.queue = c.queue[1:]
		if strings.HasPrefix(string(name), "k8s.io.") || strings.HasPrefix(string(name), "google.") {
			continue
		}
		ad, _ := argo.FindDescriptorByName(name)
		bd, _ := braid.FindDescriptorByName(name)
		am, _ := ad.(protoreflect.MessageDescriptor)
		bm, _ := bd.(protoreflect.MessageDescriptor)
		if am == nil {
			continue // braid's own message (of a braid-only RPC)
		}
		if bm == nil {
			c.errorf("message %s: missing in braid's protos", name)
			continue
		}
		c.compareMessage(am, bm)
	}
}

func (c *protoDiff) compareMessage(am, bm protoreflect.MessageDescriptor) {
	v1alpha1 := am.ParentFile().Package() == v1alpha1Pkg
	for i := range am.Fields().Len() {
		af := am.Fields().Get(i)
		if af.Message() != nil {
			c.reach(af.Message().FullName())
			if af.IsMap() && af.MapValue().Message() != nil {
				c.reach(af.MapValue().Message().FullName())
			}
		}
		bf := bm.Fields().ByNumber(af.Number())
		if bf == nil {
			if byName := bm.Fields().ByName(af.Name()); byName != nil {
				c.errorf("%s.%s: number %d, Argo's is %d", am.FullName(), af.Name(), byName.Number(), af.Number())
			} else if v1alpha1 {
				c.missing = append(c.missing, fmt.Sprintf("%s.%s = %d", am.Name(), af.Name(), af.Number()))
			} else {
				c.errorf("%s.%s = %d: missing", am.FullName(), af.Name(), af.Number())
			}
			continue
		}
		c.compared++
		if af.Name() != bf.Name() {
			c.errorf("%s: field %d is %s, Argo's is %s", am.FullName(), af.Number(), bf.Name(), af.Name())
		}
		if at, bt := fieldShape(af), fieldShape(bf); at != bt {
			c.errorf("%s.%s = %d: %s, Argo's is %s", am.FullName(), af.Name(), af.Number(), bt, at)
		}
	}
	for i := range bm.Fields().Len() {
		bf := bm.Fields().Get(i)
		switch {
		case am.Fields().ByNumber(bf.Number()) != nil:
		case v1alpha1: // kept for old specs, or a newer Argo's: the types' business
			c.extra = append(c.extra, fmt.Sprintf("%s.%s = %d", bm.Name(), bf.Name(), bf.Number()))
		case bf.Number() < braidOnlyFirst:
			c.errorf("%s.%s = %d: braid's own field, numbered below %d", bm.FullName(), bf.Name(), bf.Number(), braidOnlyFirst)
		}
	}
}

// fieldShape is a field's label and type as one comparable string.
func fieldShape(f protoreflect.FieldDescriptor) string {
	if f.IsMap() {
		return fmt.Sprintf("map<%s, %s>", typeName(f.MapKey()), typeName(f.MapValue()))
	}
	label := "optional"
	if f.Cardinality() == protoreflect.Repeated {
		label = "repeated"
	}
	return label + " " + typeName(f)
}

func typeName(f protoreflect.FieldDescriptor) string {
	switch {
	case f.Message() != nil:
		return string(f.Message().FullName())
	case f.Enum() != nil:
		return "enum " + string(f.Enum().FullName())
	}
	return f.Kind().String()
}

// httpRule is a method's google.api.http option, or nil.
func httpRule(m protoreflect.MethodDescriptor) *annotations.HttpRule {
	opts, ok := m.Options().(*descriptorpb.MethodOptions)
	if !ok || opts == nil {
		return nil
	}
	// Re-read the options so that the extension is decoded with its Go type.
	b, err := proto.Marshal(opts)
	if err != nil {
		return nil
	}
	decoded := &descriptorpb.MethodOptions{}
	if err := (proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes}).Unmarshal(b, decoded); err != nil {
		return nil
	}
	rule, _ := proto.GetExtension(decoded, annotations.E_Http).(*annotations.HttpRule)
	return rule
}

func argoFiles() []string {
	var out []string
	for _, p := range serviceProtos {
		out = append(out, p.argo)
	}
	return out
}

func braidFiles() []string {
	var out []string
	for _, p := range serviceProtos {
		out = append(out, p.braid)
	}
	return out
}

// compileProtos parses and links files (and their imports) from accessor.
func compileProtos(t *testing.T, accessor func(string) (string, error), files []string) *protoregistry.Files {
	t.Helper()
	comp := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				full, err := accessor(path)
				if err != nil {
					return nil, err
				}
				return os.Open(full)
			},
		}),
	}
	linked, err := comp.Compile(context.Background(), files...)
	if err != nil {
		t.Fatalf("compile %v: %v", files, err)
	}
	reg := &protoregistry.Files{}
	for _, f := range linked {
		if err := registerWithDeps(reg, f); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

func registerWithDeps(reg *protoregistry.Files, f protoreflect.FileDescriptor) error {
	if _, err := reg.FindFileByPath(f.Path()); err == nil {
		return nil
	}
	for i := range f.Imports().Len() {
		if err := registerWithDeps(reg, f.Imports().Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return reg.RegisterFile(f)
}

// braidProtoDir is braid's api/proto.
func braidProtoDir() string { return filepath.Join("..", "..", "api", "proto") }

func braidAccessor() func(string) (string, error) {
	dir := braidProtoDir()
	return func(path string) (string, error) {
		for _, root := range []string{dir, filepath.Join(dir, "third_party")} {
			if _, err := os.Stat(filepath.Join(root, path)); err == nil {
				return filepath.Join(root, path), nil
			}
		}
		return "", fmt.Errorf("%s: not under %s: %w", path, dir, os.ErrNotExist)
	}
}

// argoAccessor reads Argo's protos from its module directory; the imports
// Argo's repository does not hold (google/api, k8s.io) come from braid's
// api/proto/third_party, which hack/protogen.sh vendors.
func argoAccessor(t *testing.T) func(string) (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/argoproj/argo-workflows/v4").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("locate Argo's module: %v", err)
	}
	argoDir := strings.TrimSpace(string(out))
	third := filepath.Join(braidProtoDir(), "third_party")
	return func(path string) (string, error) {
		if rest, ok := strings.CutPrefix(path, "github.com/argoproj/argo-workflows/"); ok {
			return filepath.Join(argoDir, rest), nil
		}
		if strings.HasPrefix(path, "pkg/") {
			return filepath.Join(argoDir, path), nil
		}
		return filepath.Join(third, path), nil
	}
}
