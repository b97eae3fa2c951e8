/* LD_PRELOAD shim for MPICH ch4:ucx on oversubscribed cores: yield the CPU when UCX has nothing
 * to do.
 *
 * MPICH 4.0's ch4 device busy-polls ucp_worker_progress() while it waits, and never gives the
 * core away. With more ranks than cores (the emulated cluster: 4 or 8 "nodes" on 2 cores), a
 * rank whose message has arrived then waits for the scheduler's time slice (milliseconds)
 * until a spinning neighbour is preempted. This shim wraps ucp_worker_progress(): when a call
 * made no progress (returns 0), it calls sched_yield(), as Open MPI does with
 * `mpi_yield_when_idle 1`. Build: cc -O2 -shared -fPIC -o ucx_yield.so ucx_yield.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    if (!real) {
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (!real)
            return 0;
    }
    unsigned n = real(worker);
    if (n == 0)
        sched_yield();
    return n;
}
