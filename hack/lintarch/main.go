// Command lintarch checks the architecture rules that gofmt and go vet do
// not: which package may import which, and how large a file or a function
// may grow. Run it from the module root with `go run ./hack/lintarch` (make
// lint-arch). It prints one line per violation, file:line and what is wrong,
// and exits 1 when there is any; 2 when it cannot run.
//
// # Import rules
//
// The table in rules.go encodes the architecture notes (ARCHITECTURE.md,
// beside the repository): arrows point down only, cli -> app ->
// server/controller -> runtime/executor/store/artifact -> engine ->
// spec/expr -> pkg/apis. Each package of the module is governed by its most
// specific rule, which lists the module packages it may import, the imports
// it must not make (with the reason printed), and whether it may import a
// Kubernetes client library (k8s.io/client-go and the like; the API types
// under k8s.io/api and k8s.io/apimachinery are allowed everywhere, since
// pkg/apis is built on them). A package that no rule covers is a violation
// too, so a new package comes with its rule. Nothing but cmd/ and
// internal/cli imports internal/app, and nothing but cmd/ imports
// internal/cli.
//
// Test files: the files of an in-package test (package foo in foo's
// directory) are compiled into the package, so they follow its rule, plus
// the rule's testAllow list (the real dependencies its tests run against:
// the SQLite store, the local runtime) and the shared test helpers
// (internal/testutil, internal/store/storetest), which no other file may
// import. An external test package (package foo_test) is exempt: it is
// compiled as a package of its own, cannot create a cycle, and plays the
// part of an end-to-end or compatibility test that drives several layers
// together, like test/e2e (whose rule, test/..., lets it import anything
// but internal/app and internal/cli).
//
// # Size rules
//
// A non-test .go file that is not generated (it has the standard
// "// Code generated ... DO NOT EDIT." line) may have at most 800 lines, and
// each function or method in it at most 80, counted from the line of the
// func keyword to the line of the closing brace, both included.
//
// It checks the packages that `go list ./...` lists in the module, which
// leaves out test/compat and hack/oidc (modules of their own), testdata
// directories, and the UI sources under ui/; vendor and node_modules
// directories are skipped too.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Limits of the size rules.
const (
	maxFileLines = 800
	maxFuncLines = 80
)

func main() {
	n, err := run(".", os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lint-arch:", err)
		os.Exit(2)
	}
	if n > 0 {
		fmt.Fprintf(os.Stderr, "lint-arch: %d violation(s)\n", n)
		os.Exit(1)
	}
}

// pkgInfo is the part of `go list -json` that lintarch reads.
type pkgInfo struct {
	ImportPath     string
	Dir            string
	Module         *struct{ Path, Dir string }
	GoFiles        []string
	CgoFiles       []string
	TestGoFiles    []string
	XTestGoFiles   []string
	IgnoredGoFiles []string
}

// violation is one broken rule at a position.
type violation struct {
	file string // relative to the module root
	line int
	msg  string
}

// run checks the module rooted at dir, writes one line per violation to w
// and returns how many there are.
func run(dir string, w io.Writer) (int, error) {
	pkgs, err := goList(dir)
	if err != nil {
		return 0, err
	}
	var vs []violation
	for _, p := range pkgs {
		pv, err := checkPackage(p)
		if err != nil {
			return 0, err
		}
		vs = append(vs, pv...)
	}
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].file != vs[j].file {
			return vs[i].file < vs[j].file
		}
		return vs[i].line < vs[j].line
	})
	for _, v := range vs {
		fmt.Fprintf(w, "%s:%d: %s\n", v.file, v.line, v.msg)
	}
	return len(vs), nil
}

// goList returns the packages of the module rooted at dir, leaving out the
// excluded directories.
func goList(dir string) ([]pkgInfo, error) {
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		if p.Module == nil || excluded(relPkg(p)) {
			continue
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("go list in %s: no packages of a module", dir)
	}
	return pkgs, nil
}

// relPkg is the package's path relative to its module ("" for the root).
func relPkg(p pkgInfo) string {
	if p.ImportPath == p.Module.Path {
		return ""
	}
	return strings.TrimPrefix(p.ImportPath, p.Module.Path+"/")
}

// excluded reports whether a module-relative package path is out of scope.
func excluded(rel string) bool {
	if rel == "ui" || strings.HasPrefix(rel, "ui/") || rel == "test/compat" || strings.HasPrefix(rel, "test/compat/") {
		return true
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "vendor" || part == "node_modules" || part == "testdata" {
			return true
		}
	}
	return false
}

// fileKind says how a file takes part in the checks.
type fileKind int

const (
	prodFile  fileKind = iota // part of the package proper
	testFile                  // an in-package test file
	xtestFile                 // a file of the external test package
)

