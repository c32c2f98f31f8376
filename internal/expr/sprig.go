package expr

import (
	"encoding/base32"
	"encoding/base64"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	sprig "github.com/Masterminds/sprig/v3"
)

// sprigOriginals is Sprig v3's function map without "env" and "expandenv",
// which would leak the controller's environment (Argo removes the same two,
// util/expr/env/env.go), and without "getHostByName": a network lookup has
// no place in an expression.
var sprigOriginals = sync.OnceValue(func() map[string]any {
	m := sprig.GenericFuncMap()
	delete(m, "env")
	delete(m, "expandenv")
	delete(m, "getHostByName")
	return m
})

// sprigTypes are the types of the Sprig functions, for the guard's check of
// the number of arguments.
var sprigTypes = sync.OnceValue(func() map[string]reflect.Type {
	out := make(map[string]reflect.Type)
	for name, fn := range sprigOriginals() {
		out[name] = reflect.TypeOf(fn)
	}
	return out
})

// sprigFuncs is the "sprig" of expressions: each Sprig function guarded by
// guardSprig. It is built once and only read afterwards.
var sprigFuncs = sync.OnceValue(func() map[string]any {
	out := make(map[string]any)
	for name, fn := range sprigOriginals() {
		out[name] = guardSprig(name, fn)
	}
	return out
})

// sprigRule says how a Sprig function is kept within the budget. A function
// without a rule builds at most a few times its arguments' size; what it
// returns is charged after the call (builtSize).
type sprigRule struct {
	// bound is the bytes the function builds from its arguments, an upper
	// bound computed and charged before the call.
	bound func(a []reflect.Value, limit int64) int64
	// regexp says the first argument is a regular expression, whose
	// compiled size must fit before the call.
	regexp bool
	// refuse is why the function is never run: its time cannot be bounded.
	refuse string
	// limit is the index of a "how many at most" argument (regexFindAll,
	// regexSplit) that is lowered to what the budget leaves, at 48 bytes
	// for each string.
	limit int
}

func boundOf(f func(a []reflect.Value, limit int64) int64) sprigRule { return sprigRule{bound: f} }

var keygen = "it generates an RSA or DSA key, which may take longer than limits.expressionTimeout"

