#include "util.h"

#include "safe_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int read_file(const char *path, char **content, size_t *len)
{
	return safe_read_file(path, SAFE_KIND_REG, SAFE_MAX_TEXT, content, len, NULL, 0);
}

int read_file_max(const char *path, size_t max, char **content, size_t *len)
{
	return safe_read_file(path, SAFE_KIND_REG, max, content, len, NULL, 0);
}

/* Reads what is left of a small attribute file opened as fd, then closes it. */
static int read_attr_fd(int fd, char *buf, size_t size)
{
	ssize_t n;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	int err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int read_attr_at(int dirfd, const char *name, char *buf, size_t size)
{
	/* a FIFO or /dev/zero planted in a fixture or image: an error at once */
	struct stat st;
	int fd = safe_open_read_at(dirfd, name, 0, SAFE_KIND_REG, 0, &st, NULL, 0);
	if (fd < 0)
		return fd;
	return read_attr_fd(fd, buf, size);
}

int read_attr_in_root(const char *root, const char *path, char *buf, size_t size)
{
	int fd = root_open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return fd;
	struct stat st;
	int err = fstat(fd, &st) < 0 ? -errno : 0;
	if (!err && !S_ISREG(st.st_mode)) /* as safe_open_read_at answers anything but a regular file */
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	if (err) {
		close(fd);
		return err;
	}
	return read_attr_fd(fd, buf, size);
}

int read_line_file(const char *path, char *buf, size_t size)
{
	return read_attr_at(AT_FDCWD, path, buf, size);
}

int write_file_atomic(const char *path, const char *content, size_t len, unsigned mode)
{
	return safe_write_file(path, content, len, (mode_t)mode, SAFE_WRITE_REPLACE_ONLY, NULL, 0);
}

double monotonic_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void sleep_seconds(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

double round_decimals(double x, int decimals)
{
	char text[64];
	snprintf(text, sizeof(text), "%.*f", decimals, x);
	return strtod(text, NULL);
}

double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *xpath_join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (!na)
		return xstrndup(b, nb);
	char *p = xmalloc(na + 1 + nb + 1);
	memcpy(p, a, na);
	p[na] = '/';
	memcpy(p + na + 1, b, nb + 1);
	return p;
}

bool root_is_real(const char *root)
{
	return !root || !*root || strcmp(root, "/") == 0;
}

/* The next component of *rest (skipping slashes), or NULL at the end. */
static const char *next_component(const char **rest, size_t *len)
{
	const char *p = *rest;
	while (*p == '/')
		p++;
	if (!*p)
		return NULL;
	const char *end = strchrnul(p, '/');
	*len = (size_t)(end - p);
	*rest = end;
	return p;
}

/* Symlinks followed in one lookup before giving up, as the kernel's
 * MAXSYMLINKS (include/linux/namei.h). */
#define ROOT_MAX_LINKS 40

/* What root_path answers for a lookup it gave up on (a symlink loop, an
 * unreadable link): a name that does not exist, so that the caller's open
 * fails naming the link, instead of a path the kernel would follow out of
 * root. Should the image hold that very name, a path under /dev/null, which
 * no lookup can enter (ENOTDIR). */
static char *loop_marker(const char *root, size_t rl, const char *link)
{
	char *flat = xstrdup(link);
	for (char *p = flat; *p; p++)
		if (*p == '/')
			*p = ':';
	char *bad = xasprintf("%.*s/(too many symlinks or an unreadable one at %s)", (int)rl, root, flat);
	struct stat st;
	if (lstat(bad, &st) == 0) {
		char *safe = xasprintf("/dev/null/%s", bad);
		free(bad);
		bad = safe;
	}
	free(flat);
	return bad;
}

const char *env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = env; e && *e; e++)
		if ((!n || (*e)[0] == name[0]) && strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* The length of root without its trailing slashes ("/" stays). */
static size_t root_len(const char *root)
{
	size_t rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	return rl;
}

/* ".." in a path built under a root: the last "/name" of sb goes, but never
 * the first floor bytes (the root: ".." stops there, as in a chroot). */
static void drop_last_component(struct strbuf *sb, size_t floor)
{
	char *slash = strrchr(sb->buf, '/');
	if (sb->len > floor && slash && (size_t)(slash - sb->buf) >= floor) {
		sb->len = (size_t)(slash - sb->buf);
		sb->buf[sb->len] = '\0';
	}
}

/* The walk of root_path, one component at a time in user space: the answer
 * wherever the kernel cannot give it (no openat2, a loop, a folder missing on
 * the way). */
static char *root_path_walk(const char *root, size_t rl, const char *path)
{
	/* Each component is looked at with lstat; a symlink is followed inside
	 * root as the kernel follows it inside a chroot (an absolute target
	 * starts again at root, ".." stops at root), so a fixture or an
	 * unpacked image can never send a read to the host's own files. Once a
	 * component is missing the rest is appended as it is: nothing there can
	 * be followed. */
	struct strbuf done = STRBUF_INIT;
	sb_add(&done, root, rl);
	char *todo = xstrdup(path);
	const char *rest = todo;
	bool missing = false;
	int links = 0;
	size_t len;
	const char *c;
	while ((c = next_component(&rest, &len))) {
		if (len == 1 && c[0] == '.')
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			drop_last_component(&done, rl);
			continue;
		}
		size_t before = done.len;
		sb_add(&done, "/", 1);
		sb_add(&done, c, len);
		struct stat st;
		if (missing)
			continue;
		if (lstat(done.buf, &st) < 0) {
			missing = true; /* ENOENT, ENOTDIR, EACCES: the open will say which */
			continue;
		}
		if (!S_ISLNK(st.st_mode))
			continue;
		char target[PATH_MAX];
		ssize_t n = readlink(done.buf, target, sizeof(target) - 1);
		if (n <= 0 || ++links > ROOT_MAX_LINKS) {
			char *bad = loop_marker(root, rl, done.buf + rl);
			sb_release(&done);
			free(todo);
			return bad;
		}
		target[n] = '\0';
		char *next = xasprintf("%s/%s", target, rest);
		free(todo);
		todo = next;
		rest = todo;
		done.len = target[0] == '/' ? rl : before;
		done.buf[done.len] = '\0';
	}
	free(todo);
	return sb_detach(&done);
}

