/* Software prefetch for the compiled loops (_core, _dual): a hint to the
 * processor to start loading a cache line that will be read (or written)
 * soon.  It changes no value; without GCC or Clang builtins the hints
 * compile to nothing. */
#ifndef PEGASOS_PREFETCH_H
#define PEGASOS_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define PG_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
#define PG_PREFETCH_W(p) __builtin_prefetch((const void *)(p), 1, 3)
#else
#define PG_PREFETCH(p) ((void)(p))
#define PG_PREFETCH_W(p) ((void)(p))
#endif

static inline void pg_prefetch(const void *p) { PG_PREFETCH(p); }
static inline void pg_prefetch_w(const void *p) { PG_PREFETCH_W(p); }

/* every 64-byte line of [p, p + n) */
static inline void pg_prefetch_range(const void *p, size_t n) {
    uintptr_t c = (uintptr_t)p & ~(uintptr_t)63, e = (uintptr_t)p + n;
    for (; c < e; c += 64) PG_PREFETCH((const void *)c);
}

/* the index and value arrays of CSR row i (value_size bytes a value) */
static inline void pg_prefetch_row(const int64_t *indptr, int64_t i, const int32_t *indices,
                                   const void *data, size_t value_size) {
    int64_t j0 = indptr[i], j1 = indptr[i + 1];
    if (j1 > j0) {
        pg_prefetch_range(indices + j0, sizeof(int32_t) * (size_t)(j1 - j0));
        pg_prefetch_range((const char *)data + value_size * (size_t)j0, value_size * (size_t)(j1 - j0));
    }
}

#endif
