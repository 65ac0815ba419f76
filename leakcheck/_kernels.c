/* Compiled twins of five NumPy functions of leakcheck.detect.grams, each tested equal to it
   (tests/test_tokens.py); without a C compiler leakcheck runs the NumPy versions.

   tokens():   _words_numpy, token boundaries and 64-bit token hashes of a batch of texts in one
               pass over their bytes (the NumPy version makes ~30 passes).
   find():     HashSet._find_numpy, bitmap then linear-probing lookups.
   distinct(): _distinct_counts_numpy, distinct hashes per text in a small table, not a sort.
   ngrams():   _ngrams_numpy, the hash of every word n-gram in one pass (NumPy makes n).
   distinct_pairs(): _distinct_pairs_numpy, each text's hashes sorted apart (NumPy sorts on two keys).

   A token is a run of word bytes (ASCII letters, digits, '_', any byte >= 0x80), a printable
   ASCII symbol, or a run of four or more of one symbol (hashed as four). Its hash: its
   lower-cased bytes read 8 at a time as little-endian integers, combined with the
   MurmurHash3 finalizer, then mixed with its length. Tokens over 64 bytes are left to the
   caller (xxh3 of their bytes), which gets their indexes. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_hashing.h"

#define RUN 4
#define VECTOR_MAX 64

static unsigned char cls[256]; /* 1: word byte, 2: symbol, 0: other */
static unsigned char lower[256];

/* Up to 8 lower-cased bytes from p, little-endian; ``end`` bounds the buffer. */
static inline uint64_t load(const unsigned char *p, Py_ssize_t len, const unsigned char *end) {
    uint64_t v = 0;
    if (p + 8 <= end) {
        memcpy(&v, p, 8);
#if PY_BIG_ENDIAN
        v = __builtin_bswap64(v);
#endif
        /* ASCII A-Z to a-z, 8 bytes at once: a byte is upper case when it is ASCII, >= 'A' and not > 'Z' */
        uint64_t low7 = v & 0x7F7F7F7F7F7F7F7FULL;
        uint64_t ge_a = low7 + 0x3F3F3F3F3F3F3F3FULL, gt_z = low7 + 0x2525252525252525ULL;
        uint64_t upper = ~v & (ge_a ^ gt_z) & 0x8080808080808080ULL;
        v |= upper >> 2;
        return len >= 8 ? v : v & ((1ULL << (8 * len)) - 1);
    }
    for (Py_ssize_t k = len - 1; k >= 0; k--) v = (v << 8) | lower[p[k]];
    return v;
}

static inline uint64_t token_hash(const unsigned char *p, Py_ssize_t len, const unsigned char *end) {
    uint64_t h = load(p, len < 8 ? len : 8, end);
    for (Py_ssize_t k = 8; k < len; k += 8) {
        Py_ssize_t rest = len - k;
        h = mix64(h) + load(p + k, rest < 8 ? rest : 8, end);
    }
    return mix64(h ^ ((uint64_t)len * MUL));
}

/* Calls emit(start, end, hashed_len) for every token of b[0:n]; returns the count. */
#define SCAN(EMIT)                                                             \
    do {                                                                       \
        Py_ssize_t i = 0;                                                      \
        while (i < n) {                                                        \
            unsigned char c = cls[b[i]];                                       \
            if (c == 1) {                                                      \
                Py_ssize_t j = i + 1;                                          \
                while (j < n && cls[b[j]] == 1) j++;                           \
                EMIT(i, j, j - i);                                             \
                i = j;                                                         \
            } else if (c == 2) {                                               \
                Py_ssize_t j = i + 1;                                          \
                while (j < n && b[j] == b[i]) j++;                             \
                if (j - i >= RUN) {                                            \
                    EMIT(i, j, RUN);                                           \
                } else {                                                       \
                    for (Py_ssize_t q = i; q < j; q++) EMIT(q, q + 1, 1);      \
                }                                                              \
                i = j;                                                         \
            } else {                                                           \
                i++;                                                           \
            }                                                                  \
        }                                                                      \
    } while (0)

#define COUNT(s, e, l) (count++, n_long += ((l) > VECTOR_MAX))

/* tokens(blob, text_starts) -> (hashes, starts, ends, offsets, long)

   blob: the texts' bytes joined by NUL; text_starts: int64 offset of each text in blob.
   hashes (uint64), starts/ends (int64 byte offsets in blob), offsets (int64, one per text
   plus the total) come back as bytearrays; long lists the tokens whose hash the caller fills. */