/* The kernel's lookup under a root (Linux >= 5.6): openat2 with
 * RESOLVE_IN_ROOT treats the root's folder as "/" for every symlink and ".."
 * on the way, exactly as the walk above does, in one system call where the
 * walk makes one lstat per component (a sysfs path with its class and device
 * links: a dozen). RESOLVE_NO_MAGICLINKS: a /proc-style link under the root
 * is refused (the walk then reads it as text, as before). */

/* The folder of one --root, opened once per process (O_PATH), and the name
 * the kernel gives it (/proc/self/fd), by which a name it gives back for a
 * file under it turns into ROOT/... again; that name is asked for the first
 * time a path with a link on the way needs it (root_dir_real). Never freed:
 * a process looks at one root (the unit tests at a few), and the table is
 * bounded. */
struct root_dir {
	int fd;
	int real_state; /* 0: not asked yet, 1: real is known, -1: none (no /proc, or "/") */
	size_t real_len;
	char *real;
	char *root; /* as given, trailing slashes dropped */
};
#define ROOT_DIRS 8
static struct root_dir root_dirs[ROOT_DIRS];
static size_t root_dir_count;
static pthread_mutex_t root_dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool no_openat2; /* ENOSYS (kernel < 5.6) or refused by a seccomp filter */

static int openat2_resolve(int rootfd, const char *path, int flags, unsigned long long resolve)
{
	struct open_how how = { .flags = (unsigned long long)(flags | O_CLOEXEC), .resolve = resolve };
	long fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	int err = errno;
	if (err == ENOSYS || err == EPERM || err == E2BIG)
		atomic_store(&no_openat2, true);
	return -err;
}

