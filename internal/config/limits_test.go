package config

import (
	"strings"
	"testing"
	"time"

	"github.com/braidwf/braid/internal/engine"
)

// The engine keeps its own defaults (it must not import config): they must
// be the ones config.yaml documents.
func TestDefaultLimitsMatchEngine(t *testing.T) {
	d := DefaultLimits
	e := engine.Limits{}.WithDefaults()
	got := engine.Limits{MaxNodes: d.MaxNodes, MaxDepth: d.MaxDepth, MaxLoopItems: d.MaxLoopItems,
		MaxParameterBytes: d.MaxParameterBytes, MaxResultBytes: d.MaxResultBytes, MaxNodesPerPass: d.MaxNodesPerPass}
	if got != e {
		t.Errorf("config.DefaultLimits %+v, engine defaults %+v", got, e)
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name    string
		in      Limits
		want    Limits // after WithDefaults
		timeout time.Duration
		err     string // Check's error, "" for none
	}{
		{name: "zero takes the defaults", want: DefaultLimits, timeout: time.Second},
		{name: "set fields are kept", in: Limits{MaxNodes: 10, ExpressionTimeout: "250ms"},
			want:    func() Limits { l := DefaultLimits; l.MaxNodes, l.ExpressionTimeout = 10, "250ms"; return l }(),
			timeout: 250 * time.Millisecond},
		{name: "negative is refused", in: Limits{MaxLoopItems: -1}, err: "limits.maxLoopItems -1"},
		{name: "bad timeout is refused", in: Limits{ExpressionTimeout: "soon"}, err: `limits.expressionTimeout "soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.in.Check()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Check: %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if got := tt.in.WithDefaults(); got != tt.want {
				t.Errorf("WithDefaults %+v, want %+v", got, tt.want)
			}
			if got := tt.in.ExprTimeout(); got != tt.timeout {
				t.Errorf("ExprTimeout %v, want %v", got, tt.timeout)
			}
		})
	}
}
