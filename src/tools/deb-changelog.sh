#!/bin/sh
# Writes the Debian changelog `make deb` puts in its build copy: one entry for
# the Makefile's VERSION (the only place the version is written), signed by
# debian/control's Maintainer, dated by SOURCE_DATE_EPOCH, else the last
# commit, else now. The release notes are CHANGELOG.md.
# usage: deb-changelog.sh VERSION CONTROL_FILE
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VERSION CONTROL_FILE" >&2; exit 2; }
version=$1 control=$2
maintainer=$(sed -n 's/^Maintainer: *//p' "$control")
[ -n "$maintainer" ] || { echo "$0: no Maintainer in $control" >&2; exit 1; }
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
cat <<END
gpugate ($version) unstable; urgency=medium

  * Release $version: see /usr/share/doc/gpugate/CHANGELOG.md.

 -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")
END
