package webhook

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestReadBody(t *testing.T) {
	tests := []struct {
		name    string
		size    int
		wantErr error
	}{
		{"empty", 0, nil},
		{"small", 42, nil},
		{"exactly the limit", MaxBodyBytes, nil},
		{"one byte over the limit", MaxBodyBytes + 1, ErrBodyTooLarge},
		{"far over the limit", 3 * MaxBodyBytes, ErrBodyTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := bytes.Repeat([]byte("x"), tt.size)
			r := httptest.NewRequest(http.MethodPost, "/api/v1/events/ns/d", bytes.NewReader(want))
			got, err := ReadBody(r)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadBody() error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("ReadBody() returned %d bytes, want %d", len(got), len(want))
			}
			again, err := io.ReadAll(r.Body)
			if err != nil {
				t.Fatalf("reading restored body: %v", err)
			}
			if !bytes.Equal(again, want) {
				t.Errorf("restored body has %d bytes, want %d", len(again), len(want))
			}
		})
	}
}

func TestReadBodyErrorMessage(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(make([]byte, MaxBodyBytes+1)))
	_, err := ReadBody(r)
	if err == nil || err.Error() != "request body is larger than 2097152 bytes" {
		t.Errorf("ReadBody() error = %v, want %q", err, "request body is larger than 2097152 bytes")
	}
}

func TestReadBodyNil(t *testing.T) {
	r := &http.Request{Method: http.MethodPost}
	got, err := ReadBody(r)
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadBody() = (%q, %v), want empty and no error", got, err)
	}
	if r.Body == nil {
		t.Error("r.Body is still nil, want http.NoBody")
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestReadBodyReadError(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", failingReader{})
	if _, err := ReadBody(r); err == nil || errors.Is(err, ErrBodyTooLarge) {
		t.Errorf("ReadBody() error = %v, want a read error", err)
	}
}
