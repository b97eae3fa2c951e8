/* LD_PRELOAD shim for Open MPI 4.1 (btl self,tcp) on oversubscribed cores: let a rank that has
 * nothing to do sleep in the kernel instead of spinning.
 *
 * How Open MPI waits: a blocking MPI call loops on opal_progress(). Each pass runs the libevent
 * loop non-blocking (opal_event_loop(opal_sync_event_base, EVLOOP_ONCE | EVLOOP_NONBLOCK)), which
 * with Open MPI's default event backend (`opal_event_include` = poll) is one poll(fds, n, 0) over
 * the TCP BTL's sockets; when the pass found nothing and `mpi_yield_when_idle` is set,
 * opal_progress() calls sched_yield(). With more ranks than cores, every waiting rank still
 * burns its whole share of a core (sched_yield of a lone runnable task returns at once), and a
 * rank whose message has arrived may wait for a spinning neighbour's slice.
 *
 * What this shim does: it wraps poll() (and epoll_wait(), for an epoll backend). A call with
 * timeout 0 that finds nothing counts as an empty poll; after IDLE_POLLS consecutive empty polls
 * of the same thread (default 50), the call instead sleeps in ppoll() over the same descriptors
 * with a timeout of IDLE_CAP_US (default 1000 us). The kernel wakes the rank as soon as one of
 * those descriptors is ready, which is exactly what the non-blocking poll would have found next:
 * for `btl self,tcp` every remote completion (data to read, room to write, a connection) is an
 * event on these descriptors, so no event is seen later than it would have been by spinning.
 * The cap only bounds how long progress that is not descriptor-driven waits. A poll that finds
 * something resets the count. sched_yield() is passed through (and counted).
 *
 * Environment: COMMCOST_IDLE_POLLS (default 50), COMMCOST_IDLE_CAP_US (default 1000),
 * COMMCOST_IDLE_STATS=1 prints, at exit, the process's counts to stderr.
 *
 * Build: cc -O2 -shared -fPIC -o ompi_idle_sleep.so ompi_idle_sleep.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*epoll_wait_fn)(int, struct epoll_event *, int, int);
typedef int (*yield_fn)(void);

static poll_fn real_poll;
static ppoll_fn real_ppoll;
static epoll_wait_fn real_epoll_wait;
static yield_fn real_yield;
static unsigned idle_polls = 50;
static long cap_ns = 1000000L;
static int stats;
static struct timespec t0; /* process start (constructor), for the stats line */

static __thread unsigned empty; /* consecutive empty non-blocking polls of this thread */

/* process-wide counts (only for COMMCOST_IDLE_STATS; relaxed atomics) */
static unsigned long n_poll0, n_empty, n_sleep, n_sleep_woken, n_yield;

#define COUNT(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

__attribute__((constructor)) static void init(void)
{
    real_poll = (poll_fn)dlsym(RTLD_NEXT, "poll");
    real_ppoll = (ppoll_fn)dlsym(RTLD_NEXT, "ppoll");
    real_epoll_wait = (epoll_wait_fn)dlsym(RTLD_NEXT, "epoll_wait");
    real_yield = (yield_fn)dlsym(RTLD_NEXT, "sched_yield");
    const char *s = getenv("COMMCOST_IDLE_POLLS");
    if (s && *s)
        idle_polls = (unsigned)strtoul(s, NULL, 10);
    s = getenv("COMMCOST_IDLE_CAP_US");
    if (s && *s)
        cap_ns = strtol(s, NULL, 10) * 1000L;
    s = getenv("COMMCOST_IDLE_STATS");
    stats = s && *s == '1';
    clock_gettime(CLOCK_MONOTONIC, &t0);
}

__attribute__((destructor)) static void fini(void)
{
    if (stats) {
        char host[64] = "?";
        struct rusage ru;
        struct timespec t1;
        gethostname(host, sizeof host);
        getrusage(RUSAGE_SELF, &ru);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double cpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec
                     + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
        double wall = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        fprintf(stderr,
                "ompi_idle_sleep[%s pid %d]: %lu non-blocking polls, %lu empty, %lu sleeps "
                "(%lu woken by a descriptor), %lu sched_yield; cpu %.2f s of %.2f s wall\n",
                host, (int)getpid(), n_poll0, n_empty, n_sleep, n_sleep_woken, n_yield, cpu, wall);
    }
}

/* sleep in the kernel until one of fds is ready, at most cap_ns; returns ppoll's result */
static int idle_sleep(struct pollfd *fds, nfds_t n)
{
    struct timespec ts = {cap_ns / 1000000000L, cap_ns % 1000000000L};
    int r = real_ppoll(fds, n, &ts, NULL);
    if (stats) {
        COUNT(n_sleep);
        if (r > 0)
            COUNT(n_sleep_woken);
    }
    return r;
}

/* After a non-blocking poll that returned r: whether the caller should now sleep (the
 * idle_polls-th empty poll in a row); counts the polls and resets the run on any result. */
static int time_to_sleep(int r)
{
    if (stats)
        COUNT(n_poll0);
    if (r != 0) {
        empty = 0;
        return 0;
    }
    if (stats)
        COUNT(n_empty);
    return ++empty >= idle_polls;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (!real_poll)
        init();
    if (timeout != 0 || idle_polls == 0)
        return real_poll(fds, n, timeout);
    int r = real_poll(fds, n, 0);
    if (!time_to_sleep(r))
        return r;
    r = idle_sleep(fds, n);
    if (r > 0)
        empty = 0;
    return r;
}

int epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout)
{
    if (!real_epoll_wait)
        init();
    if (timeout != 0 || idle_polls == 0)
        return real_epoll_wait(epfd, events, maxevents, timeout);
    int r = real_epoll_wait(epfd, events, maxevents, 0);
    if (!time_to_sleep(r))
        return r;
    struct pollfd p = {epfd, POLLIN, 0};
    if (idle_sleep(&p, 1) > 0) {
        empty = 0;
        return real_epoll_wait(epfd, events, maxevents, 0);
    }
    return 0;
}

int sched_yield(void)
{
    if (!real_yield)
        init();
    if (stats)
        COUNT(n_yield);
    return real_yield();
}
