// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* isoprof: host-level, eBPF-assisted profiler for V8 runtimes. */
#include <argp.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fileio.h"
#include "user/capture/caps.h"
#include "user/cmd/commands.h"
#include "version.h"

const char *isoprof_command_line = "";

/* bad usage exits 2, like most Unix tools, not argp's EX_USAGE (64) */
error_t argp_err_exit_status = 2;

/*
 * file_tool: it reads and writes files the operator names, nothing of
 * other processes: it gives up every capability before parsing anything
 * (user/capture/caps.h), see file_tool_privileges(); writes: it writes
 * files (not only standard output).  record and targets follow their own
 * plan; serve its own split; check probes with what record arms with.
 */
enum { FILE_TOOL = 1, WRITES = 2 };

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	unsigned int kind;
} commands[] = {
	{ "record", cmd_record, "sample target processes and write a pprof profile", 0 },
	{ "continuous", cmd_continuous,
	  "sample all the time in rolling windows; push them to a profile store or keep them", 0 },
	{ "top", cmd_top, "print the flat/cum table of a profile, like pprof -top", FILE_TOOL },
	{ "targets", cmd_targets, "list the V8 runtime processes on this host", 0 },
	{ "convert", cmd_convert, "convert between pprof, .cpuprofile and folded stacks",
	  FILE_TOOL | WRITES },
	{ "crosscheck", cmd_crosscheck, "compare an isoprof profile with V8's own profile",
	  FILE_TOOL },
	{ "merge", cmd_merge, "merge profiles: the windows continuous --out-dir kept, by script "
	  "and time", FILE_TOOL | WRITES },
	{ "flame", cmd_flame, "write an interactive flamegraph (HTML) or a static SVG",
	  FILE_TOOL | WRITES },
	{ "serve", cmd_serve, "serve the on-demand profiling API and the capture page", 0 },
	{ "calibrate", cmd_calibrate, "learn a runtime binary's V8 layout, to name JS with no flags",
	  0 },
	{ "check", cmd_check, "say what this host offers isoprof (kernel, privilege)", 0 },
};

/*
 * Under sudo, a file tool becomes the user who ran sudo, for good: it
 * reads and writes what that user can (their files in a home closed to
 * others included), its outputs are theirs like any file they write, and
 * a hostile profile is parsed with no more than their rights.  Run by
 * root otherwise: no capability, but one that writes files keeps in its
 * permitted set what writing into another user's directory as its owner
 * takes (caps.h, CAPS_NEED_OUTPUT_AS).
 */
static int file_tool_privileges(bool writes)
{
	struct fileio_policy p;
	uid_t uid;
	gid_t gid;
	int err;

	if (caps__sudo_user(&uid, &gid)) {
		err = caps__become(uid, gid);
		return err ? err : caps__start(CAPS_NOTHING, 0);
	}
	caps__output_policy(&p);
	return caps__start(CAPS_NOTHING, writes ? caps__output_needs(&p) : 0);
}

static char *join_args(int argc, char **argv)
{
	size_t len = 1;
	char *s, *p;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	p = s;
	for (int i = 0; i < argc; i++)
		p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
	*p = '\0';
	return s;
}

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: isoprof COMMAND [OPTION...]\n"
		     "       isoprof help COMMAND | --version\n\nCommands:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'isoprof help COMMAND' (or 'isoprof COMMAND --help') describes each "
		     "command's options.\n");
}

/* Like bpftool -V: the build's own version and the libbpf it runs with. */
static void print_version(void)
{
	printf("isoprof %s\n", ISOPROF_VERSION);
	printf("libbpf %s (built against %d.%d)\n", libbpf_version_string(),
	       LIBBPF_MAJOR_VERSION, LIBBPF_MINOR_VERSION);
}

static int find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return (int)i;
	return -1;
}

static int run_command(size_t i, int argc, char **argv)
{
	char *cmdline, program[64];
	int ret;

	if ((commands[i].kind & FILE_TOOL) &&
	    (ret = file_tool_privileges(commands[i].kind & WRITES))) {
		fprintf(stderr, "isoprof: cannot drop privileges: %s\n", strerror(-ret));
		return 1;
	}
	cmdline = join_args(argc, argv);
	isoprof_command_line = cmdline ? cmdline : argv[0];
	/* argp names the program after argv[0]: "isoprof top: ..." in its messages */
	snprintf(program, sizeof(program), "isoprof %s", commands[i].name);
	argv[1] = program;
	ret = commands[i].run(argc - 1, argv + 1);
	free(cmdline);
	return ret;
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V") ||
	    !strcmp(argv[1], "version")) {
		print_version();
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		char *help_argv[] = { argv[0], NULL, "--help", NULL };

		if (argc < 3 || strcmp(argv[1], "help")) {
			usage(stdout);
			return 0;
		}
		i = find_command(argv[2]);
		if (i < 0 || argc > 3) {
			fprintf(stderr, argc > 3 ? "isoprof: help takes one command\n"
						 : "isoprof: no command '%s'\n", argv[2]);
			usage(stderr);
			return 2;
		}
		help_argv[1] = argv[2];
		return run_command((size_t)i, 3, help_argv);
	}
	i = find_command(argv[1]);
	if (i >= 0)
		return run_command((size_t)i, argc, argv);
	fprintf(stderr, "isoprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
