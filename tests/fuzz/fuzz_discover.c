// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the /proc text parsers discovery uses (net/tcp rows and
 * inspector flags in a cmdline from inspector_addr, status NSpid, stat and
 * its start time from lib/procfs, code log names from v8log), and node's version in
 * .rodata bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procfs.h"
#include "symbolize/v8log.h"
#include "user/capture/discover.h"
#include "user/capture/inspector_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), comm[PROCFS_COMM_LEN + 1], host[256], ver[64], hp[300];
	struct net_tcp_sock sock;
	unsigned long flags;
	unsigned int port;
	uint64_t isolate;
	char state;
	pid_t pid;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!inspector_addr__parse_tcp_line(text, size & 1, &sock)) {
		if (sock.port > 65535 || strlen(sock.addr) >= sizeof(sock.addr))
			__builtin_trap();
		inspector_addr__sock_matches(&sock, "127.0.0.1", 9229);
		inspector_addr__sock_matches(&sock, "", 0);
	}
	if (!procfs__parse_nspid(text, &pid) && pid <= 0)
		__builtin_trap();
	if (!procfs__parse_stat(text, comm, &state, &flags) && strlen(comm) > PROCFS_COMM_LEN)
		__builtin_trap();
	{
		unsigned long long ticks;

		/* a start time needs the comm's parentheses before it */
		if (!procfs__parse_starttime(text, &ticks) && !strchr(text, ')'))
			__builtin_trap();
	}
	if (!v8log__parse_filename(text, &isolate, &pid) && pid <= 0)
		__builtin_trap();
	for (int rt = DISCOVER_V8; rt <= DISCOVER_WORKERD; rt++) {
		if (inspector_addr__parse_flag(rt, (const char *)data, size, host, sizeof(host),
					       &port) < 0)
			continue;
		if (strlen(host) >= sizeof(host) || port > 65535)
			__builtin_trap();
		inspector_addr__format(host, port, hp, sizeof(hp));
	}
	if (!discover__node_version((const char *)data, size, ver, sizeof(ver)) && ver[0] != 'v')
		__builtin_trap();
	free(text);
	return 0;
}
