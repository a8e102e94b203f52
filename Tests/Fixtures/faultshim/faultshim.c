// An LD_PRELOAD shim for fault tests: once armed, writes to (or syncs of) files whose path ends in a chosen suffix
// fail with a chosen errno, as on a full disk or a failing device.
//
// The tests compile it at run time (cc -shared -fPIC faultshim.c -o faultshim.so -ldl) and load it into a child
// process only. The child arms it through faultshim_arm, found with dlsym, after the commits that must survive.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { FAULTSHIM_WRITES = 1, FAULTSHIM_SYNCS = 2 };

static int armed;                // whether calls may fail at all
static long remaining;           // calls of the armed kinds that still succeed before failures start
static int failure_errno;        // what failing calls set errno to
static int kinds;                // FAULTSHIM_WRITES, FAULTSHIM_SYNCS or both
static char suffix[64];          // only descriptors of files whose path ends with this fail
static long failures;            // how many calls failed

// Arms the shim: after `after` more matching calls succeed, every matching call fails with `error`.
void faultshim_arm(long after, int error, int which, const char *path_suffix) {
    remaining = after;
    failure_errno = error;
    kinds = which;
    snprintf(suffix, sizeof suffix, "%s", path_suffix);
    failures = 0;
    armed = 1;
}

// Disarms the shim and returns how many calls it failed.
long faultshim_disarm(void) {
    armed = 0;
    return failures;
}

// Whether a call of this kind on this descriptor (-1: any file) fails now; counts it down otherwise.
static int should_fail(int fd, int kind) {
    if (!armed || !(kinds & kind)) return 0;
    if (fd >= 0) {
        char link[64], path[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t length = readlink(link, path, sizeof path - 1);
        if (length < 0) return 0;
        path[length] = 0;
        size_t wanted = strlen(suffix);
        if ((size_t)length < wanted || strcmp(path + length - wanted, suffix) != 0) return 0;
    }
    if (remaining > 0) {
        remaining--;
        return 0;
    }
    failures++;
    errno = failure_errno;
    return 1;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

ssize_t write(int fd, const void *buffer, size_t count) {
    if (should_fail(fd, FAULTSHIM_WRITES)) return -1;
    return NEXT(write)(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    if (should_fail(fd, FAULTSHIM_WRITES)) return -1;
    return NEXT(pwrite)(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) {
    if (should_fail(fd, FAULTSHIM_WRITES)) return -1;
    return NEXT(pwrite64)(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    if (should_fail(fd, FAULTSHIM_WRITES)) return -1;
    return NEXT(writev)(fd, vector, count);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count, off_t offset) {
    if (should_fail(fd, FAULTSHIM_WRITES)) return -1;
    return NEXT(pwritev)(fd, vector, count, offset);
}

ssize_t pwritev64(int fd, const struct iovec *vector, int count, off_t offset) {
    if (should_fail(fd, FAULTSHIM_WRITES)) return -1;
    return NEXT(pwritev64)(fd, vector, count, offset);
}

int fsync(int fd) {
    if (should_fail(fd, FAULTSHIM_SYNCS)) return -1;
    return NEXT(fsync)(fd);
}

int fdatasync(int fd) {
    if (should_fail(fd, FAULTSHIM_SYNCS)) return -1;
    return NEXT(fdatasync)(fd);
}

int msync(void *address, size_t length, int flags) {
    if (should_fail(-1, FAULTSHIM_SYNCS)) return -1;
    return NEXT(msync)(address, length, flags);
}
