// SPDX-License-Identifier: MIT
/*
 * fakegpio.c - LD_PRELOAD half of the FallGuard GPIO kernel emulator.
 *
 * Lets the unmodified libgpiod 1.6.x and 2.x (and anything else speaking the
 * GPIO character-device uAPI v1 or v2 of <linux/gpio.h>) run on a kernel
 * without GPIO support.  The "kernel" side is gpio_kernel.py, one server process per set
 * of emulated chips; this library only forwards requests to it.
 *
 * Design (see README.md for the long version):
 *  - open()/openat() of a character node whose major:minor is listed in
 *    $FAKEGPIO_CHIPS ("MAJ:MIN=/path/to/server.sock;...") returns one end of
 *    a Unix socketpair; the other end is handed to the server with SCM_RIGHTS.
 *    The server-side end is bound to an abstract address "\0fakegpio:..." so
 *    that getpeername() recognises any of our descriptors in any process,
 *    after dup(), fork() or exec(), without per-process bookkeeping.
 *  - Line handles, event requests (v1) and line requests (v2) are socketpairs
 *    made the same way, so a
 *    close() of the last reference (or process death) is seen by the server
 *    as EOF and releases the lines exactly when the kernel would.
 *  - Every ioctl is sent as one fixed-size message over the object's own
 *    descriptor together with a fresh reply socketpair; the reply comes back
 *    on that private channel, so event records (event fds) and line-info
 *    change records (chip fds) are the only data ever readable from the
 *    descriptor itself, as with the real kernel.
 *  - Timestamps of ioctls (used for the output log) are taken here, in the
 *    calling process, with CLOCK_MONOTONIC.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define FG_EXPORT __attribute__((visibility("default")))

#define FG_MAGIC 0x49504746u /* "FGPI" little-endian */
#define FG_MSG_SIZE 1024 /* holds struct gpio_v2_line_request (592 bytes) */
#define FG_PAYLOAD_MAX (FG_MSG_SIZE - 32)
#define FG_ABSTRACT_PREFIX "fakegpio:"

enum fg_op {
	FG_OP_OPEN = 1,
	FG_OP_CHIPINFO = 2,
	FG_OP_LINEINFO = 3,
	FG_OP_LINEHANDLE = 4,
	FG_OP_LINEEVENT = 5,
	FG_OP_GET_VALUES = 6,
	FG_OP_SET_VALUES = 7,
	FG_OP_SET_CONFIG = 8,
	FG_OP_WATCH = 9,
	FG_OP_UNWATCH = 10,
	FG_OP_V2_LINEINFO = 11,
	FG_OP_V2_WATCH = 12,
	FG_OP_V2_GET_LINE = 13,
	FG_OP_V2_SET_CONFIG = 14,
	FG_OP_V2_GET_VALUES = 15,
	FG_OP_V2_SET_VALUES = 16,
	FG_OP_UNKNOWN = 99,
};

struct fg_msg {
	uint32_t magic;
	uint32_t op;
	uint64_t t_ns;  /* CLOCK_MONOTONIC in the caller when the ioctl was issued */
	int32_t pid;
	uint32_t len;   /* bytes of payload used */
	uint32_t arg;   /* op specific: minor number for OPEN, ioctl cmd for UNKNOWN */
	uint32_t flags; /* open(2) flags for OPEN */
	uint8_t payload[FG_PAYLOAD_MAX];
};

struct fg_reply {
	int32_t err;    /* 0 or a positive errno */
	uint32_t len;
	uint8_t pad[24];
	uint8_t payload[FG_PAYLOAD_MAX];
};

