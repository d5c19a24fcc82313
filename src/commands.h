/* The subcommands of the gpugate binary; main.c dispatches to them. Each
 * returns the process exit status (0, 1 or 3; never 2). */
#ifndef GPUGATE_COMMANDS_H
#define GPUGATE_COMMANDS_H

#define EXIT_HEALTHY   0
#define EXIT_UNHEALTHY 1
#define EXIT_USAGE     3

int cmd_check(int argc, char **argv);
int cmd_list(int argc, char **argv);
/* `gpugate hf where|scan|verify`; `hf fetch` goes on to cmd_hf_fetch. */
int cmd_hf(int argc, char **argv);
/* Provisioning, run by the separate gpugate-provision executable (provision_exec.c). */
int cmd_hf_fetch(int argc, char **argv);
int cmd_stack(int argc, char **argv);
int cmd_bundle(int argc, char **argv);
/* `gpugate serve`, run by the separate gpugate-serve executable (libmicrohttpd). */
int cmd_serve(int argc, char **argv);
int cmd_probe(int argc, char **argv); /* hidden: the runtime check's child */
/* The operator's commands (src/operator/): `spec freeze` and `diff`. */
int cmd_spec(int argc, char **argv);
int cmd_diff(int argc, char **argv);

/* Prints "gpugate: MESSAGE" and the usage hint to stderr; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The usage error for a getopt_long call that failed (opterr 0, '?' or
 * ':'), led by command ("hf verify"): names the option as it was written
 * and says what is wrong with it (unknown, ambiguous, needs an argument,
 * takes none). A short option is named by its letter: within a cluster
 * ("-xv") glibc leaves optind on it, so argv[optind - 1] is the argument
 * before it. command NULL: gpugate's own options, no prefix. optstring and longopts: those of the call. A long option
 * whose val is a character must have it in optstring too. */
struct option;
int usage_bad_option(const char *command, char *const *argv, const char *optstring, const struct option *longopts);

/* 0 when --root DIR names a directory; else the usage error (3), its
 * message led by command ("spec freeze") so that the hint is that
 * command's --help; NULL: gpugate check's. */
int command_root_option(const char *command, const char *dir);
/* command_root_option(NULL, dir): gpugate check's --root. */
int check_root_option(const char *dir);

#endif
