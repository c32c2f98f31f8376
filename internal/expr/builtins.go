package expr

import (
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/expr-lang/expr/builtin"
)

// builtinBounds are the expr-lang builtins that build a value the VM does
// not count, each with the bytes it builds from its arguments, an upper
// bound computed before the call. They replace the builtins of the same
// name (guardedBuiltins); the others build nothing, or lists the VM counts
// (concat, flatten, reverse, sort), or values of a fixed size (now, date).
var builtinBounds = map[string]func(args []any, limit int64) (int64, error){
	"repeat": func(a []any, limit int64) (int64, error) {
		return satMul(int64(len(argString(a, 0))), argInt(a, 1)), nil
	},
	"join": func(a []any, limit int64) (int64, error) {
		n, err := sizeOf(argAny(a, 0), textSize, limit)
		return satAdd(n, satMul(int64(len(argString(a, 1))), int64(argLen(a, 0)))), err
	},
	"replace": func(a []any, limit int64) (int64, error) {
		most := int64(-1)
		if len(a) > 3 {
			most = argInt(a, 3)
		}
		return replacedSize(argString(a, 0), argString(a, 1), argString(a, 2), most), nil
	},
	"split":      splitBound,
	"flatten":    func(a []any, limit int64) (int64, error) { return sizeOf(argAny(a, 0), memorySize, limit) },
	"splitAfter": splitBound,
	"upper":      func(a []any, limit int64) (int64, error) { return int64(len(argString(a, 0))), nil },
	"lower":      func(a []any, limit int64) (int64, error) { return int64(len(argString(a, 0))), nil },
	"string":     func(a []any, limit int64) (int64, error) { return sizeOf(argAny(a, 0), textSize, limit) },
	"toJSON":     func(a []any, limit int64) (int64, error) { return sizeOf(argAny(a, 0), prettySize, limit) },
	"fromJSON":   func(a []any, limit int64) (int64, error) { return decodedSize(argString(a, 0)), nil },
	"toBase64": func(a []any, limit int64) (int64, error) {
		return int64(base64.StdEncoding.EncodedLen(len(argString(a, 0)))), nil
	},
	"fromBase64": func(a []any, limit int64) (int64, error) { return int64(len(argString(a, 0))), nil },
	"keys":       func(a []any, limit int64) (int64, error) { return 24 + 16*int64(argLen(a, 0)), nil },
	"values":     func(a []any, limit int64) (int64, error) { return 24 + 16*int64(argLen(a, 0)), nil },
	"uniq":       func(a []any, limit int64) (int64, error) { return 24 + 64*int64(argLen(a, 0)), nil },
	"toPairs":    func(a []any, limit int64) (int64, error) { return 24 + 80*int64(argLen(a, 0)), nil },
	"fromPairs":  func(a []any, limit int64) (int64, error) { return 48 + 80*int64(argLen(a, 0)), nil },
}

// maxBound stops a size walk: any bound above it is over every budget.
const maxBound = 1 << 40

// guardedBuiltins are the replacements of the builtins of builtinBounds.
// Each takes the meter as first argument (the guard adds it), charges its
// bound, and calls expr-lang's own builtin. Their types are the builtin's,
// with and without the meter, so that the type check before the patch
// passes too.
var guardedBuiltins = sync.OnceValue(func() map[string]*builtin.Function {
	out := make(map[string]*builtin.Function, len(builtinBounds))
	for _, orig := range builtin.Builtins {
		bound, ok := builtinBounds[orig.Name]
		if !ok {
			continue
		}
		f := &builtin.Function{Name: orig.Name, Func: guardBuiltin(orig, bound)}
		for _, t := range orig.Types {
			f.Types = append(f.Types, withMeterParam(t))
		}
		f.Types = append(f.Types, orig.Types...)
		if orig.Validate != nil {
			validate := orig.Validate
			f.Validate = func(args []reflect.Type) (reflect.Type, error) {
				if len(args) > 0 && args[0] == meterType {
					args = args[1:]
				}
				return validate(args)
			}
		}
		out[orig.Name] = f
	}
	return out
})

func guardBuiltin(orig *builtin.Function, bound func([]any, int64) (int64, error)) func(args ...any) (any, error) {
	return func(args ...any) (any, error) {
		m, args, err := meterOf(args)
		if err != nil {
			return nil, err
		}
		n, err := bound(args, m.room())
		if err != nil {
			return nil, m.exceeded("%s: its argument %v", orig.Name, err)
		}
		if err := m.chargeValue(orig.Name, n); err != nil {
			return nil, err
		}
		v, err := callBuiltin(orig, args)
		if s, ok := v.(string); ok && int64(len(s)) > n {
			// upper and lower may grow a string with runes that change
			// length; charge the difference.
			if err := m.charge(orig.Name, int64(len(s))-n); err != nil {
				return nil, err
			}
		}
		return v, err
	}
}

func callBuiltin(f *builtin.Function, args []any) (any, error) {
	switch {
	case f.Func != nil:
		return f.Func(args...)
	case f.Safe != nil:
		v, _, err := f.Safe(args...)
		return v, err
	case f.Fast != nil && len(args) == 1:
		return f.Fast(args[0]), nil
	}
	return nil, fmt.Errorf("invalid number of arguments for %s (got %d)", f.Name, len(args))
}

// withMeterParam returns function type t with the meter as first parameter.
func withMeterParam(t reflect.Type) reflect.Type {
	in := []reflect.Type{meterType}
	for i := range t.NumIn() {
		in = append(in, t.In(i))
	}
	out := make([]reflect.Type, t.NumOut())
	for i := range out {
		out[i] = t.Out(i)
	}
	return reflect.FuncOf(in, out, t.IsVariadic())
}

func splitBound(a []any, _ int64) (int64, error) {
	limit := int64(-1)
	if len(a) > 2 {
		limit = argInt(a, 2)
	}
	return 24 + 16*pieces(argString(a, 0), argString(a, 1), limit), nil
}

// pieces is how many strings strings.SplitN(s, sep, limit) gives.
func pieces(s, sep string, limit int64) int64 {
	var n int64
	if sep == "" {
		n = int64(utf8.RuneCountInString(s))
	} else {
		n = int64(strings.Count(s, sep)) + 1
	}
	if limit >= 0 && limit < n {
		n = limit
	}
	return n
}

// replacedSize bounds strings.Replace(s, old, new, limit).
func replacedSize(s, old, new string, limit int64) int64 {
	grow := int64(len(new) - len(old))
	if grow <= 0 {
		return int64(len(s))
	}
	var count int64
	if old == "" {
		count = int64(utf8.RuneCountInString(s)) + 1
	} else {
		count = int64(strings.Count(s, old))
	}
	if limit >= 0 && limit < count {
		count = limit
	}
	return satAdd(int64(len(s)), satMul(count, grow))
}

func argAny(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return nil
}

func argString(a []any, i int) string {
	s, _ := argAny(a, i).(string)
	return s
}

// argInt is an integer argument; anything else counts as 0.
func argInt(a []any, i int) int64 {
	v := reflect.ValueOf(argAny(a, i))
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(min(v.Uint(), 1<<62))
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		if f > 1<<62 {
			return 1 << 62
		}
		if f < -(1 << 62) {
			return -(1 << 62)
		}
		return int64(f)
	}
	return 0
}

// argLen is the length of a list, map or string argument.
func argLen(a []any, i int) int {
	v := reflect.ValueOf(argAny(a, i))
	switch v.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return v.Len()
	}
	return 0
}