_Static_assert(sizeof(struct fg_msg) == FG_MSG_SIZE, "fg_msg layout");
_Static_assert(sizeof(struct fg_reply) == FG_MSG_SIZE, "fg_reply layout");
_Static_assert(sizeof(struct gpiochip_info) == 68, "gpiochip_info");
_Static_assert(sizeof(struct gpioline_info) == 72, "gpioline_info");
_Static_assert(sizeof(struct gpiohandle_request) == 364, "gpiohandle_request");
_Static_assert(sizeof(struct gpiohandle_config) == 84, "gpiohandle_config");
_Static_assert(sizeof(struct gpiohandle_data) == 64, "gpiohandle_data");
_Static_assert(sizeof(struct gpioevent_request) == 48, "gpioevent_request");
_Static_assert(sizeof(struct gpioevent_data) == 16, "gpioevent_data");
_Static_assert(sizeof(struct gpio_v2_line_attribute) == 16, "gpio_v2_line_attribute");
_Static_assert(sizeof(struct gpio_v2_line_config_attribute) == 24, "gpio_v2_line_config_attribute");
_Static_assert(sizeof(struct gpio_v2_line_config) == 272, "gpio_v2_line_config");
_Static_assert(sizeof(struct gpio_v2_line_request) == 592, "gpio_v2_line_request");
_Static_assert(offsetof(struct gpio_v2_line_request, fd) == 588, "gpio_v2_line_request.fd");
_Static_assert(sizeof(struct gpio_v2_line_info) == 256, "gpio_v2_line_info");
_Static_assert(sizeof(struct gpio_v2_line_info_changed) == 288, "gpio_v2_line_info_changed");
_Static_assert(sizeof(struct gpio_v2_line_event) == 48, "gpio_v2_line_event");
_Static_assert(sizeof(struct gpio_v2_line_values) == 16, "gpio_v2_line_values");
_Static_assert(sizeof(struct gpio_v2_line_request) <= FG_PAYLOAD_MAX, "payload");

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);
typedef int (*ioctl_fn)(int, unsigned long, ...);
typedef int (*fstat_fn)(int, struct stat *);

static struct {
	open_fn open, open64;
	openat_fn openat, openat64;
	open2_fn open_2, open64_2;
	openat2_fn openat_2, openat64_2;
	ioctl_fn ioctl, ioctl_time64;
	fstat_fn fstat, fstat64;
} real;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static unsigned long name_counter;
static pthread_mutex_t name_lock = PTHREAD_MUTEX_INITIALIZER;

static void init_real(void)
{
	real.open = (open_fn)dlsym(RTLD_NEXT, "open");
	real.open64 = (open_fn)dlsym(RTLD_NEXT, "open64");
	real.openat = (openat_fn)dlsym(RTLD_NEXT, "openat");
	real.openat64 = (openat_fn)dlsym(RTLD_NEXT, "openat64");
	real.open_2 = (open2_fn)dlsym(RTLD_NEXT, "__open_2");
	real.open64_2 = (open2_fn)dlsym(RTLD_NEXT, "__open64_2");
	real.openat_2 = (openat2_fn)dlsym(RTLD_NEXT, "__openat_2");
	real.openat64_2 = (openat2_fn)dlsym(RTLD_NEXT, "__openat64_2");
	real.ioctl = (ioctl_fn)dlsym(RTLD_NEXT, "ioctl");
	real.ioctl_time64 = (ioctl_fn)dlsym(RTLD_NEXT, "__ioctl_time64");
	real.fstat = (fstat_fn)dlsym(RTLD_NEXT, "fstat");
	real.fstat64 = (fstat_fn)dlsym(RTLD_NEXT, "fstat64");
}

