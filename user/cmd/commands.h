/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * isoprof's subcommands.  Each takes the arguments after its name
 * (argv[0] is the subcommand name), parses them with its own argp parser,
 * reports its errors once on stderr as "isoprof: ...", and returns the
 * process exit status.
 */
#ifndef ISOPROF_CMD_COMMANDS_H
#define ISOPROF_CMD_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_continuous(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_targets(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_crosscheck(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_merge(int argc, char **argv);

/* Set by main() to the full command line, for profile comments. */
extern const char *isoprof_command_line;

#endif
