#!/usr/bin/env bash
# Runs the built binary the way a user does and checks exit codes and output.
set -euo pipefail
bin=${1:-bin/braid}
cd "$(dirname "$0")/.."
fail() { echo "cli-smoke: $*" >&2; exit 1; }

"$bin" version --short | grep -q '^braid: ' || fail "version --short"
"$bin" lint examples/ >/dev/null || fail "lint of examples/ should pass"
out=$("$bin" lint -o json examples/hello-world.yaml) || fail "lint -o json should pass"
grep -q '"errors": \[\]' <<<"$out" || fail "lint -o json should report no errors: $out"

bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
out=$("$bin" run --data-dir "$bad/home" examples/hello-world.yaml) || fail "run of hello-world should succeed: $out"
grep -q 'Status: *Succeeded' <<<"$out" || fail "run should print the final status: $out"
phase=$("$bin" run --data-dir "$bad/home" -o json examples/diamond.yaml 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"]["phase"])')
[ "$phase" = Succeeded ] || fail "run -o json of diamond: phase $phase"
cat >"$bad/bad.yaml" <<'YAML'
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: bad-
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - name: a
        template: missing
YAML
set +e
out=$("$bin" lint "$bad/bad.yaml" 2>&1); code=$?
set -e
[ "$code" -eq 1 ] || fail "lint of a bad spec should exit 1, got $code: $out"
grep -q 'spec.templates\[0\].steps\[0\]\[0\].template: "missing" not found' <<<"$out" || fail "unexpected message: $out"
# Direct mode: with no server, submit stores the workflow and list/get read it.
name=$(BRAID_HOME="$bad/direct" ARGO_SERVER= BRAID_SERVER= "$bin" submit examples/hello-world.yaml -o name 2>/dev/null) || fail "direct submit should pass"
BRAID_HOME="$bad/direct" ARGO_SERVER= BRAID_SERVER= "$bin" list -o name | grep -qx "$name" || fail "direct list should show $name"
BRAID_HOME="$bad/direct" ARGO_SERVER= BRAID_SERVER= "$bin" get "$name" | grep -q 'Status: *Pending' || fail "direct get of $name"
echo "cli-smoke: ok"