static void ensure_init(void)
{
	pthread_once(&init_once, init_real);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Is this path a candidate for emulation?  Only paths under /dev or with
 * "gpiochip" in them are stat()ed, so ordinary opens cost nothing extra.
 */
static int path_is_candidate(const char *path)
{
	if (!path)
		return 0;
	return strncmp(path, "/dev/", 5) == 0 || strstr(path, "gpiochip") != NULL;
}

/*
 * Look MAJ:MIN up in $FAKEGPIO_CHIPS; copy the server socket path into out.
 */
static int lookup_server(unsigned int maj, unsigned int min, char *out, size_t outlen)
{
	const char *env = getenv("FAKEGPIO_CHIPS");
	const char *p;

	if (!env)
		return 0;
	for (p = env; *p;) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		unsigned int a, b;
		int consumed = 0;

		if (sscanf(p, "%u:%u=%n", &a, &b, &consumed) == 2 && consumed > 0 &&
		    a == maj && b == min) {
			size_t plen = n - (size_t)consumed;

			if (plen + 1 > outlen)
				return 0;
			memcpy(out, p + consumed, plen);
			out[plen] = '\0';
			return 1;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/*
 * Make a connected stream socketpair; sv[1] (the end for the server) is
 * bound to a unique abstract name so that getpeername(sv[0]) identifies it.
 */
static int make_object_pair(char kind, unsigned int maj, unsigned int min,
			    int cloexec, int nonblock, int sv[2])
{
	struct sockaddr_un addr;
	int type = SOCK_STREAM;
	int tries;

	if (cloexec)
		type |= SOCK_CLOEXEC;
	if (socketpair(AF_UNIX, type, 0, sv) < 0)
		return -1;

	for (tries = 0; tries < 16; tries++) {
		unsigned long n;
		int len;

		pthread_mutex_lock(&name_lock);
		n = ++name_counter;
		pthread_mutex_unlock(&name_lock);

		memset(&addr, 0, sizeof(addr));
		addr.sun_family = AF_UNIX;
		len = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1,
			       FG_ABSTRACT_PREFIX "%c:%u:%u:%d:%lu:%llx", kind, maj, min,
			       (int)getpid(), n, (unsigned long long)mono_ns());
		if (len < 0 || (size_t)len >= sizeof(addr.sun_path) - 1)
			break;
		if (bind(sv[1], (struct sockaddr *)&addr,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) == 0) {
			if (nonblock) {
				int fl = fcntl(sv[0], F_GETFL);

				if (fl >= 0)
					fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
			}
			return 0;
		}
		if (errno != EADDRINUSE)
			break;
	}
	{
		int saved = errno;

		close(sv[0]);
		close(sv[1]);
		errno = saved ? saved : EIO;
	}
	return -1;
}

/*
 * Is fd one of ours?  Returns the kind character ('c' chip, 'h' handle,
 * 'e' event, 'r' v2 line request) or 0.
 */
static char fd_kind(int fd, unsigned int *maj, unsigned int *min)
{
	struct sockaddr_un addr;
	socklen_t len = sizeof(addr);
	const size_t plen = sizeof(FG_ABSTRACT_PREFIX) - 1;
	char name[sizeof(addr.sun_path) + 1];
	size_t nlen;
	char kind;
	unsigned int a = 0, b = 0;

	memset(&addr, 0, sizeof(addr));
	if (getpeername(fd, (struct sockaddr *)&addr, &len) < 0)
		return 0;
	if (addr.sun_family != AF_UNIX || len <= offsetof(struct sockaddr_un, sun_path) + 1)
		return 0;
	if (addr.sun_path[0] != '\0')
		return 0;
	nlen = len - offsetof(struct sockaddr_un, sun_path) - 1;
	if (nlen <= plen + 2 || nlen >= sizeof(name))
		return 0;
	memcpy(name, addr.sun_path + 1, nlen);
	name[nlen] = '\0';
	if (strncmp(name, FG_ABSTRACT_PREFIX, plen) != 0)
		return 0;
	kind = name[plen];
	if (kind != 'c' && kind != 'h' && kind != 'e' && kind != 'r')
		return 0;
	if (sscanf(name + plen + 1, ":%u:%u:", &a, &b) != 2)
		return 0;
	if (maj)
		*maj = a;
	if (min)
		*min = b;
	return kind;
}

static int write_all_fds(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	const char *p = buf;
	size_t off = 0;
	int first = 1;

	while (off < len) {
		struct msghdr mh;
		struct iovec iov;
		union {
			char buf[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} cbuf;
		ssize_t n;

		memset(&mh, 0, sizeof(mh));
		iov.iov_base = (void *)(p + off);
		iov.iov_len = len - off;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		if (first && nfds > 0) {
			struct cmsghdr *cm;

			memset(&cbuf, 0, sizeof(cbuf));
			mh.msg_control = cbuf.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
			memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
		}
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				/* object fd in O_NONBLOCK mode and momentarily full: wait */
				usleep(100);
				continue;
			}
			return -1;
		}
		first = 0;
		off += (size_t)n;
	}
	return 0;
}

static int read_reply(int sock, struct fg_reply *rep)
{
	char *p = (char *)rep;
	size_t off = 0;

	while (off < sizeof(*rep)) {
		ssize_t n = recv(sock, p + off, sizeof(*rep) - off, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0) {
			errno = ENODEV;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/*
 * Send msg over obj_fd (or a fresh connection for OPEN), with a private reply
 * channel and optionally an extra descriptor; wait for the reply.
 * Returns 0 with *rep filled, or -1 with errno set (transport failure).
 */
static int transact(int obj_fd, struct fg_msg *msg, int extra_fd, struct fg_reply *rep)
{
	int rp[2];
	int fds[2];
	int nfds = 0;
	int ret;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rp) < 0)
		return -1;
	fds[nfds++] = rp[1];
	if (extra_fd >= 0)
		fds[nfds++] = extra_fd;

	msg->magic = FG_MAGIC;
	msg->pid = (int32_t)getpid();
	ret = write_all_fds(obj_fd, msg, sizeof(*msg), fds, nfds);
	close(rp[1]);
	if (ret < 0) {
		int saved = errno;

		close(rp[0]);
		errno = (saved == EPIPE || saved == ECONNRESET || saved == ENOTCONN) ? ENODEV : saved;
		return -1;
	}
	ret = read_reply(rp[0], rep);
	{
		int saved = errno;

		close(rp[0]);
		errno = saved;
	}
	return ret;
}

static int connect_server(const char *path)
{
	struct sockaddr_un addr;
	int s;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -1;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	strcpy(addr.sun_path, path);
	while (connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno == EINTR)
			continue;
		close(s);
		errno = ENXIO; /* like a character node whose driver is gone */
		return -1;
	}
	return s;
}

/*
 * Decide whether (dirfd, path) names an emulated chip; if so emulate open().
 * Returns -2 when the call should go to the real open().
 */
static int maybe_open_chip(int dirfd, const char *path, int flags)
{
	struct stat st;
	char server[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct fg_msg msg;
	struct fg_reply rep;
	int accmode, amode = 0;
	int sv[2];
	int conn;
	unsigned int maj, min;

	if (!path_is_candidate(path) || (flags & O_PATH))
		return -2;
	if (fstatat(dirfd, path, &st, 0) < 0 || !S_ISCHR(st.st_mode))
		return -2;
	maj = major(st.st_rdev);
	min = minor(st.st_rdev);
	if (!lookup_server(maj, min, server, sizeof(server)))
		return -2;

	/* Permission check on the node, as the kernel's open would do. */
	accmode = flags & O_ACCMODE;
	if (accmode == O_RDONLY || accmode == O_RDWR)
		amode |= R_OK;
	if (accmode == O_WRONLY || accmode == O_RDWR)
		amode |= W_OK;
	if (amode && faccessat(dirfd, path, amode, AT_EACCESS) < 0)
		return -1; /* errno from faccessat (EACCES) */

	if (make_object_pair('c', maj, min, !!(flags & O_CLOEXEC), !!(flags & O_NONBLOCK), sv) < 0)
		return -1;
	conn = connect_server(server);
	if (conn < 0) {
		int saved = errno;

		close(sv[0]);
		close(sv[1]);
		errno = saved;
		return -1;
	}
	memset(&msg, 0, sizeof(msg));
	msg.op = FG_OP_OPEN;
	msg.t_ns = mono_ns();
	msg.arg = min;
	msg.flags = (uint32_t)flags;
	msg.len = (uint32_t)snprintf((char *)msg.payload, sizeof(msg.payload), "%u:%u", maj, min);
	if (transact(conn, &msg, sv[1], &rep) < 0) {
		int saved = errno;

		close(conn);
		close(sv[0]);
		close(sv[1]);
		errno = saved;
		return -1;
	}
	close(conn);
	close(sv[1]);
	if (rep.err) {
		close(sv[0]);
		errno = rep.err;
		return -1;
	}
	return sv[0];
}

static int get_mode(int flags, va_list ap)
{
	if (flags & (O_CREAT | __O_TMPFILE))
		return va_arg(ap, int);
	return 0;
}

FG_EXPORT int open(const char *path, int flags, ...)
{
	va_list ap;
	int mode, r;

	ensure_init();
	va_start(ap, flags);
	mode = get_mode(flags, ap);
	va_end(ap);
	r = maybe_open_chip(AT_FDCWD, path, flags);
	if (r != -2)
		return r;
	return real.open(path, flags, mode);
}

FG_EXPORT int open64(const char *path, int flags, ...)
{
	va_list ap;
	int mode, r;

	ensure_init();
	va_start(ap, flags);
	mode = get_mode(flags, ap);
	va_end(ap);
	r = maybe_open_chip(AT_FDCWD, path, flags);
	if (r != -2)
		return r;
	return (real.open64 ? real.open64 : real.open)(path, flags, mode);
}

FG_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int mode, r;

	ensure_init();
	va_start(ap, flags);
	mode = get_mode(flags, ap);
	va_end(ap);
	r = maybe_open_chip(dirfd, path, flags);
	if (r != -2)
		return r;
	return real.openat(dirfd, path, flags, mode);
}

FG_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	int mode, r;

	ensure_init();
	va_start(ap, flags);
	mode = get_mode(flags, ap);
	va_end(ap);
	r = maybe_open_chip(dirfd, path, flags);
	if (r != -2)
		return r;
	return (real.openat64 ? real.openat64 : real.openat)(dirfd, path, flags, mode);
}

