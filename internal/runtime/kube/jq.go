package kube

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/itchyny/gojq"
)

// parseJQ compiles a resource output parameter's valueFrom.jqFilter.
func parseJQ(filter string) (*gojq.Code, error) {
	q, err := gojq.Parse(filter)
	if err != nil {
		return nil, err
	}
	return gojq.Compile(q)
}

// evalJQ runs filter over obj as `jq -rc` does, which is how Argo reads a
// jqFilter: each result on a line of its own, a string as it is and
// anything else as compact JSON; the whole trimmed of surrounding space.
// A filter that yields nothing gives "".
func evalJQ(filter string, obj map[string]any) (string, error) {
	code, err := parseJQ(filter)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	iter := code.Run(normalizeJSON(obj))
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			return "", err
		}
		if s, isStr := v.(string); isStr {
			b.WriteString(s)
		} else {
			out, err := json.Marshal(v)
			if err != nil {
				return "", fmt.Errorf("result %v: %w", v, err)
			}
			b.Write(out)
		}
		b.WriteByte('\n')
	}
	return strings.TrimSpace(b.String()), nil
}

// normalizeJSON gives obj the types gojq accepts (an unstructured object
// holds int64, which gojq does not take): a round trip through JSON.
func normalizeJSON(obj map[string]any) any {
	data, err := json.Marshal(obj)
	if err != nil {
		return obj
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return obj
	}
	return v
}
