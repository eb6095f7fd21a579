/* test_rand.h — the deterministic pseudo-random numbers the unit tests generate
 * their data with (xorshift64, fixed seed): every run sees the same data. */
#ifndef NX_TEST_RAND_H
#define NX_TEST_RAND_H

#include <stdint.h>

static uint64_t rng = 88172645463325252ull;

static inline uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#endif