FG_EXPORT int __open_2(const char *path, int flags)
{
	int r;

	ensure_init();
	r = maybe_open_chip(AT_FDCWD, path, flags);
	if (r != -2)
		return r;
	return real.open_2 ? real.open_2(path, flags) : real.open(path, flags);
}

FG_EXPORT int __open64_2(const char *path, int flags)
{
	int r;

	ensure_init();
	r = maybe_open_chip(AT_FDCWD, path, flags);
	if (r != -2)
		return r;
	return real.open64_2 ? real.open64_2(path, flags) : real.open(path, flags);
}

FG_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	int r;

	ensure_init();
	r = maybe_open_chip(dirfd, path, flags);
	if (r != -2)
		return r;
	return real.openat_2 ? real.openat_2(dirfd, path, flags) : real.openat(dirfd, path, flags);
}

FG_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	int r;

	ensure_init();
	r = maybe_open_chip(dirfd, path, flags);
	if (r != -2)
		return r;
	return real.openat64_2 ? real.openat64_2(dirfd, path, flags)
			       : real.openat(dirfd, path, flags);
}

/* Map an ioctl number to our op and the size of its argument struct. */
static int classify(unsigned long cmd, size_t *size)
{
	switch (cmd) {
	case GPIO_GET_CHIPINFO_IOCTL:
		*size = sizeof(struct gpiochip_info);
		return FG_OP_CHIPINFO;
	case GPIO_GET_LINEINFO_IOCTL:
		*size = sizeof(struct gpioline_info);
		return FG_OP_LINEINFO;
	case GPIO_GET_LINEHANDLE_IOCTL:
		*size = sizeof(struct gpiohandle_request);
		return FG_OP_LINEHANDLE;
	case GPIO_GET_LINEEVENT_IOCTL:
		*size = sizeof(struct gpioevent_request);
		return FG_OP_LINEEVENT;
	case GPIOHANDLE_GET_LINE_VALUES_IOCTL:
		*size = sizeof(struct gpiohandle_data);
		return FG_OP_GET_VALUES;
	case GPIOHANDLE_SET_LINE_VALUES_IOCTL:
		*size = sizeof(struct gpiohandle_data);
		return FG_OP_SET_VALUES;
	case GPIOHANDLE_SET_CONFIG_IOCTL:
		*size = sizeof(struct gpiohandle_config);
		return FG_OP_SET_CONFIG;
	case GPIO_GET_LINEINFO_WATCH_IOCTL:
		*size = sizeof(struct gpioline_info);
		return FG_OP_WATCH;
	case GPIO_GET_LINEINFO_UNWATCH_IOCTL:
		*size = sizeof(__u32);
		return FG_OP_UNWATCH;
	case GPIO_V2_GET_LINEINFO_IOCTL:
		*size = sizeof(struct gpio_v2_line_info);
		return FG_OP_V2_LINEINFO;
	case GPIO_V2_GET_LINEINFO_WATCH_IOCTL:
		*size = sizeof(struct gpio_v2_line_info);
		return FG_OP_V2_WATCH;
	case GPIO_V2_GET_LINE_IOCTL:
		*size = sizeof(struct gpio_v2_line_request);
		return FG_OP_V2_GET_LINE;
	case GPIO_V2_LINE_SET_CONFIG_IOCTL:
		*size = sizeof(struct gpio_v2_line_config);
		return FG_OP_V2_SET_CONFIG;
	case GPIO_V2_LINE_GET_VALUES_IOCTL:
		*size = sizeof(struct gpio_v2_line_values);
		return FG_OP_V2_GET_VALUES;
	case GPIO_V2_LINE_SET_VALUES_IOCTL:
		*size = sizeof(struct gpio_v2_line_values);
		return FG_OP_V2_SET_VALUES;
	default:
		*size = 0;
		return FG_OP_UNKNOWN;
	}
}