// sprigRules lists the Sprig functions that can build much more than their
// arguments, or take long.
var sprigRules = map[string]sprigRule{
	"repeat":    boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(vInt(a, 0), int64(len(vString(a, 1)))) }),
	"until":     boundOf(func(a []reflect.Value, limit int64) int64 { return rangeSize(0, vInt(a, 0), 1) }),
	"untilStep": boundOf(func(a []reflect.Value, limit int64) int64 { return rangeSize(vInt(a, 0), vInt(a, 1), vInt(a, 2)) }),
	"seq":       boundOf(func(a []reflect.Value, _ int64) int64 { return seqSize(a) }),
	"join":      boundOf(func(a []reflect.Value, limit int64) int64 { return joinSize(a[1], len(vString(a, 0)), limit) }),
	"cat":       boundOf(func(a []reflect.Value, limit int64) int64 { return joinSize(a[0], 1, limit) }),
	"quote":     boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(4, joinSize(a[0], 3, limit)) }),
	"squote":    boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(4, joinSize(a[0], 3, limit)) }),
	"indent":    boundOf(func(a []reflect.Value, limit int64) int64 { return indentSize(vInt(a, 0), vString(a, 1)) }),
	"nindent":   boundOf(func(a []reflect.Value, limit int64) int64 { return indentSize(vInt(a, 0), vString(a, 1)) + 1 }),
	"replace": boundOf(func(a []reflect.Value, limit int64) int64 {
		return replacedSize(vString(a, 2), vString(a, 0), vString(a, 1), -1)
	}),
	"wrap": boundOf(func(a []reflect.Value, limit int64) int64 { return wrapSize(vInt(a, 0), 2, vString(a, 1)) }),
	"wrapWith": boundOf(func(a []reflect.Value, limit int64) int64 {
		return wrapSize(vInt(a, 0), len(vString(a, 1)), vString(a, 2))
	}),
	"b64enc": boundOf(func(a []reflect.Value, limit int64) int64 {
		return int64(base64.StdEncoding.EncodedLen(len(vString(a, 0))))
	}),
	"b32enc": boundOf(func(a []reflect.Value, limit int64) int64 {
		return int64(base32.StdEncoding.EncodedLen(len(vString(a, 0))))
	}),
	"randAlpha":    boundOf(func(a []reflect.Value, _ int64) int64 { return randSize(a) }),
	"randAlphaNum": boundOf(func(a []reflect.Value, _ int64) int64 { return randSize(a) }),
	"randAscii":    boundOf(func(a []reflect.Value, _ int64) int64 { return randSize(a) }),
	"randNumeric":  boundOf(func(a []reflect.Value, _ int64) int64 { return randSize(a) }),
	"randBytes":    boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(3, vInt(a, 0)) }),
	// scrypt with N=32768, r=8 takes 32 MiB.
	"derivePassword":     boundOf(func([]reflect.Value, int64) int64 { return 33 << 20 }),
	"encryptAES":         boundOf(func(a []reflect.Value, limit int64) int64 { return satAdd(satMul(2, int64(len(vString(a, 1)))), 128) }),
	"toJson":             boundOf(valueSize(jsonSize)),
	"toRawJson":          boundOf(valueSize(jsonSize)),
	"mustToJson":         boundOf(valueSize(jsonSize)),
	"mustToRawJson":      boundOf(valueSize(jsonSize)),
	"toPrettyJson":       boundOf(valueSize(prettySize)),
	"mustToPrettyJson":   boundOf(valueSize(prettySize)),
	"toString":           boundOf(valueSize(textSize)),
	"toStrings":          boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(2, joinSize(a[0], 16, limit)) }),
	"sortAlpha":          boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(2, joinSize(a[0], 16, limit)) }),
	"fromJson":           boundOf(func(a []reflect.Value, limit int64) int64 { return decodedSize(vString(a, 0)) }),
	"mustFromJson":       boundOf(func(a []reflect.Value, limit int64) int64 { return decodedSize(vString(a, 0)) }),
	"deepCopy":           boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(2, valueSize(memorySize)(a, limit)) }),
	"mustDeepCopy":       boundOf(func(a []reflect.Value, limit int64) int64 { return satMul(2, valueSize(memorySize)(a, limit)) }),
	"merge":              boundOf(allArgsSize),
	"mustMerge":          boundOf(allArgsSize),
	"mergeOverwrite":     boundOf(allArgsSize),
	"mustMergeOverwrite": boundOf(allArgsSize),
	"splitList":          boundOf(func(a []reflect.Value, limit int64) int64 { return 24 + 16*pieces(vString(a, 1), vString(a, 0), -1) }),
	"split":              boundOf(func(a []reflect.Value, limit int64) int64 { return 48 + 96*pieces(vString(a, 1), vString(a, 0), -1) }),
	"splitn": boundOf(func(a []reflect.Value, limit int64) int64 {
		return 48 + 96*pieces(vString(a, 2), vString(a, 0), vInt(a, 1))
	}),
	"chunk":                  boundOf(func(a []reflect.Value, limit int64) int64 { return 64 + 64*int64(vLen(a, 1)) }),
	"mustChunk":              boundOf(func(a []reflect.Value, limit int64) int64 { return 64 + 64*int64(vLen(a, 1)) }),
	"regexMatch":             {regexp: true},
	"mustRegexMatch":         {regexp: true},
	"regexFind":              {regexp: true},
	"mustRegexFind":          {regexp: true},
	"regexFindAll":           {regexp: true, limit: 2},
	"mustRegexFindAll":       {regexp: true, limit: 2},
	"regexSplit":             {regexp: true, limit: 2},
	"mustRegexSplit":         {regexp: true, limit: 2},
	"regexReplaceAll":        {regexp: true, bound: func(a []reflect.Value, limit int64) int64 { return regexReplacedSize(a, true) }},
	"mustRegexReplaceAll":    {regexp: true, bound: func(a []reflect.Value, limit int64) int64 { return regexReplacedSize(a, true) }},
	"regexReplaceAllLiteral": {regexp: true, bound: func(a []reflect.Value, limit int64) int64 { return regexReplacedSize(a, false) }},
	"mustRegexReplaceAllLiteral": {regexp: true,
		bound: func(a []reflect.Value, limit int64) int64 { return regexReplacedSize(a, false) }},
	"genCA":             {refuse: keygen},
	"genSelfSignedCert": {refuse: keygen},
	"genSignedCert":     {refuse: keygen},
}

