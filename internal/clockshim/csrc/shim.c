/*
 * locklab's clock shim, preloaded into a server the lab starts: the
 * server's wall clock (CLOCK_REALTIME and its coarse form, gettimeofday,
 * time) reads the kernel's plus an offset in milliseconds, which the lab
 * writes into the file LOCKLAB_CLOCK_FILE names and the shim maps: three
 * little-endian int64s, the offset, a drift in parts per million (the
 * clock runs that much fast, or slow if negative) and the kernel's wall
 * clock in milliseconds when the drift began. Monotonic clocks are left
 * alone.
 *
 * Every call goes to the kernel through syscall(): no dlsym, and so no
 * allocation inside an allocator that asks for the time (jemalloc).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const volatile int64_t *offset_file;
static int mapped;

/* The file's three fields. */
enum { OFFSET, DRIFT_PPM, DRIFT_FROM, FIELDS };

static int64_t offset_ms(int64_t now_ms) {
	if (!__atomic_load_n(&mapped, __ATOMIC_ACQUIRE)) {
		const char *path = getenv("LOCKLAB_CLOCK_FILE");
		if (path != NULL) {
			long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
			if (fd >= 0) {
				void *p = mmap(NULL, FIELDS * sizeof(int64_t), PROT_READ, MAP_SHARED, (int)fd, 0);
				syscall(SYS_close, fd);
				if (p != MAP_FAILED) {
					offset_file = p;
				}
			}
		}
		__atomic_store_n(&mapped, 1, __ATOMIC_RELEASE);
	}
	if (offset_file == NULL) {
		return 0;
	}
	/* The drift is written after its start, and cleared before it. */
	int64_t ppm = __atomic_load_n(&offset_file[DRIFT_PPM], __ATOMIC_ACQUIRE);
	int64_t ms = __atomic_load_n(&offset_file[OFFSET], __ATOMIC_RELAXED);
	if (ppm != 0) {
		int64_t from = __atomic_load_n(&offset_file[DRIFT_FROM], __ATOMIC_RELAXED);
		ms += (now_ms - from) * ppm / 1000000;
	}
	return ms;
}

static void shift(struct timespec *ts) {
	int64_t ms = offset_ms((int64_t)ts->tv_sec * 1000 + ts->tv_nsec / 1000000);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000;
	if (ts->tv_nsec < 0) {
		ts->tv_nsec += 1000000000;
		ts->tv_sec--;
	} else if (ts->tv_nsec >= 1000000000) {
		ts->tv_nsec -= 1000000000;
		ts->tv_sec++;
	}
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	long r = syscall(SYS_clock_gettime, id, ts);
	if (r == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		shift(ts);
	}
	return (int)r;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
	(void)tz;
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
		return -1;
	}
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t) {
	struct timespec ts;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
		return (time_t)-1;
	}
	if (t != NULL) {
		*t = ts.tv_sec;
	}
	return ts.tv_sec;
}
