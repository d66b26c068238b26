// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* isoprof: host-level, eBPF-assisted profiler for V8 runtimes. */
#include <argp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/caps.h"
#include "user/cmd/commands.h"

const char *isoprof_command_line = "";

/* bad usage exits 2, like most Unix tools, not argp's EX_USAGE (64) */
error_t argp_err_exit_status = 2;

/*
 * file_tool: it reads and writes files the operator names, nothing of
 * other processes: it gives up every capability before parsing anything
 * (user/capture/caps.h).  record and targets follow their own plan; serve
 * its own split; check probes with what record arms with.
 */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	bool file_tool;
} commands[] = {
	{ "record", cmd_record, "sample target processes and write a pprof profile", false },
	{ "top", cmd_top, "print the flat/cum table of a profile, like pprof -top", true },
	{ "targets", cmd_targets, "list the V8 runtime processes on this host", false },
	{ "convert", cmd_convert, "convert between pprof, .cpuprofile and folded stacks", true },
	{ "crosscheck", cmd_crosscheck, "compare an isoprof profile with V8's own profile", true },
	{ "flame", cmd_flame, "write an interactive flamegraph (HTML) or a static SVG", true },
	{ "serve", cmd_serve, "serve the on-demand profiling API and the capture page", false },
	{ "calibrate", cmd_calibrate, "learn a runtime binary's V8 layout, to name JS with no flags",
	  false },
	{ "check", cmd_check, "say what this host offers isoprof (kernel, privilege)", false },
};

static void usage(FILE *out)
{
	fprintf(out, "Usage: isoprof COMMAND [OPTION...]\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'isoprof COMMAND --help' describes each command's options.\n");
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

int main(int argc, char **argv)
{
	char *cmdline, program[64];
	int ret;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (commands[i].file_tool && (ret = caps__start(CAPS_NOTHING, 0))) {
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
	fprintf(stderr, "isoprof: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
