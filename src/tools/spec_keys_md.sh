#!/bin/sh
# checks/SPEC.md with its key table made from `gpugate list --spec-keys`
# (one key a line: path, type, help, tab-separated; src/list.c):
#   gpugate list --spec-keys | sh spec_keys_md.sh checks/SPEC.md > new.md
# The table replaces the lines between the BEGIN and END spec-keys markers;
# the rest of the file is copied as it is. `make spec-doc` rewrites SPEC.md,
# tests/integration/test_spec_reference.py fails when it is stale.
set -eu
spec=$1
keys=$(mktemp)
trap 'rm -f "$keys"' EXIT
# a table cell: '|' escaped (GitHub keeps \| literal in code spans too)
awk -F '\t' 'NF >= 3 {
	for (i = 1; i <= NF; i++) gsub(/\|/, "\\|", $i)
	printf "| `%s` | `%s` | %s |\n", $1, $2, $3
}' > "$keys"
[ -s "$keys" ] || { echo "spec_keys_md.sh: no keys on standard input" >&2; exit 1; }
grep -q '^<!-- BEGIN spec-keys' "$spec" || { echo "spec_keys_md.sh: $spec has no BEGIN spec-keys marker" >&2; exit 1; }
awk -v keys="$keys" '
/^<!-- BEGIN spec-keys/ {
	print
	print "| key | type | what it sets |"
	print "| --- | --- | --- |"
	while ((getline line < keys) > 0) print line
	skip = 1
	next
}
/^<!-- END spec-keys/ { skip = 0 }
!skip { print }' "$spec"