/*
 * Emulated ioctl.  Returns -2 when fd is not one of ours (caller falls back
 * to the real ioctl).
 */
static int fake_ioctl(int fd, unsigned long cmd, void *arg)
{
	struct fg_msg msg;
	struct fg_reply rep;
	unsigned int maj = 0, min = 0;
	size_t size = 0;
	int op;
	char kind;
	int newsv[2] = { -1, -1 };
	int extra = -1;
	uint64_t t_ns;

	if (_IOC_TYPE(cmd) != 0xB4)
		return -2;
	t_ns = mono_ns();
	kind = fd_kind(fd, &maj, &min);
	if (!kind)
		return -2;

	memset(&msg, 0, sizeof(msg));
	/* The kernel takes the command as an unsigned int: libgpiod 2.x passes it
	 * through an int, so the upper half of cmd may hold a sign extension. */
	op = classify((unsigned int)cmd, &size);
	msg.op = (uint32_t)op;
	msg.t_ns = t_ns;
	msg.arg = (uint32_t)cmd;
	if (op != FG_OP_UNKNOWN) {
		if (!arg) {
			errno = EFAULT;
			return -1;
		}
		memcpy(msg.payload, arg, size);
		msg.len = (uint32_t)size;
	}

	if (kind == 'c' && (op == FG_OP_LINEHANDLE || op == FG_OP_LINEEVENT ||
			    op == FG_OP_V2_GET_LINE)) {
		/* The new descriptor: anon inode fds are O_RDONLY | O_CLOEXEC. */
		char nk = op == FG_OP_LINEHANDLE ? 'h' : op == FG_OP_LINEEVENT ? 'e' : 'r';

		if (make_object_pair(nk, maj, min, 1, 0, newsv) < 0)
			return -1;
		extra = newsv[1];
	}

	if (transact(fd, &msg, extra, &rep) < 0) {
		int saved = errno;

		if (newsv[0] >= 0) {
			close(newsv[0]);
			close(newsv[1]);
		}
		errno = saved;
		return -1;
	}
	if (newsv[1] >= 0)
		close(newsv[1]);
	if (rep.err) {
		if (newsv[0] >= 0)
			close(newsv[0]);
		errno = rep.err;
		return -1;
	}
	if (op != FG_OP_UNKNOWN && rep.len) {
		size_t n = rep.len < size ? rep.len : size;

		memcpy(arg, rep.payload, n);
	}
	if (op == FG_OP_LINEHANDLE && newsv[0] >= 0)
		((struct gpiohandle_request *)arg)->fd = newsv[0];
	else if (op == FG_OP_LINEEVENT && newsv[0] >= 0)
		((struct gpioevent_request *)arg)->fd = newsv[0];
	else if (op == FG_OP_V2_GET_LINE && newsv[0] >= 0)
		((struct gpio_v2_line_request *)arg)->fd = newsv[0];
	return 0;
}

