package printer

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// outputArtifactValue is what `argo get` prints after a workflow output
// artifact's name: the String() of its location, for the location kinds the
// CLI knows (S3, Git, HTTP, Artifactory, HDFS, Raw, OSS, GCS, Azure, in that
// order of preference). ok is false for any other artifact, which the CLI
// leaves out.
//
// Argo's location types have no String of their own: the method comes from
// the protobuf code generator, which writes "&Type{Field:value,...,}" with
// fields in protobuf tag order, "nil" for a nil pointer, "*v" for a pointer
// to a scalar, and the Kubernetes types qualified as "v1.". protoString
// reproduces that form from braid's types.
func outputArtifactValue(a *v1alpha1.Artifact) (value string, ok bool) {
	var loc any
	switch {
	case a.S3 != nil:
		loc = a.S3
	case a.Git != nil:
		loc = a.Git
	case a.HTTP != nil:
		loc = a.HTTP
	case a.Artifactory != nil:
		loc = a.Artifactory
	case a.HDFS != nil:
		loc = a.HDFS
	case a.Raw != nil:
		loc = a.Raw
	case a.OSS != nil:
		loc = a.OSS
	case a.GCS != nil:
		loc = a.GCS
	case a.Azure != nil:
		loc = a.Azure
	case a.File != nil: // braid's local repository
		loc = a.File
	default:
		return "", false
	}
	return protoString(reflect.ValueOf(loc)), true
}

// apiPkg is the import path of braid's API types; other struct types met
// while rendering (the Kubernetes selectors) render with their own String.
var apiPkg = reflect.TypeOf(v1alpha1.Artifact{}).PkgPath()

// lastFields lists, per API type, the fields whose protobuf tag numbers put
// them after the fields that follow them in the Go struct.
var lastFields = map[string][]string{
	"S3Bucket": {"SessionTokenSecret"},
}

// protoString renders a pointer to an API struct.
func protoString(v reflect.Value) string {
	if v.IsNil() {
		return "nil"
	}
	return "&" + protoBody(v.Elem())
}

// protoBody renders an API struct value: "Type{Field:value,...,}".
func protoBody(v reflect.Value) string {
	t := v.Type()
	var order, last []int
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		isLast := false
		for _, name := range lastFields[t.Name()] {
			isLast = isLast || name == f.Name
		}
		if isLast {
			last = append(last, i)
		} else {
			order = append(order, i)
		}
	}
	var b strings.Builder
	b.WriteString(t.Name() + "{")
	for _, i := range append(order, last...) {
		b.WriteString(t.Field(i).Name + ":" + protoField(v.Field(i)) + ",")
	}
	b.WriteString("}")
	return b.String()
}

func protoField(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "nil"
		}
		elem := v.Type().Elem()
		if elem.Kind() != reflect.Struct {
			return fmt.Sprintf("*%v", v.Elem().Interface())
		}
		if elem.PkgPath() == apiPkg {
			return protoString(v)
		}
		return qualify(fmt.Sprintf("%v", v.Interface()), elem.Name())
	case reflect.Struct:
		if v.Type().PkgPath() == apiPkg {
			return protoBody(v)
		}
		p := reflect.New(v.Type())
		p.Elem().Set(v)
		return strings.Replace(qualify(fmt.Sprintf("%v", p.Interface()), v.Type().Name()), "&", "", 1)
	case reflect.Slice:
		if elem := v.Type().Elem(); elem.Kind() == reflect.Struct && elem.PkgPath() == apiPkg {
			var b strings.Builder
			b.WriteString("[]" + elem.Name() + "{")
			for i := 0; i < v.Len(); i++ {
				b.WriteString(protoBody(v.Index(i)) + ",")
			}
			b.WriteString("}")
			return b.String()
		}
		return fmt.Sprintf("%v", v.Interface())
	default:
		return fmt.Sprintf("%v", v.Interface())
	}
}

// qualify prefixes the first mention of a Kubernetes type name with its
// package name, as the generated code does.
func qualify(s, name string) string {
	return strings.Replace(s, name, "v1."+name, 1)
}
