#!/bin/sh
# Runs "$@" inside ROOTFS the way `docker run` and then Docker's HEALTHCHECK
# would, in the private mount and pid namespaces `unshare` gave this script
# (test_healthcheck_rootfs.py starts it; it is pid 1 here, and every mount
# vanishes with it). What it sets up, as Docker does:
#   /proc        a fresh procfs of this pid namespace
#   /dev         a tmpfs with the basic nodes and /dev/shm, plus (when
#                VIDEO_GID is set) the GPU nodes `--device /dev/dri` copies:
#                real char devices 226:0 and 226:128 with the host's GIDs
#   /dev/dri/by-path  bind-mounted from FIX/by-path (`-v /dev/dri/by-path:...`)
#                only when BY_PATH=1: Docker never creates it by itself
#   /sys         FIX/sys, a sysfs-shaped tree for one Intel GPU, read-only;
#                without FIX/sys an empty read-only tmpfs (a host with no GPU)
#   HF_TARGET    a tmpfs seeded from FIX/hf-seed (`-v ~/.cache/huggingface:...`)
#   STATUS_OVERRIDE  when set, bind-mounted over var/lib/dpkg/status (an image
#                whose driver stack is broken, without touching the rootfs)
# Then the command runs as RUN_UID:RUN_GID with RUN_GROUPS (the image's USER
# and --group-add). Its output goes to FIX/out; FIX/result gets
# "EXIT_CODE NANOSECONDS"; FIX/hf-before and FIX/hf-after list the HF cache.
set -eu
R=$ROOTFS

mount -t proc -o nosuid,nodev,noexec proc "$R/proc"

mount -t tmpfs -o nosuid,mode=755,size=65536k tmpfs "$R/dev"
node() { # name mode major minor gid
	mknod -m "$2" "$R/dev/$1" c "$3" "$4"
	chown "0:$5" "$R/dev/$1"
}
node null 666 1 3 0
node zero 666 1 5 0
node full 666 1 7 0
node random 666 1 8 0
node urandom 666 1 9 0
node tty 666 5 0 0
mkdir -m 1777 "$R/dev/shm"
mount -t tmpfs -o nosuid,nodev,noexec,mode=1777,size=65536k shm "$R/dev/shm"
if [ -n "${VIDEO_GID:-}" ]; then
	mkdir -m 755 "$R/dev/dri"
	node dri/card0 660 226 0 "$VIDEO_GID"
	node dri/renderD128 660 226 128 "$RENDER_GID"
	if [ "$BY_PATH" = 1 ]; then
		mkdir "$R/dev/dri/by-path"
		mount --bind "$FIX/by-path" "$R/dev/dri/by-path"
	fi
fi

if [ -d "$FIX/sys" ]; then
	mount --bind "$FIX/sys" "$R/sys"
	mount -o remount,bind,ro "$R/sys"
else
	mount -t tmpfs -o ro,size=16k,mode=555 nosys "$R/sys"
fi

mount -t tmpfs -o size=16m,mode=755 hf "$FIX/hf"
cp -a "$FIX/hf-seed/." "$FIX/hf/"
chown -R "$RUN_UID:$RUN_GID" "$FIX/hf"
mount --bind "$FIX/hf" "$R$HF_TARGET"

if [ -n "${STATUS_OVERRIDE:-}" ]; then
	mount --bind -o ro "$STATUS_OVERRIDE" "$R/var/lib/dpkg/status"
fi

list_hf() { (cd "$FIX/hf" && find . -printf '%p %y %s %T@ %C@ %m %U:%G %l\n' | sort); }
list_hf > "$FIX/hf-before"
rc=0
t0=$(date +%s%N)
chroot --userspec="$RUN_UID:$RUN_GID" --groups="$RUN_GROUPS" "$R" "$@" > "$FIX/out" 2>&1 || rc=$?
t1=$(date +%s%N)
list_hf > "$FIX/hf-after"
echo "$rc $((t1 - t0))" > "$FIX/result"
