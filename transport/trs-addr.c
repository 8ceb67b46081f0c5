// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport: "ip:ADDR" address strings.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <net/net_namespace.h>
#include <rnbd/trs.h>

/**
 * trs_addr_parse() - parse an address string
 * @str: "ip:<IPv4>" or "ip:<IPv6>[%<scope>]", NUL terminated; the scope is
 *	an interface name or index
 * @addr: the address; its port is 0 (trs_clt_open() uses TRS_DEFAULT_PORT
 *	for it)
 *
 * Return: 0, or -EINVAL for anything else (a port suffix too).
 */
int trs_addr_parse(const char *str, struct sockaddr_storage *addr)
{
	const char *end;
	u8 ip4[4];

	memset(addr, 0, sizeof(*addr));
	if (strncmp(str, "ip:", 3))
		return -EINVAL;
	/*
	 * in4_pton() ends an IPv4 address at a ':', so "10.0.0.1:99999"
	 * would pass as 10.0.0.1: nothing may follow the address (a port
	 * is the map's dest_port=).
	 */
	if (in4_pton(str + 3, -1, ip4, -1, &end) && *end)
		return -EINVAL;
	if (inet_pton_with_scope(&init_net, AF_UNSPEC, str + 3, NULL, addr))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_GPL(trs_addr_parse);

/**
 * trs_addr_print() - format an address the way trs_addr_parse() reads it
 * @addr: AF_INET or AF_INET6 address; the port is not printed
 * @buf: output
 * @len: size of @buf
 *
 * Return: characters written, not counting the NUL (see scnprintf()).
 */
int trs_addr_print(const struct sockaddr *addr, char *buf, size_t len)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)addr;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)addr;

	switch (addr->sa_family) {
	case AF_INET:
		return scnprintf(buf, len, "ip:%pI4", &sin->sin_addr);
	case AF_INET6:
		if (sin6->sin6_scope_id)
			return scnprintf(buf, len, "ip:%pI6c%%%u",
					 &sin6->sin6_addr, sin6->sin6_scope_id);
		return scnprintf(buf, len, "ip:%pI6c", &sin6->sin6_addr);
	default:
		return scnprintf(buf, len, "af%u:?", addr->sa_family);
	}
}
EXPORT_SYMBOL_GPL(trs_addr_print);
