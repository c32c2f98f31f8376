package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/braidwf/braid/pkg/apis/v1alpha1"
)

// A loop is expanded lazily: its length is known from its source without
// building the items (Limits.MaxLoopItems is checked first), and an
// iteration's item, name and node ID are computed only when the walk
// reaches it. Iterations are created in index order, and a walk stops at the
// first one it may not create (parallelism, the pass's share of nodes, a
// shutdown), so a pass over a loop of 100,000 items with parallelism 2 costs
// the iterations that exist plus one.

// loopSource is the resolved source of a loop: withItems, withParam or
// withSequence.
type loopSource struct {
	items []v1alpha1.Item // withItems, or withParam's parsed list
	param string          // withParam's text (the cache key)
	seq   *seqRange
	n     int
}

// seqRange is a withSequence: n items, start, start+step, ... (rule 5.3).
type seqRange struct {
	start, step int64
	format      string
	key         string
}

// maxSequenceItem bounds the text of one withSequence item: a format such
// as %01000000d would otherwise make every iteration's name a megabyte.
const maxSequenceItem = 256

// newLoopSource checks a loop against the limits and prepares it without
// building its items (rules 5.1, 5.3). node names the step or task for
// messages. when is the loop's resolved condition: a withParam that is not a
// list, or a bad withSequence, is an error unless the loop does not run.
func (f *facts) newLoopSource(node string, withItems []v1alpha1.Item, withParam string, seq *v1alpha1.Sequence, when string) (loopSource, error) {
	max := f.lim.MaxLoopItems
	tooLong := func(kind string, n int) error {
		return &limitError{node: node, what: fmt.Sprintf("%s has %d items", kind, n), key: "maxLoopItems", limit: max}
	}
	switch {
	case len(withItems) > 0:
		if len(withItems) > max {
			return loopSource{}, tooLong("withItems", len(withItems))
		}
		return loopSource{items: withItems, n: len(withItems)}, nil
	case withParam != "":
		if len(withParam) > f.lim.MaxParameterBytes {
			return loopSource{}, &limitError{node: node, what: fmt.Sprintf("withParam value has %d bytes", len(withParam)),
				key: "maxParameterBytes", limit: f.lim.MaxParameterBytes}
		}
		items, err := parseItems(withParam, max)
		var limit *limitError
		if errors.As(err, &limit) {
			limit.node = node
			return loopSource{}, err
		}
		if err != nil {
			if run, werr := f.lim.Expression.EvalWhen(when); werr != nil || run {
				return loopSource{}, fmt.Errorf("withParam value could not be parsed as a JSON list: %s: %v", strings.TrimSpace(withParam), err)
			}
			return loopSource{}, nil
		}
		return loopSource{items: items, param: withParam, n: len(items)}, nil
	case seq != nil:
		s, n, err := parseSequence(seq, max)
		var limit *limitError
		if errors.As(err, &limit) {
			limit.node = node
			return loopSource{}, err
		}
		if err != nil {
			if run, werr := f.lim.Expression.EvalWhen(when); werr != nil || run {
				return loopSource{}, err
			}
			return loopSource{}, nil
		}
		return loopSource{seq: s, n: n}, nil
	}
	return loopSource{}, nil
}

// parseItems reads a JSON list one element at a time and stops past max
// elements, so a long list is refused before it is built.
func parseItems(text string, max int) ([]v1alpha1.Item, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil { // null: no items, as json.Unmarshal gives
		if _, err := dec.Token(); err == nil {
			return nil, errors.New("invalid character after top-level value")
		}
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		var items []v1alpha1.Item // not a list: json.Unmarshal says why, as Argo reports it
		if err := json.Unmarshal([]byte(text), &items); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("json: cannot unmarshal %v into a list", tok)
	}
	items := []v1alpha1.Item{}
	for dec.More() {
		if len(items) == max {
			return nil, &limitError{what: fmt.Sprintf("withParam has more than %d items", max), key: "maxLoopItems", limit: max}
		}
		var it v1alpha1.Item
		if err := dec.Decode(&it); err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("invalid character after the top-level list")
	}
	return items, nil
}

