#!/usr/bin/env bash
# Lints Argo's example corpus with the built binary and prints the counts.
set -euo pipefail
bin=${1:-bin/braid}
dir=${2:-../shared/conformance}
if [ ! -d "$dir/examples" ]; then
  echo "conformance: $dir/examples not found; set BRAID_CONFORMANCE_DIR" >&2
  exit 1
fi
files=$(find "$dir/examples" -name '*.yaml' -o -name '*.yml' -o -name '*.json' | wc -l)
set +e
"$bin" lint -o json "$dir/examples" >/tmp/braid-conformance.json
code=$?
set -e
python3 - "$files" /tmp/braid-conformance.json <<'PY'
import json, sys
files, report = int(sys.argv[1]), json.load(open(sys.argv[2]))
bad = {e["file"] for e in report["errors"]}
print(f"files: {files}  accepted: {files - len(bad)}  rejected: {len(bad)}")
print(f"objects linted: {len(report['objects'])}  skipped (not Argo kinds): {len(report['skipped'])}")
for s in report["skipped"]:
    print(f"  skipped {s['kind']} {s['name']} in {s['file']}")
for e in report["errors"]:
    print("  error:", e)
PY
exit $code
