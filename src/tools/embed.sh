#!/bin/sh
# Writes a C file that embeds files into the binary:
#   embed.sh [--yaml] TABLE NAME=FILE... > out.c
# gives `const struct embedded_file TABLE[]` with one entry per NAME.
# --yaml: the files are YAML (the built-in profiles), whose full-line
# comments are embedded as empty lines: the parser then scans a tenth of the
# bytes at every start (the profiles are mostly comments), the line numbers
# stay those of the file, and the document is the same
# (tests/unit/test_profiles_embedded.c compares them).
set -eu
yaml=false
if [ "$1" = --yaml ]; then
	yaml=true
	shift
fi
table=$1
shift
content() {
	if $yaml; then
		sed 's/^[[:space:]]*#.*$//' "$1"
	else
		cat "$1"
	fi
}
echo '#include "lib/embedded.h"'
i=0
for pair in "$@"; do
	file=${pair#*=}
	echo "static const unsigned char ${table}_${i}[] = {"
	content "$file" | od -An -v -tx1 | sed -e 's/ *$//' -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	echo '0x00 };'
	i=$((i + 1))
done
echo "const struct embedded_file ${table}[] = {"
i=0
for pair in "$@"; do
	name=${pair%%=*}
	file=${pair#*=}
	size=$(content "$file" | wc -c)
	echo "	{ \"$name\", ${table}_$i, $size },"
	i=$((i + 1))
done
echo '	{ 0, 0, 0 },'
echo '};'
