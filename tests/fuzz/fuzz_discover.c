// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the /proc text parsers of discover (net/tcp rows,
 * status NSpid, stat comm, code log names, inspector flags in a cmdline,
 * node's version in .rodata bytes).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8log.h"
#include "user/capture/discover.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), comm[17], host[256], ver[64], hp[300];
	struct discover_sock sock;
	unsigned long flags;
	unsigned int port;
	uint64_t isolate;
	pid_t pid;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!discover__parse_tcp_line(text, size & 1, &sock)) {
		if (sock.port > 65535 || strlen(sock.addr) >= sizeof(sock.addr))
			__builtin_trap();
		discover__sock_matches(&sock, "127.0.0.1", 9229);
		discover__sock_matches(&sock, "", 0);
	}
	discover__parse_nspid(text, &pid);
	if (!discover__parse_stat(text, comm, &flags) && strlen(comm) > 16)
		__builtin_trap();
	v8log__parse_filename(text, &isolate, &pid);
	for (int rt = DISCOVER_V8; rt <= DISCOVER_WORKERD; rt++) {
		if (discover__parse_inspector_flag(rt, (const char *)data, size, host, sizeof(host),
						   &port) < 0)
			continue;
		if (strlen(host) >= sizeof(host) || port > 65535)
			__builtin_trap();
		discover__format_hostport(host, port, hp, sizeof(hp));
	}
	if (!discover__node_version((const char *)data, size, ver, sizeof(ver)) && ver[0] != 'v')
		__builtin_trap();
	free(text);
	return 0;
}
