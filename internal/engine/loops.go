package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/internal/expr"
	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// loopItems lists the items of withItems, withParam or withSequence
// (rules 5.1, 5.3). when is the loop's resolved, unexpanded condition: a
// withParam that is not a list is an error unless it is literally false.
func loopItems(withItems []v1alpha1.Item, withParam string, seq *v1alpha1.Sequence, when string) ([]v1alpha1.Item, error) {
	switch {
	case len(withItems) > 0:
		return withItems, nil
	case withParam != "":
		var items []v1alpha1.Item
		if err := json.Unmarshal([]byte(withParam), &items); err != nil {
			if run, werr := expr.EvalWhen(when); werr != nil || run {
				return nil, fmt.Errorf("withParam value could not be parsed as a JSON list: %s: %v", strings.TrimSpace(withParam), err)
			}
			return nil, nil
		}
		return items, nil
	case seq != nil:
		items, err := expandSequence(seq)
		if err != nil {
			if run, werr := expr.EvalWhen(when); werr != nil || run {
				return nil, err
			}
			return nil, nil
		}
		return items, nil
	}
	return nil, nil
}

// expandSequence lists a withSequence (rule 5.3): inclusive, counting down
// when start > end, each item the string fmt.Sprintf(format or "%d", i).
func expandSequence(seq *v1alpha1.Sequence) ([]v1alpha1.Item, error) {
	var start, end int
	var err error
	if seq.Start != nil {
		if start, err = seqInt(seq.Start); err != nil {
			return nil, err
		}
	}
	switch {
	case seq.End != nil:
		if end, err = seqInt(seq.End); err != nil {
			return nil, err
		}
	case seq.Count != nil:
		count, err := seqInt(seq.Count)
		if err != nil {
			return nil, err
		}
		if count == 0 {
			return []v1alpha1.Item{}, nil
		}
		end = start + count - 1
	default:
		return nil, errors.New("neither end nor count was specified in withSequence")
	}
	format := "%d"
	if seq.Format != "" {
		format = seq.Format
	}
	step := 1
	if start > end {
		step = -1
	}
	n := (end-start)*step + 1
	if n > maxSequence {
		return nil, fmt.Errorf("withSequence of %d items is longer than %d", n, maxSequence)
	}
	items := make([]v1alpha1.Item, 0, n)
	for i := start; ; i += step {
		item, err := v1alpha1.NewItem(fmt.Sprintf(format, i))
		if err != nil {
			return nil, err
		}
		items = append(items, item)
		if i == end {
			break
		}
	}
	return items, nil
}

// maxSequence bounds a withSequence so that no input exhausts memory.
const maxSequence = 1 << 20

func seqInt(v *intstr.IntOrString) (int, error) {
	if v.Type == intstr.Int {
		return v.IntValue(), nil
	}
	return strconv.Atoi(strings.TrimSpace(v.StrVal))
}

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

// loopEntry is the expansion of one loop: each iteration's short name,
// full node name and node ID, for the loop source it was computed from.
type loopEntry struct {
	key   string
	short []string
	full  []string
	ids   []string
}

// loopKey is the resolved source of a loop, as text: iterations are
// computed again only when it changes.
func loopKey(withItems []v1alpha1.Item, withParam string, seq *v1alpha1.Sequence) string {
	var b strings.Builder
	switch {
	case len(withItems) > 0:
		b.WriteString("i")
		for _, it := range withItems {
			b.WriteByte(0)
			b.Write(it.Value)
		}
	case withParam != "":
		b.WriteString("p\x00" + withParam)
	case seq != nil:
		b.WriteString("s")
		for _, v := range []*intstr.IntOrString{seq.Start, seq.End, seq.Count} {
			b.WriteByte(0)
			if v != nil {
				b.WriteString(v.String())
			}
		}
		b.WriteString("\x00" + seq.Format)
	}
	return b.String()
}

// expandLoop returns the iterations of a loop of the node parent (a step
// group or a TaskGroup's DAG): from the cache when the loop's source has not
// changed, else computed from its items. items is nil on a cache hit.
func (r *run) expandLoop(parentName, name string, withItems []v1alpha1.Item, withParam string, seq *v1alpha1.Sequence, when string) (*loopEntry, []v1alpha1.Item, error) {
	key := loopKey(withItems, withParam, seq)
	ck := parentName + "\x00" + name
	if e, ok := r.loops[ck]; ok && e.key == key {
		return e, nil, nil
	}
	items, err := loopItems(withItems, withParam, seq, when)
	if err != nil {
		return nil, nil, err
	}
	e := &loopEntry{key: key, short: make([]string, len(items)), full: make([]string, len(items)), ids: make([]string, len(items))}
	for i, item := range items {
		e.short[i] = iterationName(name, i, item)
		e.full[i] = parentName + "." + e.short[i]
		e.ids[i] = r.id(e.full[i])
	}
	if r.loops == nil {
		r.loops = map[string]*loopEntry{}
	}
	r.loops[ck] = e
	return e, items, nil
}

// expandStepLoop expands a resolved loop step of a group into its
// iterations (the direct children of the group, rule 1.7). An empty loop
// becomes a Skipped placeholder. Iterations that exist are not substituted
// again unless their hooks need the item.
func (r *run) expandStepLoop(g v1alpha1.NodeStatus, childName string, s *v1alpha1.WorkflowStep, tc tmplCtx, sv *vars, template string) ([]stepChild, error) {
	e, items, err := r.expandLoop(g.Name, s.Name, s.WithItems, s.WithParam, s.WithSequence, s.When)
	if err != nil {
		return nil, err
	}
	if len(e.ids) == 0 {
		if _, ok := r.byName(childName); !ok {
			n, err := r.placeholder(childName, stepHolder(s), tc.scope, g.BoundaryID, v1alpha1.NodeSkipped, "Skipped, empty params")
			if err != nil {
				return nil, err
			}
			r.addChild(g.ID, n.ID)
		}
		return nil, nil
	}
	base := *s
	base.WithItems, base.WithParam, base.WithSequence = nil, "", nil
	needsItem := s.OnExit != "" || len(s.Hooks) > 0
	out := make([]stepChild, len(e.ids))
	for i := range e.ids {
		_, exists := r.nodes[e.ids[i]]
		c := stepChild{name: e.full[i], short: e.short[i], id: e.ids[i], step: &base, exists: exists}
		if !exists || needsItem {
			if items == nil {
				if items, err = loopItems(s.WithItems, s.WithParam, s.WithSequence, s.When); err != nil {
					return nil, err
				}
			}
			if c.step, err = expandItem(&base, e.short[i], template, items[i], sv); err != nil {
				return nil, err
			}
		}
		out[i] = c
	}
	return out, nil
}

// expandItem substitutes one item into a copy of a loop step, strictly
// (rule 5.1) unless its when is literally false.
func expandItem[T any](base *T, name, template string, item v1alpha1.Item, sv *vars) (*T, error) {
	iv := sv.r.newVars(nil)
	itemVars(iv, item)
	mode := expr.Strict
	if ok, err := expr.EvalWhen(whenOf(base)); err == nil && !ok {
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
func addAggregates(dst expr.Scope, prefix string, iterations []v1alpha1.NodeStatus) error {
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
	for _, n := range kept {
		if n.Outputs == nil || n.Phase != v1alpha1.NodeSucceeded {
			continue
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
