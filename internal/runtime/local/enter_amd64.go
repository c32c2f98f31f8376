package local

import _ "embed"

// enterCode is the trampoline's machine code (enter.go), assembled from
// enter_amd64.asm.
//
//go:embed enter_amd64.bin
var enterCode []byte
