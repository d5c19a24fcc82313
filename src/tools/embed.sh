#!/bin/sh
# Writes a C file that embeds files into the binary:
#   embed.sh TABLE NAME=FILE... > out.c
# gives `const struct embedded_file TABLE[]` with one entry per NAME.
set -eu
table=$1
shift
echo '#include "lib/embedded.h"'
i=0
for pair in "$@"; do
	file=${pair#*=}
	echo "static const unsigned char ${table}_${i}[] = {"
	od -An -v -tx1 "$file" | sed -e 's/ *$//' -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'
	echo '0x00 };'
	i=$((i + 1))
done
echo "const struct embedded_file ${table}[] = {"
i=0
for pair in "$@"; do
	name=${pair%%=*}
	file=${pair#*=}
	size=$(wc -c < "$file")
	echo "	{ \"$name\", ${table}_$i, $size },"
	i=$((i + 1))
done
echo '	{ 0, 0, 0 },'
echo '};'
