package spec

import (
	"fmt"
	"strings"
	"testing"
)

// bigWorkflow is a Workflow of n one-line container templates, in JSON, as
// the server hands a create body to Load: 45,000 of them fill the 3 MiB a
// request may have.
func bigWorkflow(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"apiVersion":"argoproj.io/v1alpha1","kind":"Workflow","metadata":{"generateName":"many-"},"spec":{"entrypoint":"t0","templates":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"t%d","container":{"image":"busybox","command":["true"]}}`, i)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkLoadBig loads and validates the largest workflow a create
// request can carry. Run with -benchmem: its allocations bound the memory
// a create takes in the server.
func BenchmarkLoadBig(b *testing.B) {
	data := bigWorkflow(45_000)
	b.SetBytes(int64(len(data)))
	b.Run("Load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Load("big.json", data, Strict); err != nil {
				b.Fatal(err)
			}
		}
	})
	docs, err := Load("big.json", data, Strict)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs, _ := Validate(docs[0], nil).Split(); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
}
