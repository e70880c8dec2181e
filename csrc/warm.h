/* A second thread that walks an order of examples ahead of a training loop
 * and reads the rows it will visit, so that they are in the shared caches
 * when the loop gets there ("helper-thread prefetching").
 *
 * Why: a loop visiting the rows of a set larger than the caches in a random
 * order waits for memory on every row.  Its own prefetch hints (prefetch.h)
 * are bounded by the misses one core can have in flight, which its own
 * loads of the weights share; a helper on another core adds that core's.
 *
 * The helper only reads: the order, the row pointers and the rows' index
 * and value arrays, which must stay alive and unchanged until pg_warm_stop.
 * It never runs more than `ahead` entries in front of the position the loop
 * publishes (pg_warm_publish), so what it brings in is not evicted before
 * use.  The loop's results do not depend on it in any way.
 *
 * Without POSIX threads pg_warm_start returns NULL and the loop runs alone. */
#ifndef PEGASOS_WARM_H
#define PEGASOS_WARM_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "prefetch.h"

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <signal.h>
#include <time.h>
#define PG_WARM_THREADS 1
#else
#define PG_WARM_THREADS 0
#endif

typedef struct pg_warm {
    const int64_t *order;       /* entries [0, n) are row numbers */
    int64_t n;
    const int64_t *indptr;
    const int32_t *indices;
    const char *data;
    size_t value_size;          /* bytes of one stored value */
    int64_t ahead;              /* entries in front of the loop's position, at most */
    int64_t hint;               /* the helper's own prefetch distance, in entries (0: none) */
    int64_t pos;                /* the loop's position (atomic) */
    int stop;                   /* set to end the helper (atomic) */
    int64_t rows;               /* rows the helper read (for tests and benchmarks) */
#if PG_WARM_THREADS
    pthread_t thread;
#endif
} pg_warm;

static inline void pg_warm_publish(pg_warm *w, int64_t pos) {
    if (w != NULL) __atomic_store_n(&w->pos, pos, __ATOMIC_RELAXED);
}

/* The automatic mode's choice, from timing[3]: the seconds per unit of work of the last chunk run
 * with and without the helper (-1: none yet) and the chunks since the slower way was timed.  The
 * first chunk runs with it, the second without, then the faster way, the slower again once
 * `probe` chunks have passed.  Returns whether the next chunk runs with the helper. */
static inline int pg_warm_choose(double *timing, double probe) {
    int faster;
    if (timing[0] < 0.0) return 1;
    if (timing[1] < 0.0) return 0;
    faster = timing[0] <= timing[1];
    if (timing[2] >= probe) {
        timing[2] = 0.0;
        return !faster;
    }
    timing[2] += 1.0;
    return faster;
}

/* Record the seconds per unit of work of a chunk run with (`helped`) or without the helper. */
static inline void pg_warm_timed(double *timing, int helped, double seconds) {
    timing[helped ? 0 : 1] = seconds;
}

#if PG_WARM_THREADS

static inline void pg_warm_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One load from every 64-byte line of [p, p + n): the line is then in this
 * core's caches (and, on eviction, in the shared last level). */
static inline unsigned pg_warm_touch(const char *p, size_t n) {
    unsigned acc = 0;
    uintptr_t c = (uintptr_t)p & ~(uintptr_t)63, e = (uintptr_t)p + n;
    if (c < (uintptr_t)p) {
        acc += (unsigned char)*p;
        c += 64;
    }
    for (; c < e; c += 64) acc += *(const volatile unsigned char *)c;
    return acc;
}

/* Spins of the wait before the helper sleeps (PG_WARM_NAP_NS a time): on a machine whose
 * processors other work holds, a helper that spun would take their time. */
#define PG_WARM_SPINS 4096
#define PG_WARM_NAP_NS 20000

static void *pg_warm_main(void *arg) {
    pg_warm *w = (pg_warm *)arg;
    volatile unsigned sink = 0;
    unsigned acc = 0;
    int64_t q, i, j0, j1, pos, rows = 0;
    int spins;
    struct timespec nap = {0, PG_WARM_NAP_NS};
    for (q = 0; q < w->n; q++) {
        spins = 0;
        while (q > (pos = __atomic_load_n(&w->pos, __ATOMIC_RELAXED)) + w->ahead) {
            if (__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) goto done;
            if (++spins < PG_WARM_SPINS) {
                pg_warm_pause();
            } else {
                nanosleep(&nap, NULL);
            }
        }
        if (q < pos) {                  /* behind the loop (after a sleep): its rows are read already */
            q = pos;
            if (q >= w->n) break;
        }
        if ((q & 63) == 0 && __atomic_load_n(&w->stop, __ATOMIC_RELAXED)) break;
        if (w->hint > 0 && q + w->hint < w->n) {
            i = w->order[q + w->hint];
            j0 = w->indptr[i];
            j1 = w->indptr[i + 1];
            if (j1 > j0) {
                pg_prefetch_range(w->indices + j0, sizeof(int32_t) * (size_t)(j1 - j0));
                pg_prefetch_range(w->data + w->value_size * (size_t)j0, w->value_size * (size_t)(j1 - j0));
            }
        }
        i = w->order[q];
        j0 = w->indptr[i];
        j1 = w->indptr[i + 1];
        if (j1 > j0) {
            acc += pg_warm_touch((const char *)(w->indices + j0), sizeof(int32_t) * (size_t)(j1 - j0));
            acc += pg_warm_touch(w->data + w->value_size * (size_t)j0, w->value_size * (size_t)(j1 - j0));
        }
        rows++;
    }
done:
    sink = acc;
    (void)sink;
    w->rows = rows;
    return NULL;
}

/* Start a helper over order[0, n); NULL if it cannot start (then nothing to stop).
 * The helper blocks every signal: they stay the loop's thread's to handle. */
static pg_warm *pg_warm_start(const int64_t *order, int64_t n, const int64_t *indptr, const int32_t *indices,
                              const void *data, size_t value_size, int64_t ahead, int64_t hint) {
    sigset_t all, old;
    int failed;
    pg_warm *w = (pg_warm *)calloc(1, sizeof(pg_warm));
    if (w == NULL) return NULL;
    w->order = order;
    w->n = n;
    w->indptr = indptr;
    w->indices = indices;
    w->data = (const char *)data;
    w->value_size = value_size;
    w->ahead = ahead;
    w->hint = hint;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    failed = pthread_create(&w->thread, NULL, pg_warm_main, w);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (failed) {
        free(w);
        return NULL;
    }
    return w;
}

/* End the helper, wait for it and free it; returns the rows it read. */
static int64_t pg_warm_stop(pg_warm *w) {
    int64_t rows;
    if (w == NULL) return -1;
    __atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
    pthread_join(w->thread, NULL);
    rows = w->rows;
    free(w);
    return rows;
}

#else

static pg_warm *pg_warm_start(const int64_t *order, int64_t n, const int64_t *indptr, const int32_t *indices,
                              const void *data, size_t value_size, int64_t ahead, int64_t hint) {
    (void)order; (void)n; (void)indptr; (void)indices; (void)data; (void)value_size; (void)ahead; (void)hint;
    return NULL;
}

static int64_t pg_warm_stop(pg_warm *w) {
    (void)w;
    return -1;
}

#endif

#endif
