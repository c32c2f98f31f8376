package expr

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/evilmonkeyinc/jsonpath"
	"github.com/expr-lang/expr/builtin"
)

// withFunctions returns a copy of env with the helper functions of rule 0.2
// added. They replace any variable of the same name, as in Argo v4
// (util/expr/env/env.go):
//   - asInt and asFloat are expr-lang's own int() and float() builtins, which
//     Argo aliases: asInt('3') is 3, asInt('x') fails;
//   - jsonpath(json, path) decodes the JSON text and queries it;
//   - toJson(v) is the JSON encoding of v;
//   - sprig is Sprig v3's function map without env and expandenv, each
//     function guarded (sprig.go).
//
// m, the meter of the evaluation, is added too: the guarded functions take
// it as first argument, and jsonpath and toJson charge it.
func withFunctions(env map[string]any, m *meter) map[string]any {
	out := make(map[string]any, len(env)+6)
	for k, v := range env {
		out[k] = v
	}
	out["asInt"] = builtin.Int
	out["asFloat"] = builtin.Float
	out["jsonpath"] = func(jsonText, path string) (any, error) {
		if err := m.fits("jsonpath", decodedSize(jsonText)); err != nil {
			return nil, err
		}
		v, err := jsonPath(jsonText, path)
		if err != nil {
			return nil, err
		}
		return v, m.charge("jsonpath", builtSize(reflect.ValueOf(v), nil))
	}
	out["toJson"] = func(v any) (string, error) {
		n, err := sizeOf(v, jsonSize, m.room())
		if err != nil {
			return "", m.exceeded("toJson: its argument %v", err)
		}
		if err := m.charge("toJson", n); err != nil {
			return "", err
		}
		return toJSON(v)
	}
	out["sprig"] = sprigFuncs()
	out[meterName] = m
	return out
}

// toJSON is the expression helper toJson: the JSON encoding of v.
func toJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("toJson: %w", err)
	}
	return string(b), nil
}

// jsonPath is the expression helper jsonpath(json, path). It decodes the JSON
// text and queries it with github.com/evilmonkeyinc/jsonpath, the library
// Argo v4 uses, so results match Argo's: a definite path gives a single value
// ("$.a" is 1), a wildcard, slice or filter gives a list ("$.a[0:1]" is the
// first element only, "$.a[?(@.n == 'x')].v" is a list).
func jsonPath(jsonText, path string) (result any, err error) {
	var doc any
	if err := json.Unmarshal([]byte(jsonText), &doc); err != nil {
		return nil, fmt.Errorf("jsonpath: the document is not JSON: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, fmt.Errorf("jsonpath %q: %v", path, r)
		}
	}()
	result, err = jsonpath.Query(path, doc)
	if err != nil {
		return nil, fmt.Errorf("jsonpath %q: %w", path, err)
	}
	return result, nil
}