static PyObject *tokens(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer blob, ts;
    if (!PyArg_ParseTuple(args, "y*y*", &blob, &ts)) return NULL;
    const unsigned char *b = (const unsigned char *)blob.buf;
    Py_ssize_t n = blob.len, n_texts = ts.len / (Py_ssize_t)sizeof(int64_t);
    const int64_t *text_start = (const int64_t *)ts.buf;
    Py_ssize_t count = 0, n_long = 0;
    Py_ssize_t *long_at = NULL;
    PyObject *hashes = NULL, *starts = NULL, *ends = NULL, *offsets = NULL, *longs = NULL, *out = NULL;

    Py_BEGIN_ALLOW_THREADS
    SCAN(COUNT);
    Py_END_ALLOW_THREADS

    hashes = PyByteArray_FromStringAndSize(NULL, count * 8);
    starts = PyByteArray_FromStringAndSize(NULL, count * 8);
    ends = PyByteArray_FromStringAndSize(NULL, count * 8);
    offsets = PyByteArray_FromStringAndSize(NULL, (n_texts + 1) * 8);
    longs = PyList_New(n_long);
    long_at = n_long ? PyMem_Malloc(n_long * sizeof(Py_ssize_t)) : NULL;
    if (!hashes || !starts || !ends || !offsets || !longs || (n_long && !long_at)) goto done;
    {
        uint64_t *h = (uint64_t *)PyByteArray_AS_STRING(hashes);
        int64_t *st = (int64_t *)PyByteArray_AS_STRING(starts);
        int64_t *en = (int64_t *)PyByteArray_AS_STRING(ends);
        int64_t *off = (int64_t *)PyByteArray_AS_STRING(offsets);
        Py_ssize_t t = 0, tok = 0, m = 0;
#define FILL(s, e, l)                                                          \
    do {                                                                       \
        while (t < n_texts && text_start[t] <= (s)) off[t++] = tok;              \
        st[tok] = (s);                                                           \
        en[tok] = (e);                                                           \
        if ((l) > VECTOR_MAX) {                                                \
            h[tok] = 0;                                                          \
            long_at[m++] = tok;                                                  \
        } else {                                                               \
            h[tok] = token_hash(b + (s), (l), b + n);                                   \
        }                                                                      \
        tok++;                                                                 \
    } while (0)
        Py_BEGIN_ALLOW_THREADS
        SCAN(FILL);
        Py_END_ALLOW_THREADS
        while (t < n_texts) off[t++] = tok;
        off[n_texts] = tok;
        for (Py_ssize_t j = 0; j < n_long; j++) {
            PyObject *v = PyLong_FromSsize_t(long_at[j]);
            if (!v) goto done;
            PyList_SET_ITEM(longs, j, v);
        }
    }
    out = PyTuple_Pack(5, hashes, starts, ends, offsets, longs);
done:
    PyMem_Free(long_at);
    Py_XDECREF(hashes);
    Py_XDECREF(starts);
    Py_XDECREF(ends);
    Py_XDECREF(offsets);
    Py_XDECREF(longs);
    PyBuffer_Release(&blob);
    PyBuffer_Release(&ts);
    return out;
}

/* find(slot_key, slot_idx, idx_size, slot_mask, bitmap, bit_mask, zero, h) -> int64 positions

   HashSet.find of leakcheck.detect.grams compiled: a bit of the bitmap first, then linear
   probing in the open-addressing table (0 marks an empty slot; the key 0 is ``zero``). */
static PyObject *find(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer keys, idx, bits, hb;
    int idx_size;
    unsigned long long slot_mask, bit_mask;
    long long zero;
    if (!PyArg_ParseTuple(args, "y*y*iKy*KLy*", &keys, &idx, &idx_size, &slot_mask, &bits, &bit_mask, &zero, &hb)) return NULL;
    Py_ssize_t n = hb.len / 8;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (out) {
        const uint64_t *slot = (const uint64_t *)keys.buf, *h = (const uint64_t *)hb.buf;
        const unsigned char *bitmap = (const unsigned char *)bits.buf;
        const int32_t *i32 = (const int32_t *)idx.buf;
        const int64_t *i64 = (const int64_t *)idx.buf;
        int64_t *o = (int64_t *)PyByteArray_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            uint64_t x = h[i], b = x & bit_mask;
            int64_t r = -1;
            if ((bitmap[b >> 3] >> (b & 7)) & 1) {
                if (x == 0) {
                    r = zero;
                } else {
                    uint64_t p = (x >> 32) & slot_mask;
                    for (;;) {
                        uint64_t at = slot[p];
                        if (at == x) { r = idx_size == 4 ? i32[p] : i64[p]; break; }
                        if (at == 0) break;
                        p = (p + 1) & slot_mask;
                    }
                }
            }
            o[i] = r;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&keys);
    PyBuffer_Release(&idx);
    PyBuffer_Release(&bits);
    PyBuffer_Release(&hb);
    return out;
}

