package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// AnyString is a parameter value. Argo accepts a string, a number or a
// boolean where a parameter value is expected; AnyString keeps all three as
// their string form and always writes a JSON string.
//
// Numbers are rendered as Argo renders them, as the shortest decimal form of
// their float64 value (1.50 -> "1.5", 1e3 -> "1000"), except that an integer
// literal keeps all its digits even beyond float64 precision.
//
// +kubebuilder:validation:Type=""
// +kubebuilder:pruning:PreserveUnknownFields
type AnyString string

// AnyStringPtr returns a pointer to an AnyString holding s.
func AnyStringPtr(s string) *AnyString {
	v := AnyString(s)
	return &v
}

// String returns the value.
func (s AnyString) String() string { return string(s) }

// MarshalJSON writes the value as a JSON string.
func (s AnyString) MarshalJSON() ([]byte, error) {
	return json.Marshal(string(s))
}

// UnmarshalJSON accepts a JSON string, number or boolean. A JSON null leaves
// the value unchanged; objects and arrays are rejected.
func (s *AnyString) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		*s = AnyString(v)
	case bool:
		*s = AnyString(strconv.FormatBool(v))
	case json.Number:
		*s = AnyString(formatNumber(v))
	default:
		return fmt.Errorf("a parameter value must be a string, number or boolean, not %s", bytes.TrimSpace(data))
	}
	return nil
}

// formatNumber renders a JSON number: integer literals keep their digits,
// other numbers use the shortest decimal form of their float64 value.
func formatNumber(n json.Number) string {
	if isIntegerLiteral(string(n)) {
		return string(n)
	}
	f, err := n.Float64()
	if err != nil {
		return string(n)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func isIntegerLiteral(s string) bool {
	if s == "" || s == "-" {
		return false
	}
	if s[0] == '-' {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