// parseSequence reads a withSequence (rule 5.3): inclusive, counting down
// when start > end, each item fmt.Sprintf(format or "%d", i). The length is
// computed without overflow and checked against max before anything else.
func parseSequence(seq *v1alpha1.Sequence, max int) (*seqRange, int, error) {
	var start, end int64
	var err error
	if seq.Start != nil {
		if start, err = seqInt(seq.Start); err != nil {
			return nil, 0, err
		}
	}
	tooLong := func(n string) error {
		return &limitError{what: "withSequence has " + n + " items", key: "maxLoopItems", limit: max}
	}
	switch {
	case seq.End != nil:
		if end, err = seqInt(seq.End); err != nil {
			return nil, 0, err
		}
	case seq.Count != nil:
		count, err := seqInt(seq.Count)
		if err != nil {
			return nil, 0, err
		}
		if count == 0 {
			return nil, 0, nil
		}
		if count > int64(max) || count < -int64(max) {
			return nil, 0, tooLong(strconv.FormatInt(count, 10))
		}
		if (count > 0 && start > math.MaxInt64-count) || (count < 0 && start < math.MinInt64+2-count) {
			return nil, 0, errors.New("withSequence start and count overflow")
		}
		end = start + count - 1
	default:
		return nil, 0, errors.New("neither end nor count was specified in withSequence")
	}
	s := &seqRange{start: start, step: 1, format: "%d"}
	if seq.Format != "" {
		s.format = seq.Format
	}
	span := uint64(end) - uint64(start)
	if start > end {
		s.step, span = -1, uint64(start)-uint64(end)
	}
	if span >= uint64(max) {
		return nil, 0, tooLong(strconv.FormatUint(span, 10) + "+1")
	}
	s.key = fmt.Sprintf("%d\x00%d\x00%d\x00%s", start, end, span, s.format)
	return s, int(span) + 1, nil
}

func seqInt(v *intstr.IntOrString) (int64, error) {
	if v.Type == intstr.Int {
		return int64(v.IntValue()), nil
	}
	return strconv.ParseInt(strings.TrimSpace(v.StrVal), 10, 64)
}

// item returns item k of the loop.
func (s *loopSource) item(k int) (v1alpha1.Item, error) {
	if s.seq == nil {
		return s.items[k], nil
	}
	text := fmt.Sprintf(s.seq.format, s.seq.start+int64(k)*s.seq.step)
	if len(text) > maxSequenceItem {
		return v1alpha1.Item{}, fmt.Errorf("withSequence item %d has %d characters, more than %d (format %q)", k, len(text), maxSequenceItem, s.seq.format)
	}
	return v1alpha1.NewItem(text)
}

// same reports whether the source was computed from these loop fields.
func (s *loopSource) same(withItems []v1alpha1.Item, withParam string, seq *v1alpha1.Sequence) bool {
	switch {
	case len(withItems) > 0:
		if s.seq != nil || s.param != "" || len(s.items) != len(withItems) {
			return false
		}
		if len(withItems) > 0 && &s.items[0] == &withItems[0] {
			return true
		}
		for i := range withItems {
			if !bytes.Equal(s.items[i].Value, withItems[i].Value) {
				return false
			}
		}
		return true
	case withParam != "":
		return s.param == withParam
	case seq != nil:
		if s.seq == nil {
			return false
		}
		t, _, err := parseSequence(seq, math.MaxInt)
		return err == nil && t != nil && t.key == s.seq.key
	}
	return false
}

// loopEntry is the expansion of one loop: its source, and for the
// iterations reached so far, each one's short name, full node name and node
// ID. A Prepared keeps it across passes while the source does not change.
type loopEntry struct {
	src    loopSource
	parent string // the parent node's name
	name   string // the step's or task's name
	short  []string
	full   []string
	ids    []string
	err    error // an iteration's item could not be built
}

// len is the number of iterations.
func (e *loopEntry) len() int { return e.src.n }

// at computes the names and IDs of the iterations up to k, in order.
func (e *loopEntry) at(f *facts, k int) error {
	for len(e.ids) <= k {
		if e.err != nil {
			return e.err
		}
		i := len(e.ids)
		item, err := e.src.item(i)
		if err != nil {
			e.err = err
			return err
		}
		short := iterationName(e.name, i, item)
		full := e.parent + "." + short
		e.short, e.full, e.ids = append(e.short, short), append(e.full, full), append(e.ids, f.id(full))
	}
	return nil
}

// expandLoop returns the expansion of a loop of the node parent (a step
// group or a TaskGroup's DAG): from the cache when the loop's source has not
// changed, else checked against the limits and prepared anew.
func (f *facts) expandLoop(parentName, name string, withItems []v1alpha1.Item, withParam string, seq *v1alpha1.Sequence, when string) (*loopEntry, error) {
	ck := parentName + "\x00" + name
	if e, ok := f.loops[ck]; ok && e.src.same(withItems, withParam, seq) {
		return e, nil
	}
	src, err := f.newLoopSource(parentName+"."+name, withItems, withParam, seq, when)
	if err != nil {
		return nil, err
	}
	e := &loopEntry{src: src, parent: parentName, name: name}
	if f.loops == nil {
		f.loops = map[string]*loopEntry{}
	}
	f.loops[ck] = e
	return e, nil
}