// guardSprig wraps a Sprig function: the wrapper takes the meter as first
// parameter (the guard adds it to every sprig.name(...) call) and returns an
// error as last result, which expr-lang's VM reports.
func guardSprig(name string, fn any) any {
	v := reflect.ValueOf(fn)
	t := v.Type()
	in := []reflect.Type{meterType}
	for i := range t.NumIn() {
		in = append(in, t.In(i))
	}
	out := []reflect.Type{t.Out(0), errorType}
	wt := reflect.FuncOf(in, out, t.IsVariadic())
	rule := sprigRules[name]
	if name == "genPrivateKey" {
		rule.bound = func(a []reflect.Value, limit int64) int64 {
			if k := vString(a, 0); k == "rsa" || k == "dsa" || k == "" {
				return -1
			}
			return 64 << 10
		}
	}
	what := "sprig." + name
	return reflect.MakeFunc(wt, func(args []reflect.Value) []reflect.Value {
		result, err := callSprig(what, v, rule, args)
		if err != nil {
			return []reflect.Value{reflect.Zero(out[0]), reflect.ValueOf(&err).Elem()}
		}
		return []reflect.Value{result, reflect.Zero(errorType)}
	}).Interface()
}

func callSprig(what string, fn reflect.Value, rule sprigRule, args []reflect.Value) (reflect.Value, error) {
	var m *meter
	if args[0].IsValid() && !args[0].IsNil() {
		m = args[0].Interface().(*meter)
	}
	if err := m.tick(); err != nil {
		return reflect.Value{}, err
	}
	args = args[1:]
	if rule.refuse != "" {
		return reflect.Value{}, m.exceeded("%s: %s", what, rule.refuse)
	}
	if rule.regexp {
		if err := m.fits(what+" compiling its regular expression", regexpSize(vString(args, 0))); err != nil {
			return reflect.Value{}, err
		}
	}
	if rule.bound != nil {
		n := rule.bound(args, m.room())
		if n < 0 {
			return reflect.Value{}, m.exceeded("%s: %s", what, keygen)
		}
		if err := m.chargeValue(what, n); err != nil {
			return reflect.Value{}, err
		}
	}
	room := int64(-1)
	if rule.limit > 0 {
		room = (m.budget.Bytes - m.used) / 48
		if n := args[rule.limit].Int(); n < 0 || n > room {
			args = append([]reflect.Value(nil), args...)
			args[rule.limit] = reflect.ValueOf(int(room + 1))
		}
	}
	var out []reflect.Value
	if fn.Type().IsVariadic() {
		out = fn.CallSlice(args)
	} else {
		out = fn.Call(args)
	}
	if len(out) == 2 && !out[1].IsNil() {
		return reflect.Value{}, out[1].Interface().(error)
	}
	switch {
	case rule.limit > 0:
		if n := int64(out[0].Len()); n > room {
			return reflect.Value{}, m.exceeded("%s builds more than %d strings, more than %d bytes (limits.maxExpressionBytes)",
				what, room, m.budget.Bytes)
		}
		return out[0], m.charge(what, 48*int64(out[0].Len()))
	case rule.bound == nil:
		if n := builtSize(out[0], args); n > 0 {
			return out[0], m.chargeValue(what, n)
		}
		return out[0], m.tick()
	}
	return out[0], nil
}

