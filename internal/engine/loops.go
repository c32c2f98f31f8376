package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// iterationName is "<name>(<index>:<desc>)" (rule 5.2).
func iterationName(name string, i int, item v1alpha1.Item) string {
	desc := itemDesc(item)
	if strings.ContainsAny(desc, "()") {
		desc = noParens.Replace(desc)
	}
	return name + "(" + strconv.Itoa(i) + ":" + desc + ")"
}

// Read-only replacers.
var (
	noParens   = strings.NewReplacer("(", "", ")", "")
	unescapeHT = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
)

// itemDesc is the text of an item in an iteration name: a string as Argo's
// Item.String() gives it (JSON-escaped, without the quotes), a number or
// bool as written, a map as sorted key:value pairs, a list in Go's slice
// format.
func itemDesc(item v1alpha1.Item) string {
	switch item.Kind() {
	case v1alpha1.ItemMap:
		m, err := itemMap(item)
		if err != nil {
			return string(item.Value)
		}
		pairs := make([]string, 0, len(m))
		for k, v := range m {
			pairs = append(pairs, k+":"+itemText(v))
		}
		sort.Strings(pairs)
		return strings.Join(pairs, ",")
	case v1alpha1.ItemList:
		var list []json.RawMessage
		if err := json.Unmarshal(item.Value, &list); err != nil {
			return string(item.Value)
		}
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = itemText(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return itemText(item.Value)
}

// itemText is Argo's Item.String(): the JSON text, with the quotes of a
// string removed (escapes kept) and HTML escapes undone.
func itemText(raw json.RawMessage) string {
	s := string(raw)
	if !json.Valid(raw) {
		return s
	}
	if isSpaced(raw) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err == nil {
			s = buf.String()
		}
	}
	if len(s) >= 2 && s[0] == '"' {
		s = s[1 : len(s)-1]
	}
	if strings.Contains(s, `\u00`) {
		s = unescapeHT.Replace(s)
	}
	return s
}

// isSpaced reports whether JSON text may hold blanks outside strings (it is
// not compact).
func isSpaced(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			return true
		}
	}
	return false
}

func itemMap(item v1alpha1.Item) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	err := json.Unmarshal(item.Value, &m)
	return m, err
}

// itemVars are the loop variables of an item: item, and item.<k> for a map
// (rule 5.2).
func itemVars(v *vars, item v1alpha1.Item) {
	v.set("item", item.String())
	if item.Kind() != v1alpha1.ItemMap {
		return
	}
	m, err := itemMap(item)
	if err != nil {
		return
	}
	for k, val := range m {
		v.set("item."+k, itemValueText(val))
	}
}

// itemValueText is the text of a map item's value in {{item.k}}: a string
// unquoted, anything else as JSON.
func itemValueText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return v1alpha1.Item{Value: raw}.String()
}

// expandItem substitutes one item into a copy of a loop step, strictly
// (rule 5.1) unless its when is literally false.
func expandItem[T any](base *T, name, template string, item v1alpha1.Item, sv *vars) (*T, error) {
	iv := sv.r.newVars(nil)
	itemVars(iv, item)
	mode := expr.Strict
	if ok, err := sv.r.lim.Expression.EvalWhen(whenOf(base)); err == nil && !ok {
		mode = expr.Lenient
	}
	out, err := substitute(iv, base, mode)
	if err != nil {
		return nil, err
	}
	if out == base {
		c := *base
		out = &c
	}
	setCallName(out, name, template)
	return out, nil
}

func whenOf(v any) string {
	switch x := v.(type) {
	case *v1alpha1.WorkflowStep:
		return x.When
	case *v1alpha1.DAGTask:
		return x.When
	}
	return ""
}

func setCallName(v any, name, template string) {
	switch x := v.(type) {
	case *v1alpha1.WorkflowStep:
		x.Name, x.Template = name, template
	case *v1alpha1.DAGTask:
		x.Name, x.Template = name, template
	}
}