/* distinct(h, text_of, n_texts) -> int64 counts

   grams.distinct_counts compiled: per text (``text_of`` sorted; None if it is not), how many
   distinct values of ``h >> 24`` it has, counted in a small open-addressing table per text. */
/* The longest run of equal text ids in t[0..n), or -1 when t is not sorted (the caller goes another way). */
static Py_ssize_t longest_run(const int64_t *t, Py_ssize_t n) {
    Py_ssize_t longest = 0;
    for (Py_ssize_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && t[j] == t[i]; j++) {}
        if (j - i > longest) longest = j - i;
        if (j < n && t[j] < t[i]) return -1;
    }
    return longest;
}

static PyObject *distinct(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer hb, tb;
    Py_ssize_t n_texts;
    if (!PyArg_ParseTuple(args, "y*y*n", &hb, &tb, &n_texts)) return NULL;
    Py_ssize_t n = hb.len / 8;
    PyObject *out = NULL;
    uint64_t *table = NULL;
    Py_ssize_t cap = 0;
    const int64_t *t = (const int64_t *)tb.buf;
    Py_ssize_t longest = longest_run(t, n);
    if (longest < 0) {  /* not sorted by text: the caller counts another way */
        PyBuffer_Release(&hb);
        PyBuffer_Release(&tb);
        Py_RETURN_NONE;
    }
    while (cap < 2 * longest) cap = cap ? cap * 2 : 16;
    if (cap) table = PyMem_Calloc(cap, sizeof(uint64_t));
    out = PyByteArray_FromStringAndSize(NULL, n_texts * 8);
    if (out && (table || !cap)) {
        const uint64_t *h = (const uint64_t *)hb.buf;
        int64_t *o = (int64_t *)PyByteArray_AS_STRING(out);
        memset(o, 0, n_texts * 8);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && t[j] == t[i]; j++) {}
            uint64_t size = 16;
            while (size < (uint64_t)(2 * (j - i))) size *= 2;
            uint64_t mask = size - 1, count = 0;
            for (Py_ssize_t k = i; k < j; k++) {
                uint64_t key = (h[k] >> 24) + 1, mix = key * MUL, p = (mix ^ (mix >> 29)) & mask;  /* +1: 0 marks an empty slot */
                while (table[p] != 0 && table[p] != key) p = (p + 1) & mask;
                if (table[p] == 0) { table[p] = key; count++; }
            }
            if (t[i] >= 0 && t[i] < n_texts) o[t[i]] = (int64_t)count;
            memset(table, 0, size * sizeof(uint64_t));
        }
        Py_END_ALLOW_THREADS
    } else if (out) {
        Py_CLEAR(out);
        PyErr_NoMemory();
    }
    PyMem_Free(table);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&tb);
    return out;
}

/* ngrams(hashes, offsets, n) -> (h, text_of)

   grams.ngrams compiled: per text (its words hashes[offsets[t]:offsets[t + 1]]), the hash of
   every run of n words, h = ((x0 * MUL + x1) * MUL + ...) then mix64, with its text's index;
   in text order, as uint64 and int64 bytearrays. The window rolls: two multiplications a word. */
static PyObject *ngrams(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer hb, ob;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*y*n", &hb, &ob, &n)) return NULL;
    const uint64_t *x = (const uint64_t *)hb.buf;
    const int64_t *off = (const int64_t *)ob.buf;
    Py_ssize_t n_texts = ob.len / 8 - 1, total = 0;
    for (Py_ssize_t t = 0; t < n_texts; t++) {
        Py_ssize_t c = (Py_ssize_t)(off[t + 1] - off[t]) - n + 1;
        if (c > 0) total += c;
    }
    PyObject *h = PyByteArray_FromStringAndSize(NULL, total * 8), *tof = PyByteArray_FromStringAndSize(NULL, total * 8);
    PyObject *out = NULL;
    if (h && tof && n >= 1) {
        uint64_t *o = (uint64_t *)PyByteArray_AS_STRING(h);
        int64_t *to = (int64_t *)PyByteArray_AS_STRING(tof);
        Py_BEGIN_ALLOW_THREADS
        Py_ssize_t j = 0;
        uint64_t top = 1;  /* MUL ** (n - 1): the first word's weight, taken off as the window rolls */
        for (Py_ssize_t k = 1; k < n; k++) top *= MUL;
        for (Py_ssize_t t = 0; t < n_texts; t++) {
            int64_t s = off[t], end = off[t + 1];
            if (s + n > end) continue;
            uint64_t v = x[s];
            for (Py_ssize_t k = 1; k < n; k++) v = v * MUL + x[s + k];
            for (;;) {  /* exact: arithmetic mod 2**64 is a ring */
                o[j] = mix64(v);
                to[j++] = t;
                if (s + n >= end) break;
                v = (v - x[s] * top) * MUL + x[s + n];
                s++;
            }
        }
        Py_END_ALLOW_THREADS
        out = PyTuple_Pack(2, h, tof);
    }
    Py_XDECREF(h);
    Py_XDECREF(tof);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&ob);
    return out;
}

