#!/bin/sh
# Writes gpugate(1) on stdout: src/man/gpugate.1.in with its version and date
# filled in and the `.\" SPEC KEYS` line replaced by one tagged paragraph per
# line of `gpugate list --spec-keys` (KEY<TAB>TYPE<TAB>HELP).
# usage: build.sh TEMPLATE VERSION DATE KEYS_FILE
set -eu
[ $# -eq 4 ] || { echo "usage: $0 TEMPLATE VERSION DATE KEYS_FILE" >&2; exit 2; }
template=$1 version=$2 date=$3 keys=$4
[ -s "$keys" ] || { echo "$0: $keys is empty: no spec keys to document" >&2; exit 1; }

# roff text from plain text (groff_man(7)): a backslash is \e, a hyphen is \-
# (an ASCII minus, so options copy and paste), and a line must not start with
# a control character (line_start).
awk -F '\t' -v version="$version" -v date="$date" -v keys="$keys" '
function roff(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	return s
}
# at most 80 bytes a line (mandoc -T lint), broken between words
function wrap(text,   w, n, i, out) {
	n = split(text, w, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		if (out != "" && length(out) + 1 + length(roff(w[i])) > 78) {
			print line_start(out)
			out = ""
		}
		out = out == "" ? roff(w[i]) : out " " roff(w[i])
	}
	if (out != "")
		print line_start(out)
}
function line_start(s) {
	if (s ~ /^[.'\'']/)
		s = "\\&" s
	return s
}
/^\.\\" SPEC KEYS$/ {
	n = 0
	while ((getline line < keys) > 0) {
		if (split(line, f, "\t") != 3) {
			print "build.sh: not KEY<TAB>TYPE<TAB>HELP: " line > "/dev/stderr"
			exit 1
		}
		print ".TP"
		print ".BR \"" roff(f[1]) "\" \" (" roff(f[2]) ")\""
		wrap(f[3])
		n++
	}
	close(keys)
	if (n == 0)
		exit 1
	next
}
{
	gsub(/@VERSION@/, version)
	gsub(/@DATE@/, date)
	print
}' "$template"