// builtSize is the memory of a function's result that is new: strings that
// are not part of a string argument, and the top level of lists and maps
// that are not an argument.
func builtSize(v reflect.Value, args []reflect.Value) int64 {
	if v.Kind() == reflect.Interface {
		if v.IsNil() {
			return 0
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		return newString(v.String(), args)
	case reflect.Slice:
		if isArgument(v, args) {
			return 0
		}
		n := 24 + int64(v.Len())*int64(v.Type().Elem().Size())
		for i := range v.Len() {
			if e := v.Index(i); e.Kind() == reflect.String || e.Kind() == reflect.Interface && e.Elem().Kind() == reflect.String {
				n = satAdd(n, builtSize(e, args))
			}
		}
		return n
	case reflect.Map:
		if isArgument(v, args) {
			return 0
		}
		return 48 + 64*int64(v.Len())
	}
	return 0
}

// newString is len(s), or 0 when s lies inside a string argument.
func newString(s string, args []reflect.Value) int64 {
	if len(s) == 0 {
		return 0
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, a := range flatArgs(args) {
		if a.Kind() == reflect.Interface {
			a = a.Elem()
		}
		if a.Kind() != reflect.String || a.Len() == 0 {
			continue
		}
		as := a.String()
		q := uintptr(unsafe.Pointer(unsafe.StringData(as)))
		if p >= q && p+uintptr(len(s)) <= q+uintptr(len(as)) {
			return 0
		}
	}
	return int64(len(s))
}

// isArgument reports whether the list or map v is one of the arguments.
func isArgument(v reflect.Value, args []reflect.Value) bool {
	for _, a := range flatArgs(args) {
		if a.Kind() == reflect.Interface {
			a = a.Elem()
		}
		if a.Kind() == v.Kind() && a.Pointer() == v.Pointer() {
			return true
		}
	}
	return false
}

// flatArgs returns the arguments with a variadic last one spread, when
// there are few.
func flatArgs(args []reflect.Value) []reflect.Value {
	if len(args) == 0 {
		return nil
	}
	last := args[len(args)-1]
	if last.Kind() != reflect.Slice || last.Len() > 16 {
		return args
	}
	out := append([]reflect.Value(nil), args...)
	for i := range last.Len() {
		out = append(out, last.Index(i))
	}
	return out
}

func vString(a []reflect.Value, i int) string {
	if i < len(a) && a[i].Kind() == reflect.String {
		return a[i].String()
	}
	return ""
}

func vInt(a []reflect.Value, i int) int64 {
	if i < len(a) && a[i].IsValid() && a[i].CanInterface() {
		return argInt([]any{a[i].Interface()}, 0)
	}
	return 0
}

func vLen(a []reflect.Value, i int) int {
	if i < len(a) && a[i].IsValid() && a[i].CanInterface() {
		return argLen([]any{a[i].Interface()}, 0)
	}
	return 0
}

// valueSize returns a bound of the size of the first argument as kind.
func valueSize(kind sizeKind) func(a []reflect.Value, limit int64) int64 {
	return func(a []reflect.Value, limit int64) int64 {
		if len(a) == 0 || !a[0].IsValid() {
			return 0
		}
		n, err := sizeOf(a[0].Interface(), kind, limit)
		if err != nil {
			return maxBound
		}
		return n
	}
}

func allArgsSize(a []reflect.Value, limit int64) int64 {
	var n int64
	for _, v := range a {
		if v.IsValid() && v.CanInterface() {
			s, err := sizeOf(v.Interface(), memorySize, limit)
			if err != nil {
				return maxBound
			}
			n = satAdd(n, s)
		}
	}
	return n
}

// joinSize bounds joining the elements of a list as text with sep bytes
// between them.
func joinSize(list reflect.Value, sep int, limit int64) int64 {
	if !list.IsValid() || !list.CanInterface() {
		return 0
	}
	n, err := sizeOf(list.Interface(), textSize, limit)
	if err != nil {
		return maxBound
	}
	count := int64(vLen([]reflect.Value{list}, 0))
	return satAdd(satMul(2, n), satMul(count, int64(sep)))
}

func rangeSize(start, stop, step int64) int64 {
	if step == 0 {
		return 24
	}
	span := stop - start
	if span < 0 {
		span = -span
	}
	if step < 0 {
		step = -step
	}
	return satAdd(24, satMul(8, span/step+1))
}

// seqSize bounds sprig.seq, which prints the numbers of a range.
func seqSize(a []reflect.Value) int64 {
	if len(a) == 0 || a[0].Kind() != reflect.Slice {
		return 0
	}
	p := a[0]
	n := func(i int) int64 { return p.Index(i).Int() }
	var count int64
	switch p.Len() {
	case 1:
		count = rangeSize(1, n(0), 1)
	case 2:
		count = rangeSize(n(0), n(1), 1)
	case 3:
		count = rangeSize(n(0), n(2), n(1))
	}
	return satMul(3, count)
}

func indentSize(spaces int64, s string) int64 {
	lines := int64(strings.Count(s, "\n")) + 2
	return satAdd(int64(len(s)), satMul(lines, spaces))
}

func wrapSize(width int64, sep int, s string) int64 {
	width = max(width, 1)
	return satAdd(int64(len(s)), satMul(int64(len(s))/width+1, int64(max(sep, 2))))
}

func randSize(a []reflect.Value) int64 { return satMul(6, vInt(a, 0)) }

// regexReplacedSize bounds regexReplaceAll(regex, s, repl): every match
// (at most len(s)+1) is replaced by repl, and each $reference expands to
// part of its match.
func regexReplacedSize(a []reflect.Value, expand bool) int64 {
	s, repl := int64(len(vString(a, 1))), vString(a, 2)
	refs := int64(0)
	if expand {
		refs = int64(strings.Count(repl, "$"))
	}
	return satAdd(satMul(s, 1+refs), satMul(s+1, int64(len(repl))))
}
