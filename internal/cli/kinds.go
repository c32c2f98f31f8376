package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/braidwf/braid/internal/spec"
)

// Helpers shared by the commands of the other kinds: template.go,
// clustertemplate.go, cron.go, archive.go and apply.go.

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

// humanTimestamp renders a header time as the argo CLI does:
// "Mon Nov 30 09:00:00 +0000 (15 minutes ago)". A zero time is shown as
// the zero time, as in argo.
func humanTimestamp(t, now time.Time) string {
	t = t.In(now.Location())
	return t.Format("Mon Jan 02 15:04:05 -0700") + " (" + relativeTime(t, now) + ")"
}

// relativeTime says how far t is from now: "now" within a second, else
// "15 minutes ago" or "2 hours from now".
func relativeTime(t, now time.Time) string {
	d, label := now.Sub(t), "ago"
	if t.After(now) {
		d, label = t.Sub(now), "from now"
	}
	if d < time.Second {
		return "now"
	}
	return spanPhrase(d) + " " + label
}

// spanPhrase names a non-negative span in its largest unit, in the steps of
// the argo CLI's relative times ("1 minute", "3 hours", "2 weeks"; a month
// is 30 days and a year 360).
func spanPhrase(d time.Duration) string {
	const day = 24 * time.Hour
	steps := []struct {
		below      time.Duration
		unit       time.Duration
		one, other string
	}{
		{time.Minute, time.Second, "1 second", "seconds"},
		{time.Hour, time.Minute, "1 minute", "minutes"},
		{day, time.Hour, "1 hour", "hours"},
		{7 * day, day, "1 day", "days"},
		{30 * day, 7 * day, "1 week", "weeks"},
		{360 * day, 30 * day, "1 month", "months"},
	}
	for _, st := range steps {
		if d < st.below {
			if d < 2*st.unit {
				return st.one
			}
			return strconv.FormatInt(int64(d/st.unit), 10) + " " + st.other
		}
	}
	const year = 360 * day
	switch {
	case d < 18*30*day:
		return "1 year"
	case d < 2*year:
		return "2 years"
	case d < 37*year:
		return strconv.FormatInt(int64(d/year), 10) + " years"
	}
	return "a long while"
}

// kindSuffix is how kubectl names a kind of the argoproj.io group in its
// messages: "workflowtemplate.argoproj.io".
func kindSuffix(kind string) string {
	return strings.ToLower(kind) + ".argoproj.io"
}
