// wake-floor: what this machine charges for the wake-ups a 40 Hz sensor needs, with no work at
// all, so the CPU figures of bench/iio-cpu-memory.sh can be read against it.
//
//   one thread          a thread sleeps until the next 25 ms tick (clock_nanosleep, absolute)
//   two threads, 1 CPU  ... then wakes a second thread on the same CPU through a futex
//   two threads, 2 CPUs ... the second thread on another CPU (an inter-processor interrupt)
//
// The bridge's buffered capture is the second shape: the driver wakes the capture thread,
// which rings the consumer. Each line prints microseconds per period and the share of one CPU
// (getrusage of the whole process).
// Build and run: cc -O2 -pthread -o wake-floor bench/wake-floor.c && ./wake-floor [PERIODS=800]
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int sequence;
static int periods = 800;
static int consumerCPU = -1;

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static double cpuSeconds(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec * 1e-6 + r.ru_stime.tv_sec + r.ru_stime.tv_usec * 1e-6;
}

static void *consumer(void *unused) {
    (void)unused;
    pin(consumerCPU);
    int seen = 0;
    while (seen < periods) {
        int now;
        while ((now = atomic_load(&sequence)) == seen)
            syscall(SYS_futex, &sequence, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
        seen = now;
    }
    return NULL;
}

static void measure(const char *name, int producerCPU, int secondCPU) {
    atomic_store(&sequence, 0);
    consumerCPU = secondCPU;
    pin(producerCPU);
    pthread_t thread;
    if (secondCPU >= 0) pthread_create(&thread, NULL, consumer, NULL);
    double before = cpuSeconds();
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int i = 1; i <= periods; i++) {
        next.tv_nsec += 25000000;
        if (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec++; }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {}
        if (secondCPU >= 0) {
            atomic_store(&sequence, i);
            syscall(SYS_futex, &sequence, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        }
    }
    if (secondCPU >= 0) pthread_join(thread, NULL);
    double used = cpuSeconds() - before;
    printf("%-20s %6.1f us per 25 ms period = %.3f %% of one CPU\n", name, used / periods * 1e6,
           100 * used / (periods * 0.025));
}

int main(int argc, char **argv) {
    if (argc > 1) periods = atoi(argv[1]);
    if (periods < 1) { fprintf(stderr, "usage: wake-floor [PERIODS>0]\n"); return 2; }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    measure("one thread", 0, -1);
    measure("two threads, 1 CPU", 0, 0);
    if (cpus > 1) measure("two threads, 2 CPUs", 0, 1);
    return 0;
}
