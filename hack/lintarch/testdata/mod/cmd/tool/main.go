// Command tool may import the wiring.
package main

import "example.com/lintarchdata/internal/app"

func main() { app.Main() }
