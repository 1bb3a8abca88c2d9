// SPDX-License-Identifier: MIT
/*
 * uapi_test.c - raw GPIO uAPI v1 checks against the emulator (run by
 * selftest.sh inside gpio-emu).  Talks ioctl() directly, like libgpiod does,
 * to pin down errno values and lifetime rules that the command-line tools do
 * not reach.
 *
 * Usage: uapi_test CHIP_PATH INPUT_ONLY_OFFSET
 * Expects a chip of at least 8 lines whose INPUT_ONLY_OFFSET line is input-only,
 * and the control socket in $FALLGUARD_GPIO_CONTROL.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
static int checks;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		checks++;                                                  \
		if (!(cond)) {                                             \
			failures++;                                        \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf(" (errno %d %s)\n", errno, strerror(errno)); \
		}                                                          \
	} while (0)

#define EXPECT_ERR(call, err, what)                                        \
	do {                                                               \
		errno = 0;                                                 \
		int r_ = (call);                                           \
		CHECK(r_ < 0 && errno == (err), "%s: want %s, got r=%d", what, \
		      strerror(err), r_);                                  \
	} while (0)

static const char *ctl_path;
static char chip_name[64];

/* One control-socket command; reply copied to out. */
static int ctl_raw(const char *cmd, char *out, size_t outlen);

/* "VERB OFFSET [ARGS]" -> "VERB CHIP:OFFSET [ARGS]" */
static int ctl(const char *cmd, char *out, size_t outlen)
{
	char full[256];
	const char *sp = strchr(cmd, ' ');

	if (!sp)
		return ctl_raw(cmd, out, outlen);
	snprintf(full, sizeof(full), "%.*s %s:%s", (int)(sp - cmd), cmd, chip_name, sp + 1);
	return ctl_raw(full, out, outlen);
}

