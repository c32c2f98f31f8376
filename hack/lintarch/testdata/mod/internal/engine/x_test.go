package engine_test

import (
	"testing"

	"example.com/lintarchdata/internal/server"
)

var _ = server.X

func TestY(t *testing.T) {}
