/* Socket options for the strace comparison: ints at the socket, TCP, IP
 * and IPv6 levels, struct linger, a timeout (bytes), unknown levels and
 * options, a short length, getsockopt's [len], and SO_PEERCRED's struct
 * ucred over a socketpair (its pid must be the guest's); the IPv6 and
 * netlink addresses bind gives. */
#define _GNU_SOURCE
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

int main(void)
{
	int one = 1, v, sv[2];
	socklen_t l = sizeof v;
	struct timeval tv = {5, 0};
	struct linger lg = {1, 3};
	struct ucred uc;
	write(-1, "START", 5);
	int s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	getsockopt(s, SOL_SOCKET, SO_ERROR, &v, &l);
	getsockopt(s, SOL_SOCKET, SO_TYPE, &v, &l);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	getsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &l); /* l is 4: l_onoff alone */
	l = sizeof lg;
	getsockopt(s, SOL_SOCKET, SO_LINGER, &lg, &l);
	setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
	setsockopt(s, SOL_SOCKET, 999, &one, sizeof one); /* ENOPROTOOPT */
	setsockopt(s, 99, 5, &one, sizeof one);          /* ENOPROTOOPT */
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, 2); /* EINVAL */
	long wide = 1;
	setsockopt(s, SOL_SOCKET, SO_KEEPALIVE, &wide, 8);
	setsockopt(s, SOL_SOCKET, 999, &wide, 8); /* ENOPROTOOPT */
	l = sizeof v;
	getsockopt(s, SOL_SOCKET, SO_ERROR, NULL, &l); /* EFAULT */
	getsockopt(s, IPPROTO_TCP, TCP_NODELAY, &v, &l);
	setsockopt(s, IPPROTO_IP, IP_TOS, &one, sizeof one);
	setsockopt(s, IPPROTO_TCP, TCP_KEEPIDLE, &one, sizeof one);
	int s6 = socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP);
	setsockopt(s6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	struct sockaddr_in6 a6 = {0};
	a6.sin6_family = AF_INET6;
	a6.sin6_addr.s6_addr[15] = 1; /* ::1 */
	bind(s6, (struct sockaddr *)&a6, sizeof a6);
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl snl = {0};
	snl.nl_family = AF_NETLINK;
	snl.nl_groups = 0x11;
	setsockopt(nl, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
	bind(nl, (struct sockaddr *)&snl, sizeof snl);
	socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
	l = sizeof uc;
	getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &uc, &l);
	write(-1, "END", 3);
	return uc.pid == getpid() ? 0 : 1;
}