FG_EXPORT int ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;
	int r;

	ensure_init();
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	r = fake_ioctl(fd, cmd, arg);
	if (r != -2)
		return r;
	return real.ioctl(fd, cmd, arg);
}

/* 32-bit glibc with 64-bit time_t redirects ioctl() here. */
FG_EXPORT int __ioctl_time64(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;
	int r;

	ensure_init();
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	r = fake_ioctl(fd, cmd, arg);
	if (r != -2)
		return r;
	return (real.ioctl_time64 ? real.ioctl_time64 : real.ioctl)(fd, cmd, arg);
}

/* fstat() of a chip descriptor reports the character device, not the socket. */
static void patch_stat(int fd, struct stat *st)
{
	unsigned int maj, min;

	if (!S_ISSOCK(st->st_mode))
		return;
	if (fd_kind(fd, &maj, &min) != 'c')
		return;
	st->st_mode = (st->st_mode & ~(mode_t)S_IFMT) | S_IFCHR;
	st->st_rdev = makedev(maj, min);
}

FG_EXPORT int fstat(int fd, struct stat *st)
{
	int r;

	ensure_init();
	r = real.fstat(fd, st);
	if (r == 0)
		patch_stat(fd, st);
	return r;
}

FG_EXPORT int fstat64(int fd, struct stat64 *st)
{
	int r;

	ensure_init();
	r = (real.fstat64 ? real.fstat64 : real.fstat)(fd, (struct stat *)st);
	if (r == 0 && sizeof(struct stat64) == sizeof(struct stat))
		patch_stat(fd, (struct stat *)st);
	return r;
}
