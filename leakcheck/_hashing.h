/* What the two compiled modules hash with (leakcheck/_kernels.c, leakcheck/_chatlines.c); each
   has Python twins that must agree with it, in leakcheck/detect/grams.py and
   leakcheck/io/chat_lines.py. */
#ifndef LEAKCHECK_HASHING_H
#define LEAKCHECK_HASHING_H

#include <stdint.h>

#define MUL 0x9E3779B97F4A7C15ULL

/* MurmurHash3's 64-bit finalizer (grams.mix64, chat_lines._mix64). */
static inline uint64_t mix64(uint64_t h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 33;
    return h;
}

#endif
