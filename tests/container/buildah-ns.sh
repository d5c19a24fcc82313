#!/bin/sh
# Runs "$@" (a buildah command) in the private mount namespace `unshare -m`
# gave this script, so that buildah leaves nothing on this machine outside
# the test's own folders (tests/container/images.py passes --root, --runroot,
# TMPDIR and CONTAINERS_REGISTRIES_CONF there):
#   /etc /usr     read-only: it reads its defaults, writes none
#   /run /var/lib /var/cache /var/tmp   empty tmpfs: as root, containers/image
#                 writes its blob-info cache under /var/lib/containers/cache
#                 and short-name aliases under /var/cache/containers, and
#                 buildah its lock folder /run/libpod; all of it vanishes
#                 with this namespace, as do the overlay mounts of the build.
# A resolv.conf that links into /run (systemd-resolved's stub) is put back in
# the new /run, so the builds' apt-get still resolves deb.debian.org.
set -eu
resolv=$(readlink -f /etc/resolv.conf || true)
case "$resolv" in
/run/*) saved=$(cat "$resolv") ;;
*) resolv="" ;;
esac
for d in /etc /usr; do
	mount --bind "$d" "$d"
	mount -o remount,bind,ro "$d"
done
for d in /run /var/lib /var/cache /var/tmp; do
	mount -t tmpfs -o mode=1777,size=64m tmpfs "$d"
done
if [ -n "$resolv" ]; then
	mkdir -p "$(dirname "$resolv")"
	printf '%s\n' "$saved" > "$resolv"
fi
exec "$@"
