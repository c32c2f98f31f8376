package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/braidwf/braid/internal/printer"
	"github.com/braidwf/braid/internal/spec"
)

// Helpers shared by the commands of the other kinds: template.go,
// clustertemplate.go, cron.go, archive.go and apply.go (the verbs they
// share are in kindcmd.go).

// loadDocuments reads the Argo objects of the files and directories
// ("-": standard input), with errors that name the file and the line.
// Documents of other kinds have a nil Object and say why in Skipped.
func loadDocuments(s streams, paths []string, strict bool) ([]*spec.Document, error) {
	mode := spec.Strict
	if !strict {
		mode = spec.Lenient
	}
	files, err := spec.SpecFiles(paths)
	if err != nil {
		return nil, err
	}
	var out []*spec.Document
	for _, file := range files {
		var docs []*spec.Document
		if file == "-" {
			data, rerr := io.ReadAll(s.in)
			if rerr != nil {
				return nil, fmt.Errorf("read standard input: %w", rerr)
			}
			docs, err = spec.Load("stdin", data, mode)
		} else {
			docs, err = spec.LoadFile(file, mode)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	return out, nil
}

// loadKind reads the objects of one kind from the files; a file without
// any is an error, as in argo ("no WorkflowTemplate found").
func loadKind[T any](s streams, files []string, strict bool, kind string) ([]T, error) {
	var out []T
	for _, file := range files {
		docs, err := loadDocuments(s, []string{file}, strict)
		if err != nil {
			return nil, err
		}
		n := len(out)
		for _, d := range docs {
			if o, ok := d.Object.(T); ok {
				out = append(out, o)
			}
		}
		if len(out) == n {
			return nil, fmt.Errorf("%s: no %s found", file, kind)
		}
	}
	return out, nil
}

// writeIndentedJSON writes v as JSON indented by four spaces, as the argo
// CLI prints single objects.
func writeIndentedJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

// newTable is the tabwriter of the argo CLI's tables: three spaces between
// columns.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
}

// humanTimestamp renders a header time as the argo CLI does, in now's
// time zone: "Mon Nov 30 09:00:00 +0000 (15 minutes ago)".
func humanTimestamp(t, now time.Time) string {
	return printer.Timestamp(t.In(now.Location()), now)
}

// kindSuffix is how kubectl names a kind of the argoproj.io group in its
// messages: "workflowtemplate.argoproj.io".
func kindSuffix(kind string) string {
	return strings.ToLower(kind) + ".argoproj.io"
}