// checkPackage checks the imports and sizes of every file of p.
func checkPackage(p pkgInfo) ([]violation, error) {
	rel := relPkg(p)
	r, ok := ruleFor(rel)
	files := packageFiles(p)
	if !ok {
		first := filepath.Join(rel, "doc.go")
		if len(files) > 0 {
			first = filepath.Join(rel, files[0].name)
		}
		return []violation{{first, 1, fmt.Sprintf("package %s has no rule in hack/lintarch/rules.go: add one", rel)}}, nil
	}
	var vs []violation
	for _, f := range files {
		fv, err := checkFile(p, rel, r, f)
		if err != nil {
			return nil, err
		}
		vs = append(vs, fv...)
	}
	return vs, nil
}

// pkgFile is one file of a package and its kind.
type pkgFile struct {
	name string
	kind fileKind
}

// packageFiles lists p's files, including those that build constraints
// leave out of the current build (IgnoredGoFiles), sorted by kind.
func packageFiles(p pkgInfo) []pkgFile {
	var files []pkgFile
	add := func(names []string, kind fileKind) {
		for _, n := range names {
			files = append(files, pkgFile{n, kind})
		}
	}
	add(p.GoFiles, prodFile)
	add(p.CgoFiles, prodFile)
	add(p.TestGoFiles, testFile)
	add(p.XTestGoFiles, xtestFile)
	for _, n := range p.IgnoredGoFiles {
		kind := prodFile
		if strings.HasSuffix(n, "_test.go") {
			kind = testFile
			if strings.HasSuffix(pkgName(filepath.Join(p.Dir, n)), "_test") {
				kind = xtestFile
			}
		}
		files = append(files, pkgFile{n, kind})
	}
	return files
}

// pkgName returns the package clause of a file, or "" when it cannot be read.
func pkgName(path string) string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly)
	if err != nil {
		return ""
	}
	return f.Name.Name
}

// checkFile checks one file of the package rel, governed by r.
func checkFile(p pkgInfo, rel string, r rule, f pkgFile) ([]violation, error) {
	path := filepath.Join(p.Dir, f.name)
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	name := filepath.ToSlash(filepath.Join(rel, f.name))
	var vs []violation
	if f.kind != xtestFile {
		vs = append(vs, importViolations(fset, file, p.Module.Path, rel, r, f.kind == testFile, name)...)
	}
	if f.kind == prodFile && !ast.IsGenerated(file) {
		vs = append(vs, sizeViolations(fset, file, src, name)...)
	}
	return vs, nil
}

// importViolations checks the imports of one file of the package rel.
func importViolations(fset *token.FileSet, file *ast.File, mod, rel string, r rule, test bool, name string) []violation {
	var vs []violation
	for _, spec := range file.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		line := fset.Position(spec.Pos()).Line
		if !r.kube && isKubeClient(imp) {
			vs = append(vs, violation{name, line, fmt.Sprintf(
				"%s imports %s: only the Kubernetes backends and the wiring may use a Kubernetes client", rel, imp)})
			continue
		}
		target, ok := strings.CutPrefix(imp, mod+"/")
		if !ok || target == rel {
			continue
		}
		if why := checkImport(r, target, test); why != "" {
			vs = append(vs, violation{name, line, fmt.Sprintf("%s must not import %s: %s", rel, target, why)})
		}
	}
	return vs
}

// sizeViolations checks the length of a file and of its functions.
func sizeViolations(fset *token.FileSet, file *ast.File, src []byte, name string) []violation {
	var vs []violation
	lines := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	if lines > maxFileLines {
		vs = append(vs, violation{name, 1, fmt.Sprintf("file has %d lines (at most %d)", lines, maxFileLines)})
	}
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start := fset.Position(fd.Pos()).Line
		n := fset.Position(fd.Body.Rbrace).Line - start + 1
		if n > maxFuncLines {
			vs = append(vs, violation{name, start, fmt.Sprintf("func %s has %d lines (at most %d)", funcName(fd), n, maxFuncLines)})
		}
	}
	return vs
}

// funcName names a function or a method as "Name" or "(*T).Name".
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	star := ""
	if s, ok := typ.(*ast.StarExpr); ok {
		star, typ = "*", s.X
	}
	switch t := typ.(type) {
	case *ast.IndexExpr:
		typ = t.X
	case *ast.IndexListExpr:
		typ = t.X
	}
	recv := "?"
	if id, ok := typ.(*ast.Ident); ok {
		recv = id.Name
	}
	if star != "" {
		return "(" + star + recv + ")." + fd.Name.Name
	}
	return recv + "." + fd.Name.Name
}