typedef struct {
    uint64_t h;
    int64_t at;
} HashAt;

static int by_hash_then_position(const void *a, const void *b) {
    const HashAt *x = (const HashAt *)a, *y = (const HashAt *)b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* distinct_pairs(h, text_of) -> (hashes, texts, first) or None

   grams.distinct_pairs compiled: the distinct (text, hash) pairs sorted by text then hash, with
   the position of each pair's first occurrence; each text's hashes sorted on their own (text_of
   sorted; None if it is not), not one sort on two keys. */
static PyObject *distinct_pairs(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer hb, tb;
    if (!PyArg_ParseTuple(args, "y*y*", &hb, &tb)) return NULL;
    Py_ssize_t n = hb.len / 8;
    const uint64_t *h = (const uint64_t *)hb.buf;
    const int64_t *t = (const int64_t *)tb.buf;
    PyObject *out = NULL, *oh = NULL, *ot = NULL, *of = NULL;
    HashAt *group = NULL;
    Py_ssize_t longest = longest_run(t, n);
    if (longest < 0) {  /* not sorted by text: the caller sorts another way */
        PyBuffer_Release(&hb);
        PyBuffer_Release(&tb);
        Py_RETURN_NONE;
    }
    oh = PyByteArray_FromStringAndSize(NULL, n * 8);
    ot = PyByteArray_FromStringAndSize(NULL, n * 8);
    of = PyByteArray_FromStringAndSize(NULL, n * 8);
    if (longest) group = PyMem_Malloc(longest * sizeof(HashAt));
    if (oh && ot && of && (group || !longest)) {
        uint64_t *ph = (uint64_t *)PyByteArray_AS_STRING(oh);
        int64_t *pt = (int64_t *)PyByteArray_AS_STRING(ot), *pf = (int64_t *)PyByteArray_AS_STRING(of);
        Py_ssize_t m = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0, j; i < n; i = j) {
            for (j = i + 1; j < n && t[j] == t[i]; j++) {}
            for (Py_ssize_t k = i; k < j; k++) {
                group[k - i].h = h[k];
                group[k - i].at = k;
            }
            qsort(group, (size_t)(j - i), sizeof(HashAt), by_hash_then_position);
            for (Py_ssize_t k = 0; k < j - i; k++) {
                if (k && group[k].h == group[k - 1].h) continue;
                ph[m] = group[k].h;
                pt[m] = t[i];
                pf[m++] = group[k].at;
            }
        }
        Py_END_ALLOW_THREADS
        if (PyByteArray_Resize(oh, m * 8) == 0 && PyByteArray_Resize(ot, m * 8) == 0 && PyByteArray_Resize(of, m * 8) == 0)
            out = PyTuple_Pack(3, oh, ot, of);
    } else {
        PyErr_NoMemory();
    }
    PyMem_Free(group);
    Py_XDECREF(oh);
    Py_XDECREF(ot);
    Py_XDECREF(of);
    PyBuffer_Release(&hb);
    PyBuffer_Release(&tb);
    return out;
}

static PyMethodDef methods[] = {
    {"distinct_pairs", distinct_pairs, METH_VARARGS, "distinct_pairs(h, text_of) -> (hashes, texts, first) as bytearrays, or None"},
    {"ngrams", ngrams, METH_VARARGS, "ngrams(hashes, offsets, n) -> (h, text_of) as bytearrays"},
    {"distinct", distinct, METH_VARARGS, "distinct(h, text_of, n_texts) -> int64 counts of distinct h >> 24 per text"},
    {"tokens", tokens, METH_VARARGS, "tokens(blob, text_starts) -> (hashes, starts, ends, offsets, long)"},
    {"find", find, METH_VARARGS, "find(slot_key, slot_idx, idx_size, slot_mask, bitmap, bit_mask, zero, h) -> int64 positions"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernels(void) {
    for (int c = 0; c < 256; c++) {
        int word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c >= 128;
        cls[c] = word ? 1 : (c >= 33 && c <= 126) ? 2 : 0;
        lower[c] = (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 32) : (unsigned char)c;
    }
    return PyModule_Create(&module);
}
