// SPDX-License-Identifier: GPL-2.0-only
/*
 * RNBD transport: addresses, for the client and the server halves:
 * "ip:ADDR" strings, ports, families and comparison.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <net/ipv6.h>
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

/**
 * trs_addr_port() - the port of an address
 * @addr: AF_INET or AF_INET6 address
 *
 * Return: the port, in host order; 0 for another family.
 */
u16 trs_addr_port(const struct sockaddr_storage *addr)
{
	switch (addr->ss_family) {
	case AF_INET:
		return ntohs(((const struct sockaddr_in *)addr)->sin_port);
	case AF_INET6:
		return ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
	default:
		return 0;
	}
}
EXPORT_SYMBOL_GPL(trs_addr_port);

/**
 * trs_addr_set_port() - set the port of an address
 * @addr: AF_INET or AF_INET6 address; another family is left alone
 * @port: the port, in host order; 0 sets TRS_DEFAULT_PORT
 */
void trs_addr_set_port(struct sockaddr_storage *addr, u16 port)
{
	port = port ?: TRS_DEFAULT_PORT;
	if (addr->ss_family == AF_INET)
		((struct sockaddr_in *)addr)->sin_port = htons(port);
	else if (addr->ss_family == AF_INET6)
		((struct sockaddr_in6 *)addr)->sin6_port = htons(port);
}
EXPORT_SYMBOL_GPL(trs_addr_set_port);

/**
 * trs_addr_pair_ok() - can a path connect from @src to @dst?
 * @dst: the server's address
 * @src: the local address, or AF_UNSPEC for the route's
 *
 * Return: true if @dst is AF_INET or AF_INET6 and @src is unset or of the
 * same family.
 */
bool trs_addr_pair_ok(const struct sockaddr_storage *dst,
		      const struct sockaddr_storage *src)
{
	return (dst->ss_family == AF_INET || dst->ss_family == AF_INET6) &&
	       (src->ss_family == AF_UNSPEC ||
		src->ss_family == dst->ss_family);
}
EXPORT_SYMBOL_GPL(trs_addr_pair_ok);

/**
 * trs_addr_eq() - do two addresses name the same end?
 * @a: an address
 * @b: another
 * @port: compare the ports too
 *
 * Return: true if they do; false for families other than AF_INET and
 * AF_INET6.
 */
bool trs_addr_eq(const struct sockaddr_storage *a,
		 const struct sockaddr_storage *b, bool port)
{
	const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)a;
	const struct sockaddr_in6 *b6 = (const struct sockaddr_in6 *)b;
	const struct sockaddr_in *a4 = (const struct sockaddr_in *)a;
	const struct sockaddr_in *b4 = (const struct sockaddr_in *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (port && trs_addr_port(a) != trs_addr_port(b))
		return false;
	switch (a->ss_family) {
	case AF_INET:
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	case AF_INET6:
		return ipv6_addr_equal(&a6->sin6_addr, &b6->sin6_addr) &&
		       a6->sin6_scope_id == b6->sin6_scope_id;
	default:
		return false;
	}
}
EXPORT_SYMBOL_GPL(trs_addr_eq);