// loopIndex reads the index of an iteration name "x(3:...)"; names it
// cannot read sort last.
func loopIndex(name string) int {
	open := strings.LastIndexByte(name, '(')
	if open < 0 {
		return 1 << 30
	}
	rest := name[open+1:]
	if colon := strings.IndexByte(rest, ':'); colon >= 0 {
		rest = rest[:colon]
	}
	n, err := strconv.Atoi(rest)
	if err != nil {
		return 1 << 30
	}
	return n
}

// addAggregates adds the aggregated outputs of a loop's iterations
// (rule 5.6, trap 7): only Succeeded iterations with outputs, by loop index.
// What they add up to is bounded by max bytes (Limits.MaxParameterBytes);
// node names the loop's node in the error.
func addAggregates(dst expr.Scope, prefix string, iterations []v1alpha1.NodeStatus, node string, max int) error {
	var kept []v1alpha1.NodeStatus
	for _, n := range iterations {
		if n.NodeFlag == nil || (!n.NodeFlag.Hooked && !n.NodeFlag.Retried) {
			kept = append(kept, n)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	sort.SliceStable(kept, func(i, j int) bool { return loopIndex(kept[i].Name) < loopIndex(kept[j].Name) })
	params := []map[string]string{}
	values := map[string][]string{}
	results := []json.RawMessage{}
	size := 0
	for _, n := range kept {
		if n.Outputs == nil || n.Phase != v1alpha1.NodeSucceeded {
			continue
		}
		if n.Outputs.Result != nil {
			size += len(*n.Outputs.Result)
		}
		for _, p := range n.Outputs.Parameters {
			if p.Value != nil {
				size += len(*p.Value)
			}
		}
		if size > max {
			return &limitError{node: node, what: fmt.Sprintf("the outputs of its iterations (%s.outputs) add up to more than %d bytes", prefix, max),
				key: "maxParameterBytes", limit: max}
		}
		if len(n.Outputs.Parameters) > 0 {
			m := map[string]string{}
			for _, p := range n.Outputs.Parameters {
				val := ""
				if p.Value != nil {
					val = p.Value.String()
				}
				m[p.Name] = val
				values[p.Name] = append(values[p.Name], val)
			}
			params = append(params, m)
		}
		if n.Outputs.Result != nil {
			var raw json.RawMessage
			if err := json.Unmarshal([]byte(*n.Outputs.Result), &raw); err != nil {
				return fmt.Errorf("%s.outputs.result: %w", prefix, err)
			}
			results = append(results, raw)
		}
	}
	data, err := json.Marshal(results)
	if err != nil {
		return fmt.Errorf("%s.outputs.result: %w", prefix, err)
	}
	dst[prefix+".outputs.result"] = string(data)
	data, err = json.Marshal(params)
	if err != nil {
		return fmt.Errorf("%s.outputs.parameters: %w", prefix, err)
	}
	dst[prefix+".outputs.parameters"] = string(data)
	for name, list := range values {
		dst[prefix+".outputs.parameters."+name] = aggregateValues(list)
	}
	return nil
}

// aggregateValues is a JSON list of decoded values when every value is a
// JSON object or array, else a JSON list of strings.
func aggregateValues(list []string) string {
	decoded := make([]any, 0, len(list))
	for _, s := range list {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			decoded = nil
			break
		}
		switch v.(type) {
		case map[string]any, []any:
			decoded = append(decoded, v)
		default:
			decoded = nil
		}
		if decoded == nil {
			break
		}
	}
	var data []byte
	if decoded != nil {
		data, _ = json.Marshal(decoded)
	} else {
		data, _ = json.Marshal(list)
	}
	return string(data)
}

// itemsHaveTags reports whether some item holds a template tag.
func itemsHaveTags(items []v1alpha1.Item) bool {
	for _, it := range items {
		if bytes.Contains(it.Value, []byte("{{")) {
			return true
		}
	}
	return false
}