static int openat2_in_root(int rootfd, const char *path, int flags)
{
	return openat2_resolve(rootfd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

/* The kernel's name of an open file, or -1 (no /proc, too long, deleted). */
static ssize_t fd_name(int fd, char *buf, size_t size)
{
	char link[40];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, size);
	if (n <= 0 || (size_t)n >= size || buf[0] != '/')
		return -1;
	buf[n] = '\0';
	if (str_ends_with(buf, " (deleted)"))
		return -1;
	return n;
}

/* The opened folder of root (rl bytes of it), or NULL where the kernel's
 * lookup is not to be had. */
static struct root_dir *root_dir_of(const char *root, size_t rl)
{
	if (atomic_load(&no_openat2))
		return NULL;
	struct root_dir *found = NULL;
	pthread_mutex_lock(&root_dirs_lock);
	for (size_t i = 0; i < root_dir_count && !found; i++)
		if (strlen(root_dirs[i].root) == rl && memcmp(root_dirs[i].root, root, rl) == 0)
			found = &root_dirs[i];
	if (!found && root_dir_count < ROOT_DIRS) {
		char *name = xstrndup(root, rl);
		int fd = open(name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			struct root_dir *d = &root_dirs[root_dir_count++];
			memset(d, 0, sizeof(*d));
			d->fd = fd;
			d->root = name;
			found = d;
		} else {
			free(name);
		}
	}
	pthread_mutex_unlock(&root_dirs_lock);
	return found;
}

/* The kernel's name of d's folder, asked once; false where there is none to
 * go by: no /proc, or "/" itself (the walk, which keeps the root's
 * spelling). */
static bool root_dir_real(struct root_dir *d)
{
	pthread_mutex_lock(&root_dirs_lock);
	if (d->real_state == 0) {
		char real[PATH_MAX];
		ssize_t n = fd_name(d->fd, real, sizeof(real));
		d->real_state = n > 1 ? 1 : -1;
		if (n > 1) {
			d->real_len = (size_t)n;
			d->real = xstrdup(real);
		}
	}
	bool known = d->real_state > 0;
	pthread_mutex_unlock(&root_dirs_lock);
	return known;
}

/* Opens path under d's folder (O_PATH) with these RESOLVE_ flags; when only
 * its last name is missing, opens the folder instead and sets *missing to
 * that name, after making sure it is no dangling link (which the walk would
 * follow: -EEXIST). The descriptor, or -errno. */
static int open_in_root_dir(const struct root_dir *d, const char *path, unsigned long long resolve,
			    const char **missing)
{
	*missing = NULL;
	int fd = openat2_resolve(d->fd, path, O_PATH, resolve);
	if (fd != -ENOENT)
		return fd;
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : NULL;
	if (!name || !*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return -ENOENT;
	char *parent = slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
	fd = openat2_resolve(d->fd, parent, O_PATH | O_DIRECTORY, resolve);
	free(parent);
	struct stat st;
	if (fd >= 0 && (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)) {
		close(fd);
		return -EEXIST;
	}
	if (fd >= 0)
		*missing = name;
	return fd;
}

/* root + path with "." dropped and ".." taking back a component, never
 * above root (where RESOLVE_IN_ROOT stops it): the kernel's name for a path
 * it found with no link on the way. */
static char *root_path_lexical(const char *root, size_t rl, const char *path)
{
	struct strbuf out = STRBUF_INIT;
	sb_add(&out, root, rl);
	const char *rest = path, *c;
	size_t len;
	while ((c = next_component(&rest, &len))) {
		if (len == 1 && c[0] == '.')
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			drop_last_component(&out, rl);
			continue;
		}
		sb_add(&out, "/", 1);
		sb_add(&out, c, len);
	}
	return sb_detach(&out);
}

/* root_path's answer from the kernel's lookup, or NULL for the walk to
 * decide: a name missing on the way (but for the last one), a loop, a magic
 * link, no openat2, no /proc. A missing last component is appended to its
 * folder, as the walk appends it (after making sure it is no dangling link,
 * which the walk would follow). */
static char *root_path_kernel(const char *root, size_t rl, const char *path)
{
	/* The kernel's answer costs two calls (openat2, close), four for a
	 * missing last name, and with a link on the way two more (the second
	 * lookup, a readlink of the descriptor); the walk one lstat a
	 * component: it stays the cheaper for one or two ("/sys", "/dev/dri",
	 * "/.dockerenv") */
	size_t components = 0;
	for (const char *p = path; *p; p++)
		components += *p != '/' && (p == path || p[-1] == '/');
	if (components <= 2)
		return NULL;
	struct root_dir *d = root_dir_of(root, rl);
	if (!d)
		return NULL;
	/* First with no link allowed: found so, the path names itself (the
	 * usual case: no readlink of /proc/self/fd, which costs more than the
	 * lookup). A link on the way (ELOOP): the lookup that follows it, and
	 * the kernel's name for where it led. Any other failure is the same
	 * with links followed: the part before it holds none. */
	const char *missing;
	int fd = open_in_root_dir(d, path, RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS, &missing);
	if (fd >= 0) {
		close(fd);
		return root_path_lexical(root, rl, path);
	}
	if (fd != -ELOOP || !root_dir_real(d))
		return NULL;
	fd = open_in_root_dir(d, path, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, &missing);
	if (fd < 0)
		return NULL;
	char got[PATH_MAX];
	ssize_t n = fd_name(fd, got, sizeof(got));
	close(fd);
	if (n < 0 || (size_t)n < d->real_len || memcmp(got, d->real, d->real_len) != 0 ||
	    (got[d->real_len] != '/' && got[d->real_len] != '\0'))
		return NULL; /* not under the root's name (renamed since): let the walk say */
	struct strbuf out = STRBUF_INIT;
	sb_add(&out, root, rl);
	sb_add(&out, got + d->real_len, (size_t)n - d->real_len);
	if (missing) {
		sb_add(&out, "/", 1);
		sb_add(&out, missing, strlen(missing));
	}
	return sb_detach(&out);
}

char *root_path(const char *root, const char *path)
{
	if (root_is_real(root))
		return xstrdup(path);
	size_t rl = root_len(root);
	char *fast = root_path_kernel(root, rl, path);
	return fast ? fast : root_path_walk(root, rl, path);
}

char *root_path_by_walk(const char *root, const char *path)
{
	return root_is_real(root) ? xstrdup(path) : root_path_walk(root, root_len(root), path);
}

int root_open(const char *root, const char *path, int flags)
{
	int fd;
	if (!root_is_real(root)) {
		const struct root_dir *d = root_dir_of(root, root_len(root));
		fd = d ? openat2_in_root(d->fd, path, flags) : -ENOSYS;
		/* ENOENT is the walk's answer too: it follows the same links */
		if (fd >= 0 || fd == -ENOENT)
			return fd;
	}
	char *p = root_path(root, path);
	fd = open(p, flags | O_CLOEXEC);
	free(p);
	return fd < 0 ? -errno : fd;
}

const char *count_noun(size_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void human_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)n;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* Prints v with 3 decimals, then trims the trailing zeros (and the point). */
static void trimmed_number(double v, const char *unit, char *buf, size_t size)
{
	char num[64];
	snprintf(num, sizeof(num), "%.3f", v);
	if (strchr(num, '.')) {
		size_t n = strlen(num);
		while (num[n - 1] == '0')
			num[--n] = '\0';
		if (num[n - 1] == '.')
			num[--n] = '\0';
	}
	snprintf(buf, size, "%s %s", num, unit);
}

void human_seconds(double s, char *buf, size_t size)
{
	/* below a second in ms, so that a 0.0001 s deadline reads "0.1 ms", not "0.0 s" */
	if (s > 0 && s < 1 && s * 1e3 >= 0.0005)
		trimmed_number(s * 1e3, "ms", buf, size);
	else if (s > 0 && s < 1)
		snprintf(buf, size, "%g s", s);
	else
		trimmed_number(s, "s", buf, size);
}

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

char **split_list(const char *s, size_t *count)
{
	size_t n = 0, cap = 4;
	char **list = xmalloc(cap * sizeof(*list));
	while (*s) {
		const char *end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		const char *a = s, *b = end;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
			b--;
		if (b > a) {
			if (n + 2 > cap) {
				cap *= 2;
				list = xrealloc(list, cap * sizeof(*list));
			}
			list[n++] = xstrndup(a, (size_t)(b - a));
		}
		s = *end ? end + 1 : end;
	}
	list[n] = NULL;
	if (count)
		*count = n;
	return list;
}

void free_list(char **list)
{
	if (!list)
		return;
	for (char **p = list; *p; p++)
		free(*p);
	free(list);
}

size_t utf8_decode(const unsigned char *s, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		v = c & 0x1F;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		v = c & 0x0F;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		v = c & 0x07;
		min = 0x10000;
	} else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80) /* also stops at the NUL */
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

void text_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		if (*p >= 0x20 && *p < 0x7F) { /* printable ASCII: most of every text */
			p++;
			continue;
		}
		uint32_t cp;
		size_t n = utf8_decode(p, &cp);
		if (n == 0 || (n == 1 && ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7F))) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

bool isalnum_ascii(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool list_has(const char *list, char sep, const char *item)
{
	size_t n = strlen(item);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, sep);
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && strncmp(p, item, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

int open_private(const char *path, off_t max_size, struct stat *st)
{
	int fd = safe_open_read_at(AT_FDCWD, path, O_NOFOLLOW, SAFE_KIND_REG, 0, st, NULL, 0);
	if (fd < 0)
		return -1;
	if (st->st_uid == geteuid() && !(st->st_mode & 077) && st->st_size < max_size)
		return fd;
	close(fd);
	return -1;
}

int helper_gpugate_arg(int argc, char **argv, const char **gpugate)
{
	*gpugate = "gpugate";
	if (argc > 2 && strcmp(argv[1], "--gpugate") == 0) {
		*gpugate = argv[2];
		return 3;
	}
	return 1;
}
