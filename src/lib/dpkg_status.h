/* The dpkg database's status file (deb822 stanzas), read for the few
 * packages a spec names. */
#ifndef GPUGATE_DPKG_STATUS_H
#define GPUGATE_DPKG_STATUS_H

#include <stdbool.h>
#include <stddef.h>

struct dpkg_pkg {
	char *name;
	char *arch;      /* "" when the stanza has none */
	char *version;   /* "" when the stanza has none */
	char *state;     /* third word of Status: installed, config-files, ... */
	char *multiarch; /* Multi-Arch: same, foreign, allowed, no; "" when absent */
	char *provides;  /* the Provides field as written; "" when absent */
	size_t line;     /* where the stanza starts */
};

struct dpkg_status {
	struct dpkg_pkg *pkgs;
	size_t count;
	char *native_arch; /* Architecture of the dpkg package itself, when present */
};

/* Keeps the stanzas whose Package is in wanted (NULL-terminated; NULL keeps
 * every stanza), and those whose Provides names one of them. Returns 0, or -1 with err = "FILE:LINE: problem". A missing
 * file gives -2, one that cannot be read (EACCES, a FIFO, /dev/zero, too
 * large: lib/safe_io.h) -3, with the reason in err. */
int dpkg_status_parse(const char *path, const char *content, size_t len, const char *const *wanted,
		      struct dpkg_status *out, char *err, size_t err_size);
int dpkg_status_load(const char *path, const char *const *wanted, struct dpkg_status *out, char *err, size_t err_size);
/* dpkg_status_load with the read buffer's first size given (it grows to hold
 * the longest stanza): the tests use tiny ones to cross every boundary. */
#define DPKG_STATUS_BUFFER 16384
/* A stanza longer than this is not dpkg's (the longest in a real status file,
 * a package's Conffiles, is a few hundred KB). */
#define DPKG_STATUS_MAX_STANZA (16 << 20)
/* The file cut at empty lines into parts, each parsed on its own thread
 * (lib/parallel.h) and joined in file order: the verdict, error text, line
 * numbers and kept stanzas are the one-piece parse's. parts 0 picks a part
 * per DPKG_STATUS_PART bytes, at most one per usable CPU (dpkg_status_load);
 * 1 is the one-piece parse. buffer_size 0 parses the file mapped (read
 * through a buffer of DPKG_STATUS_BUFFER bytes when it cannot be mapped,
 * is larger than DPKG_STATUS_MAX_STANZA, or changes while mapped), another
 * reads it through a buffer of that first size (dpkg_status_load_buffered). */
#define DPKG_STATUS_PART (128 << 10)
int dpkg_status_load_parts(const char *path, const char *const *wanted, size_t buffer_size, size_t parts,
			   struct dpkg_status *out, char *err, size_t err_size);
/* Tests only: called with the file's descriptor once it is mapped, before
 * any of it is parsed (a test cuts the file short there). */
extern void (*dpkg_status_mapped_hook)(int fd);
int dpkg_status_load_buffered(const char *path, const char *const *wanted, size_t buffer_size, struct dpkg_status *out,
			      char *err, size_t err_size);
void dpkg_status_free(struct dpkg_status *st);
/* True when the package's state satisfies a dependency: installed,
 * triggers-pending or triggers-awaited (dpkg's deppossi_ok_found() in
 * src/main/packages.c: the package is configured; triggers-awaited only waits
 * for another package's trigger run, which dpkg does before it checks). */
bool dpkg_pkg_installed(const struct dpkg_pkg *p);
/* Whether the Provides text names package `name` (any version or arch). */
bool dpkg_provides_names(const char *provides, size_t len, const char *name);

#endif