static int ctl_raw(const char *cmd, char *out, size_t outlen)
{
	struct sockaddr_un a;
	char buf[512];
	size_t n = 0;
	int s = socket(AF_UNIX, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", ctl_path);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0)
		return -1;
	if (write(s, cmd, strlen(cmd)) < 0 || write(s, "\n", 1) < 0) {
		close(s);
		return -1;
	}
	while (n < sizeof(buf) - 1) {
		ssize_t r = read(s, buf + n, 1);

		if (r <= 0 || buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	close(s);
	if (out)
		snprintf(out, outlen, "%s", buf);
	return strncmp(buf, "ok", 2) == 0 ? 0 : -1;
}

static unsigned long long mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* t_ns of the last "level" record of chip_name:offset in $FALLGUARD_GPIO_LOG */
static unsigned long long last_level_t_ns(unsigned int offset)
{
	const char *path = getenv("FALLGUARD_GPIO_LOG");
	char line[1024], want_chip[96], want_off[32];
	unsigned long long t = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return 0;
	snprintf(want_chip, sizeof(want_chip), "\"chip\": \"%s\"", chip_name);
	snprintf(want_off, sizeof(want_off), "\"offset\": %u,", offset);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "\"t_ns\": ");

		if (p && strstr(line, want_chip) && strstr(line, want_off) &&
		    strstr(line, "\"event\": \"level\""))
			t = strtoull(p + 8, NULL, 10);
	}
	fclose(f);
	return t;
}

static int request(int chip, unsigned int off, unsigned int flags, int val, const char *label)
{
	struct gpiohandle_request req;

	memset(&req, 0, sizeof(req));
	req.lineoffsets[0] = off;
	req.lines = 1;
	req.flags = flags;
	req.default_values[0] = (unsigned char)val;
	snprintf(req.consumer_label, sizeof(req.consumer_label), "%s", label);
	if (ioctl(chip, GPIO_GET_LINEHANDLE_IOCTL, &req) < 0)
		return -1;
	return req.fd;
}

static int event_request(int chip, unsigned int off, unsigned int hflags, unsigned int eflags)
{
	struct gpioevent_request req;

	memset(&req, 0, sizeof(req));
	req.lineoffset = off;
	req.handleflags = hflags;
	req.eventflags = eflags;
	snprintf(req.consumer_label, sizeof(req.consumer_label), "uapi-test");
	if (ioctl(chip, GPIO_GET_LINEEVENT_IOCTL, &req) < 0)
		return -1;
	return req.fd;
}

static int lineinfo(int chip, unsigned int off, struct gpioline_info *info)
{
	memset(info, 0, sizeof(*info));
	info->line_offset = off;
	return ioctl(chip, GPIO_GET_LINEINFO_IOCTL, info);
}

int main(int argc, char **argv)
{
	struct gpiochip_info ci;
	struct gpioline_info li;
	struct gpiohandle_request hr;
	struct gpiohandle_data hd;
	struct gpiohandle_config hc;
	struct gpioevent_data ev[32];
	struct stat st;
	char reply[512];
	unsigned int in_only;
	int chip, chip2, h, h2, e;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: %s CHIP_PATH INPUT_ONLY_OFFSET\n", argv[0]);
		return 2;
	}
	in_only = (unsigned int)atoi(argv[2]);
	ctl_path = getenv("FALLGUARD_GPIO_CONTROL");
	if (!ctl_path) {
		fprintf(stderr, "FALLGUARD_GPIO_CONTROL not set\n");
		return 2;
	}

	{
		const char *b = strrchr(argv[1], '/');

		snprintf(chip_name, sizeof(chip_name), "%s", b ? b + 1 : argv[1]);
	}
	chip = open(argv[1], O_RDWR | O_CLOEXEC);
	CHECK(chip >= 0, "open %s", argv[1]);
	if (chip < 0)
		return 1;
	CHECK(fstat(chip, &st) == 0 && S_ISCHR(st.st_mode), "fstat(chip) is a char device");
	CHECK(fcntl(chip, F_GETFD) & FD_CLOEXEC, "O_CLOEXEC honoured");
	memset(&ci, 0, sizeof(ci));
	CHECK(ioctl(chip, GPIO_GET_CHIPINFO_IOCTL, &ci) == 0 && ci.lines >= 8, "chipinfo");

	/* line info */
	EXPECT_ERR(lineinfo(chip, ci.lines, &li), EINVAL, "lineinfo offset out of range");
	CHECK(lineinfo(chip, 3, &li) == 0 && !(li.flags & GPIOLINE_FLAG_KERNEL), "lineinfo 3 unused");

	/* handle request validation */
	EXPECT_ERR(request(chip, 3, GPIOHANDLE_REQUEST_INPUT | GPIOHANDLE_REQUEST_OUTPUT, 0, "t"),
		   EINVAL, "input|output");
	EXPECT_ERR(request(chip, 3, GPIOHANDLE_REQUEST_INPUT | GPIOHANDLE_REQUEST_OPEN_DRAIN, 0, "t"),
		   EINVAL, "open-drain input");
	EXPECT_ERR(request(chip, 3, GPIOHANDLE_REQUEST_BIAS_PULL_UP, 0, "t"), EINVAL,
		   "bias without direction");
	EXPECT_ERR(request(chip, 3, GPIOHANDLE_REQUEST_INPUT | GPIOHANDLE_REQUEST_BIAS_PULL_UP |
				    GPIOHANDLE_REQUEST_BIAS_PULL_DOWN, 0, "t"),
		   EINVAL, "two biases");
	EXPECT_ERR(request(chip, 3, 1u << 8, 0, "t"), EINVAL, "unknown flag");
	EXPECT_ERR(request(chip, ci.lines, GPIOHANDLE_REQUEST_INPUT, 0, "t"), EINVAL,
		   "missing offset");
	memset(&hr, 0, sizeof(hr));
	hr.flags = GPIOHANDLE_REQUEST_INPUT;
	EXPECT_ERR(ioctl(chip, GPIO_GET_LINEHANDLE_IOCTL, &hr), EINVAL, "zero lines");
	EXPECT_ERR(request(chip, in_only, GPIOHANDLE_REQUEST_OUTPUT, 1, "t"), EIO,
		   "output on input-only line");
	CHECK(lineinfo(chip, in_only, &li) == 0 && !(li.flags & GPIOLINE_FLAG_KERNEL),
	      "failed request left the line free");
	memset(&hr, 0, sizeof(hr));
	hr.lines = 2;
	hr.lineoffsets[0] = 4;
	hr.lineoffsets[1] = 4;
	hr.flags = GPIOHANDLE_REQUEST_INPUT;
	EXPECT_ERR(ioctl(chip, GPIO_GET_LINEHANDLE_IOCTL, &hr), EBUSY, "same line twice");
	CHECK(lineinfo(chip, 4, &li) == 0 && !(li.flags & GPIOLINE_FLAG_KERNEL),
	      "half-done request rolled back");

	/* output handle, values, EBUSY, EPERM, active-low */
	h = request(chip, 5, GPIOHANDLE_REQUEST_OUTPUT | GPIOHANDLE_REQUEST_ACTIVE_LOW, 1, "buzzer");
	CHECK(h >= 0, "request output active-low");
	CHECK(fcntl(h, F_GETFD) & FD_CLOEXEC, "handle fd is O_CLOEXEC");
	CHECK(ctl("get 5", reply, sizeof(reply)) == 0 && strstr(reply, "level=0") &&
		      strstr(reply, "consumer=\"buzzer\""),
	      "active-low output logical 1 is physical 0: %s", reply);
	CHECK(lineinfo(chip, 5, &li) == 0 &&
		      (li.flags & (GPIOLINE_FLAG_KERNEL | GPIOLINE_FLAG_IS_OUT | GPIOLINE_FLAG_ACTIVE_LOW)) ==
			      (GPIOLINE_FLAG_KERNEL | GPIOLINE_FLAG_IS_OUT | GPIOLINE_FLAG_ACTIVE_LOW) &&
		      strcmp(li.consumer, "buzzer") == 0,
	      "lineinfo of held line");
	EXPECT_ERR(request(chip, 5, GPIOHANDLE_REQUEST_INPUT, 0, "other"), EBUSY, "busy line");
	memset(&hd, 0, sizeof(hd));
	CHECK(ioctl(h, GPIOHANDLE_GET_LINE_VALUES_IOCTL, &hd) == 0 && hd.values[0] == 1,
	      "get logical value");
	hd.values[0] = 0;
	{
		unsigned long long t0 = mono(), t1, t_log;

		CHECK(ioctl(h, GPIOHANDLE_SET_LINE_VALUES_IOCTL, &hd) == 0, "set value");
		t1 = mono();
		t_log = last_level_t_ns(5);
		CHECK(t_log >= t0 && t_log <= t1,
		      "log t_ns %llu taken inside the caller's ioctl [%llu, %llu]", t_log, t0, t1);
	}
	CHECK(ctl("get 5", reply, sizeof(reply)) == 0 && strstr(reply, "level=1"),
	      "active-low logical 0 is physical 1: %s", reply);
	EXPECT_ERR(ioctl(chip, GPIOHANDLE_GET_LINE_VALUES_IOCTL, &hd), EINVAL,
		   "handle ioctl on chip fd");
	EXPECT_ERR(ioctl(h, GPIO_GET_CHIPINFO_IOCTL, &ci), EINVAL, "chip ioctl on handle fd");
	EXPECT_ERR(ioctl(0, GPIO_GET_CHIPINFO_IOCTL, &ci), ENOTTY, "gpio ioctl on non-gpio fd");

	/* set config: to input with pull-up; set on an input is EPERM */
	memset(&hc, 0, sizeof(hc));
	hc.flags = GPIOHANDLE_REQUEST_INPUT | GPIOHANDLE_REQUEST_BIAS_PULL_UP;
	CHECK(ioctl(h, GPIOHANDLE_SET_CONFIG_IOCTL, &hc) == 0, "set config input pull-up");
	hd.values[0] = 1;
	EXPECT_ERR(ioctl(h, GPIOHANDLE_SET_LINE_VALUES_IOCTL, &hd), EPERM, "set on input");
	CHECK(lineinfo(chip, 5, &li) == 0 && !(li.flags & GPIOLINE_FLAG_IS_OUT) &&
		      (li.flags & GPIOLINE_FLAG_BIAS_PULL_UP),
	      "config visible in lineinfo");
	hc.flags = GPIOHANDLE_REQUEST_INPUT | GPIOHANDLE_REQUEST_OUTPUT;
	EXPECT_ERR(ioctl(h, GPIOHANDLE_SET_CONFIG_IOCTL, &hc), EINVAL, "bad config flags");

	/* close releases at once: immediate re-request succeeds */
	close(h);
	h = request(chip, 5, GPIOHANDLE_REQUEST_OUTPUT, 0, "again");
	CHECK(h >= 0, "re-request right after close");

	/* dup keeps the request alive; fork inherits it; last close releases */
	h2 = dup(h);
	close(h);
	CHECK(lineinfo(chip, 5, &li) == 0 && (li.flags & GPIOLINE_FLAG_KERNEL), "held via dup");
	pid = fork();
	if (pid == 0) {
		usleep(200000);
		_exit(0);
	}
	close(h2);
	CHECK(lineinfo(chip, 5, &li) == 0 && (li.flags & GPIOLINE_FLAG_KERNEL),
	      "still held by the child");
	waitpid(pid, NULL, 0);
	CHECK(lineinfo(chip, 5, &li) == 0 && !(li.flags & GPIOLINE_FLAG_KERNEL),
	      "released when the child exits");

	/* the emulated line state is shared with a second open of the chip */
	chip2 = open(argv[1], O_RDONLY);
	CHECK(chip2 >= 0, "second open");
	h = request(chip2, 6, GPIOHANDLE_REQUEST_OUTPUT, 1, "second");
	CHECK(h >= 0 && lineinfo(chip, 6, &li) == 0 && strcmp(li.consumer, "second") == 0,
	      "request via second fd seen via first");
	close(chip2);
	CHECK(lineinfo(chip, 6, &li) == 0 && (li.flags & GPIOLINE_FLAG_KERNEL),
	      "closing the chip fd does not release its lines");
	close(h);

	/* empty consumer label shows as "?" */
	h = request(chip, 6, GPIOHANDLE_REQUEST_INPUT, 0, "");
	CHECK(h >= 0 && lineinfo(chip, 6, &li) == 0 && strcmp(li.consumer, "?") == 0,
	      "empty label -> \"?\" (got \"%s\")", li.consumer);
	close(h);

	/* events: validation */
	EXPECT_ERR(event_request(chip, 7, GPIOHANDLE_REQUEST_OUTPUT, GPIOEVENT_REQUEST_BOTH_EDGES),
		   EINVAL, "event on output");
	EXPECT_ERR(event_request(chip, 7, GPIOHANDLE_REQUEST_INPUT, 4), EINVAL, "bad event flag");
	EXPECT_ERR(event_request(chip, ci.lines + 1, GPIOHANDLE_REQUEST_INPUT,
				 GPIOEVENT_REQUEST_BOTH_EDGES),
		   EINVAL, "event offset out of range");

	/* events: active-low pull-up button, rising only = press */
	CHECK(ctl("release 7", NULL, 0) == 0, "release 7");
	e = event_request(chip, 7,
			  GPIOHANDLE_REQUEST_INPUT | GPIOHANDLE_REQUEST_ACTIVE_LOW |
				  GPIOHANDLE_REQUEST_BIAS_PULL_UP,
			  GPIOEVENT_REQUEST_RISING_EDGE);
	CHECK(e >= 0, "event request");
	{
		struct pollfd p = { .fd = e, .events = POLLIN | POLLPRI };

		CHECK(poll(&p, 1, 50) == 0, "no event after request (pull-up change is silent)");
		memset(&hd, 0, sizeof(hd));
		CHECK(ioctl(e, GPIOHANDLE_GET_LINE_VALUES_IOCTL, &hd) == 0 && hd.values[0] == 0,
		      "unpressed button reads logical 0");
		hd.values[0] = 1;
		EXPECT_ERR(ioctl(e, GPIOHANDLE_SET_LINE_VALUES_IOCTL, &hd), EINVAL,
			   "set on event fd");
		CHECK(ctl("press 7", NULL, 0) == 0, "press 7");
		CHECK(poll(&p, 1, 1000) == 1 && (p.revents & POLLIN), "poll sees the press");
		CHECK(read(e, ev, sizeof(ev)) == (ssize_t)sizeof(ev[0]) &&
			      ev[0].id == GPIOEVENT_EVENT_RISING_EDGE,
		      "press = logical rising edge");
		CHECK(ioctl(e, GPIOHANDLE_GET_LINE_VALUES_IOCTL, &hd) == 0 && hd.values[0] == 1,
		      "pressed button reads logical 1");
		CHECK(ctl("release 7", NULL, 0) == 0, "release 7");
		CHECK(poll(&p, 1, 100) == 0, "release is not reported for rising-only");
		/* FIFO of 16: 20 rising edges unread -> 16 delivered */
		CHECK(ctl("bounce 7 40 100 1", reply, sizeof(reply)) == 0, "bounce 40: %s", reply);
		{
			ssize_t n = read(e, ev, sizeof(ev));
			int i, mono = 1;

			for (i = 1; i < n / (ssize_t)sizeof(ev[0]); i++)
				if (ev[i].timestamp <= ev[i - 1].timestamp)
					mono = 0;
			CHECK(n == 16 * (ssize_t)sizeof(ev[0]) && mono,
			      "kfifo holds 16 events, got %zd bytes", n);
		}
		CHECK(poll(&p, 1, 20) == 0, "the rest were dropped");
	}
	{
		struct timespec ts;
		unsigned long long now;

		CHECK(ctl("press 7", NULL, 0) == 0, "press 7 again");
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
		CHECK(read(e, ev, sizeof(ev[0])) == (ssize_t)sizeof(ev[0]) &&
			      ev[0].timestamp <= now && now - ev[0].timestamp < 50000000ull,
		      "event timestamp is CLOCK_MONOTONIC");
		ctl("release 7", NULL, 0);
	}
	{
		int fl = fcntl(e, F_GETFL);

		fcntl(e, F_SETFL, fl | O_NONBLOCK);
		EXPECT_ERR((int)read(e, ev, sizeof(ev)), EAGAIN, "nonblocking read with no events");
	}
	close(e);

	/* line info watch */
	memset(&li, 0, sizeof(li));
	li.line_offset = 3;
	CHECK(ioctl(chip, GPIO_GET_LINEINFO_WATCH_IOCTL, &li) == 0, "watch line 3");
	EXPECT_ERR(ioctl(chip, GPIO_GET_LINEINFO_WATCH_IOCTL, &li), EBUSY, "watch twice");
	h = request(chip, 3, GPIOHANDLE_REQUEST_OUTPUT, 1, "watched");
	close(h);
	{
		struct gpioline_info_changed chg[2];
		struct pollfd p = { .fd = chip, .events = POLLIN };

		CHECK(poll(&p, 1, 1000) == 1, "chip fd readable after watched change");
		usleep(20000);
		/* one record per read: the kernel's v1 watch read may return only one */
		CHECK(read(chip, &chg[0], sizeof(chg[0])) == (ssize_t)sizeof(chg[0]) &&
			      read(chip, &chg[1], sizeof(chg[1])) == (ssize_t)sizeof(chg[1]) &&
			      chg[0].event_type == GPIOLINE_CHANGED_REQUESTED &&
			      strcmp(chg[0].info.consumer, "watched") == 0 &&
			      chg[1].event_type == GPIOLINE_CHANGED_RELEASED,
		      "requested + released records");
	}
	{
		__u32 off = 3;

		CHECK(ioctl(chip, GPIO_GET_LINEINFO_UNWATCH_IOCTL, &off) == 0, "unwatch");
		EXPECT_ERR(ioctl(chip, GPIO_GET_LINEINFO_UNWATCH_IOCTL, &off), EBUSY, "unwatch twice");
	}
	close(chip);

	printf("uapi_test: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
