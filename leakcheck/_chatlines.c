/* A compiled reader of JSONL chat shards: leakcheck.io.chat_lines calls it, and reads every
   line it declines the usual way (orjson, then leakcheck.formats), so the two agree on every
   record (tests/test_chat_lines.py checks them against each other with Hypothesis).

   chat_lines() parses each line of a buffer as strict JSON without building Python objects
   for it: the chat's user turns joined by "\n", its last assistant turn and the id (or, for a
   flat row, its top-level prompt and target strings) are decoded into scratch buffers and
   become a Record only when the caller keeps the line.
   A line is declined (left to Python) whenever anything is off the common path: invalid or
   unusual JSON (exponents, long integers, lone surrogates, deep nesting), ShareGPT keys, a
   non-text turn, a text with no visible ASCII character (Python decides what is blank), an
   id that is not a string, a short integer or a boolean. Declining is always safe; only a
   record built here must equal the one Python builds.

   The filter: given the fast-lane hashes of the exact and normalized levels' eval texts
   (text_hash of the text, and of the first five lower-cased words for an ASCII text), a line
   whose texts hit none is counted and dropped: no level could match it. text_hash has a
   Python twin in leakcheck.io.chat_lines (the index is the same with or without this module). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_hashing.h"

#define MAX_DEPTH 64
#define KEY_WORDS 5

static inline uint64_t load_le(const unsigned char *p, Py_ssize_t len) {
    uint64_t v = 0;
    if (len == 8) {
        memcpy(&v, p, 8);
#if PY_BIG_ENDIAN
        v = __builtin_bswap64(v);
#endif
        return v;
    }
    for (Py_ssize_t k = len - 1; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* Whether one of 8 bytes ends a plain run of a JSON string: a quote, a backslash, a control
   character or a non-ASCII byte (the classic has-zero-byte tests, one per kind). */
static inline int special8(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    uint64_t q = v ^ (ONES * '"'), bs = v ^ (ONES * '\\');
    uint64_t hit = ((q - ONES) & ~q) | ((bs - ONES) & ~bs) | ((v - ONES * 0x20) & ~v) | v;
    return (hit & HIGHS) != 0;
}

/* Bytes read 8 at a time as little-endian integers, each added and multiplied in (one
   multiplication per word: it only has to spread texts apart), then the length and the
   MurmurHash3 finalizer. */
static uint64_t text_hash_of(const unsigned char *p, Py_ssize_t len) {
    uint64_t h = 0;
    for (Py_ssize_t k = 0; k < len; k += 8) {
        Py_ssize_t rest = len - k;
        h = (h + load_le(p + k, rest < 8 ? rest : 8)) * MUL;
        h ^= h >> 29;
    }
    return mix64(h ^ ((uint64_t)len * MUL));
}

/* -- scratch buffers ------------------------------------------------------------------------ */

typedef struct {
    unsigned char *p;
    Py_ssize_t n, cap;
    int nonascii;  /* a byte >= 0x80 */
    int visible;   /* a byte in '!'..'~' */
} Buf;

static int grow(Buf *b, Py_ssize_t more) {
    if (b->n + more <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more) cap *= 2;
    unsigned char *p = PyMem_Realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline void reset(Buf *b) { b->n = 0; b->nonascii = b->visible = 0; }

static int put(Buf *b, const unsigned char *s, Py_ssize_t n) {
    if (grow(b, n)) return -1;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

/* -- strict JSON ---------------------------------------------------------------------------- */

enum { OK = 0, DECLINE = 1, NOMEM = 2 };

typedef struct {
    const unsigned char *p, *end;
} Cur;

static inline void ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static inline int hexval(unsigned char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

static int hex4(const unsigned char *p, const unsigned char *end) {
    if (end - p < 4) return -1;
    int v = 0;
    for (int k = 0; k < 4; k++) {
        int d = hexval(p[k]);
        if (d < 0) return -1;
        v = (v << 4) | d;
    }
    return v;
}

/* Length of the valid UTF-8 sequence at p (strict: no overlong forms, surrogates or values
   past U+10FFFF), 0 if there is none. */
static int utf8_len(const unsigned char *p, const unsigned char *end) {
    unsigned char c = p[0];
    Py_ssize_t left = end - p;
    if (c >= 0xC2 && c <= 0xDF) return left >= 2 && (p[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && p[1] < 0xA0) return 0;
        if (c == 0xED && p[1] >= 0xA0) return 0;
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (left < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (c == 0xF0 && p[1] < 0x90) return 0;
        if (c == 0xF4 && p[1] >= 0x90) return 0;
        return 4;
    }
    return 0;
}

static void mark(Buf *out, const unsigned char *s, Py_ssize_t n) {
    for (Py_ssize_t k = 0; k < n; k++) {
        if (s[k] >= 0x80) out->nonascii = 1;
        else if (s[k] >= '!' && s[k] <= '~') out->visible = 1;
    }
}

/* A string whose opening quote c->p is past; decoded into ``out`` (NULL: only checked). */
static int string(Cur *c, Buf *out) {
    const unsigned char *p = c->p, *end = c->end;
    for (;;) {
        const unsigned char *run = p;
        while (end - p >= 8 && !special8(p)) p += 8;
        while (p < end && *p >= 0x20 && *p != '"' && *p != '\\' && *p < 0x80) p++;
        if (out && p > run) {
            if (put(out, run, p - run)) return NOMEM;
            if (!out->visible)  /* ASCII bytes only: stop at the first visible one */
                for (const unsigned char *q = run; q < p; q++)
                    if (*q >= '!' && *q <= '~') {
                        out->visible = 1;
                        break;
                    }
        }
        if (p >= end) return DECLINE;
        unsigned char ch = *p;
        if (ch == '"') {
            c->p = p + 1;
            return OK;
        }
        if (ch < 0x20) return DECLINE;  /* a raw control character: invalid JSON */
        if (ch >= 0x80) {
            int k = utf8_len(p, end);
            if (!k) return DECLINE;
            if (out) {
                if (put(out, p, k)) return NOMEM;
                out->nonascii = 1;
            }
            p += k;
            continue;
        }
        /* a backslash */
        if (p + 1 >= end) return DECLINE;
        unsigned char e = p[1], one;
        p += 2;
        switch (e) {
            case '"': one = '"'; break;
            case '\\': one = '\\'; break;
            case '/': one = '/'; break;
            case 'b': one = '\b'; break;
            case 'f': one = '\f'; break;
            case 'n': one = '\n'; break;
            case 'r': one = '\r'; break;
            case 't': one = '\t'; break;
            case 'u': {
                int u = hex4(p, end);
                if (u < 0) return DECLINE;
                p += 4;
                uint32_t cp = (uint32_t)u;
                if (u >= 0xD800 && u <= 0xDBFF) {
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u') return DECLINE;
                    int lo = hex4(p + 2, end);
                    if (lo < 0xDC00 || lo > 0xDFFF) return DECLINE;
                    p += 6;
                    cp = 0x10000 + (((uint32_t)u - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
                } else if (u >= 0xDC00 && u <= 0xDFFF) {
                    return DECLINE;  /* a lone surrogate: orjson refuses it, Python's json reads it */
                }
                if (out) {
                    unsigned char tmp[4];
                    int k;
                    if (cp < 0x80) { tmp[0] = (unsigned char)cp; k = 1; }
                    else if (cp < 0x800) { tmp[0] = 0xC0 | (cp >> 6); tmp[1] = 0x80 | (cp & 0x3F); k = 2; }
                    else if (cp < 0x10000) { tmp[0] = 0xE0 | (cp >> 12); tmp[1] = 0x80 | ((cp >> 6) & 0x3F); tmp[2] = 0x80 | (cp & 0x3F); k = 3; }
                    else { tmp[0] = 0xF0 | (cp >> 18); tmp[1] = 0x80 | ((cp >> 12) & 0x3F); tmp[2] = 0x80 | ((cp >> 6) & 0x3F); tmp[3] = 0x80 | (cp & 0x3F); k = 4; }
                    if (put(out, tmp, k)) return NOMEM;
                    mark(out, tmp, k);
                }
                continue;
            }
            default: return DECLINE;
        }
        if (out) {
            if (put(out, &one, 1)) return NOMEM;
            mark(out, &one, 1);
        }
    }
}

/* A number: its text must be an integer of at most 18 digits or a plain decimal (no exponent,
   which could overflow to infinity; orjson refuses that, Python's json reads it). */
static int number(Cur *c, int *is_int) {
    const unsigned char *p = c->p, *end = c->end;
    if (p < end && *p == '-') p++;
    const unsigned char *digits = p;
    if (p < end && *p == '0') p++;
    else if (p < end && *p >= '1' && *p <= '9') while (p < end && *p >= '0' && *p <= '9') p++;
    else return DECLINE;
    if (p - digits > 18) return DECLINE;
    *is_int = 1;
    if (p < end && *p == '.') {
        p++;
        const unsigned char *frac = p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        if (p == frac) return DECLINE;
        *is_int = 0;
    }
    if (p < end && (*p == 'e' || *p == 'E')) return DECLINE;
    c->p = p;
    return OK;
}

static int literal(Cur *c, const char *word, Py_ssize_t n) {
    if (c->end - c->p < n || memcmp(c->p, word, n) != 0) return DECLINE;
    c->p += n;
    return OK;
}

static int skip(Cur *c, int depth);

static int skip_members(Cur *c, int depth, unsigned char close) {
    ws(c);
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return OK;
    }
    for (;;) {
        int r;
        if (close == '}') {
            if (c->p >= c->end || *c->p != '"') return DECLINE;
            c->p++;
            if ((r = string(c, NULL))) return r;
            ws(c);
            if (c->p >= c->end || *c->p != ':') return DECLINE;
            c->p++;
            ws(c);
        }
        if ((r = skip(c, depth + 1))) return r;
        ws(c);
        if (c->p >= c->end) return DECLINE;
        if (*c->p == ',') {
            c->p++;
            ws(c);
            continue;
        }
        if (*c->p == close) {
            c->p++;
            return OK;
        }
        return DECLINE;
    }
}

/* Any value, checked and skipped. */
static int skip(Cur *c, int depth) {
    if (depth > MAX_DEPTH || c->p >= c->end) return DECLINE;
    int is_int;
    switch (*c->p) {
        case '"': c->p++; return string(c, NULL);
        case '{': c->p++; return skip_members(c, depth, '}');
        case '[': c->p++; return skip_members(c, depth, ']');
        case 't': return literal(c, "true", 4);
        case 'f': return literal(c, "false", 5);
        case 'n': return literal(c, "null", 4);
        default: return number(c, &is_int);
    }
}

/* -- one chat line -------------------------------------------------------------------------- */

typedef struct {
    Buf key, role, content, prompt, answer, id;
    int has_answer, n_parts;
    /* id: 0 absent or null, 1 text in ``id`` */
    int id_kind;
} Line;

typedef struct {
    /* chat_key: the chat's key, or (flat) the prompt's, beside target_key (NULL: no target) */
    const unsigned char *chat_key, *id_key, *target_key;
    Py_ssize_t chat_len, id_len, target_len;
    int flat;
} Keys;

/* The object key at c->p (a quote) into ``key``, then the colon. */
static int object_key(Cur *c, Buf *key) {
    if (c->p >= c->end || *c->p != '"') return DECLINE;
    c->p++;
    reset(key);
    int r = string(c, key);
    if (r) return r;
    ws(c);
    if (c->p >= c->end || *c->p != ':') return DECLINE;
    c->p++;
    ws(c);
    return OK;
}

/* After a member: a comma (returns 1) or the closing bracket (returns 0); -1: neither. */
static int next_member(Cur *c, unsigned char close) {
    ws(c);
    if (c->p < c->end && *c->p == ',') {
        c->p++;
        ws(c);
        return 1;
    }
    if (c->p < c->end && *c->p == close) {
        c->p++;
        return 0;
    }
    return -1;
}

static int is_key(const Buf *k, const char *s) {
    Py_ssize_t n = (Py_ssize_t)strlen(s);
    return k->n == n && memcmp(k->p, s, n) == 0;
}

enum { ROLE_OTHER = 0, ROLE_USER = 1, ROLE_ASSISTANT = 2 };

static int role_of(const Buf *r) {
    static const char *users[] = {"user", "human", "prompter"};
    static const char *assistants[] = {"assistant", "gpt", "model", "bot", "chatgpt"};
    unsigned char low[16];
    if (r->n > 16) return ROLE_OTHER;
    for (Py_ssize_t k = 0; k < r->n; k++) low[k] = (r->p[k] >= 'A' && r->p[k] <= 'Z') ? r->p[k] | 32 : r->p[k];
    for (int k = 0; k < 3; k++)
        if ((Py_ssize_t)strlen(users[k]) == r->n && memcmp(low, users[k], r->n) == 0) return ROLE_USER;
    for (int k = 0; k < 5; k++)
        if ((Py_ssize_t)strlen(assistants[k]) == r->n && memcmp(low, assistants[k], r->n) == 0) return ROLE_ASSISTANT;
    return ROLE_OTHER;
}

/* A message member that is text if it is a string (decoded into ``out``, ``is_text`` set), else
   skipped; a second one of the same key declines the line. */
static int text_member(Cur *c, Buf *out, int *seen, int *is_text) {
    if ((*seen)++) return DECLINE;
    if (c->p < c->end && *c->p == '"') {
        c->p++;
        *is_text = 1;
        return string(c, out);
    }
    return skip(c, 3);
}

/* One message object (c->p past its brace). */
static int message(Cur *c, Line *L, int first) {
    int has_role = 0, has_content = 0, content_text = 0, role_text = 0, r;
    reset(&L->role);
    reset(&L->content);
    ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
    } else {
        for (;;) {
            if ((r = object_key(c, &L->key))) return r;
            if (is_key(&L->key, "from") || is_key(&L->key, "value")) return DECLINE;
            if (is_key(&L->key, "role")) {
                if ((r = text_member(c, &L->role, &has_role, &role_text))) return r;
            } else if (is_key(&L->key, "content")) {
                if ((r = text_member(c, &L->content, &has_content, &content_text))) return r;
            } else if ((r = skip(c, 3))) {
                return r;
            }
            int more = next_member(c, '}');
            if (more < 0) return DECLINE;
            if (!more) break;
        }
    }
    if (first && !has_role) return DECLINE;
    if (!role_text || L->role.n == 0) return OK;  /* no role: Python skips the turn */
    if (L->role.nonascii) return DECLINE;
    int role = role_of(&L->role);
    if (role == ROLE_USER) {
        if (!content_text) return DECLINE;
        if (L->n_parts++ && put(&L->prompt, (const unsigned char *)"\n", 1)) return NOMEM;
        if (put(&L->prompt, L->content.p, L->content.n)) return NOMEM;
        L->prompt.nonascii |= L->content.nonascii;
        L->prompt.visible |= L->content.visible;
    } else if (role == ROLE_ASSISTANT) {
        if (!content_text) return DECLINE;  /* the last assistant turn must be text: checked at the end */
        Buf t = L->answer;
        L->answer = L->content;
        L->content = t;
        L->has_answer = 1;
    }
    return OK;
}

static int messages(Cur *c, Line *L) {
    if (c->p >= c->end || *c->p != '[') return DECLINE;
    c->p++;
    ws(c);
    if (c->p < c->end && *c->p == ']') return DECLINE;  /* an empty chat: Python's general path */
    int first = 1, r;
    for (;;) {
        if (c->p < c->end && *c->p == '{') {
            c->p++;
            if ((r = message(c, L, first))) return r;
        } else if (first) {
            return DECLINE;
        } else if ((r = skip(c, 2))) {
            return r;
        }
        first = 0;
        int more = next_member(c, ']');
        if (more < 0) return DECLINE;
        if (!more) return OK;
    }
}

static int id_value(Cur *c, Line *L) {
    if (c->p >= c->end) return DECLINE;
    unsigned char ch = *c->p;
    reset(&L->id);
    if (ch == '"') {
        c->p++;
        L->id_kind = 1;
        return string(c, &L->id);
    }
    if (ch == 't' || ch == 'f') {
        int r = ch == 't' ? literal(c, "true", 4) : literal(c, "false", 5);
        L->id_kind = 1;
        if (!r && put(&L->id, (const unsigned char *)(ch == 't' ? "True" : "False"), ch == 't' ? 4 : 5)) return NOMEM;
        return r;
    }
    if (ch == 'n') {
        L->id_kind = 0;
        return literal(c, "null", 4);
    }
    if (ch == '-' || (ch >= '0' && ch <= '9')) {
        const unsigned char *start = c->p;
        int is_int = 0, r = number(c, &is_int);
        if (r) return r;
        if (!is_int || (c->p - start == 2 && start[0] == '-' && start[1] == '0')) return DECLINE;
        L->id_kind = 1;
        return put(&L->id, start, c->p - start) ? NOMEM : OK;
    }
    return DECLINE;  /* an object or a list: Python says what is wrong, or ignores it */
}

/* A flat row's text field: a string; a target (``has`` given) may be null: no target. */
static int flat_text(Cur *c, Buf *out, int *has) {
    if (c->p < c->end && *c->p == '"') {
        c->p++;
        if (has != NULL) *has = 1;
        return string(c, out);
    }
    if (has != NULL && c->p < c->end && *c->p == 'n') return literal(c, "null", 4);
    return DECLINE;  /* a number, a list, an object: Python's canonical_text says what it becomes */
}

static inline int starts_json_list(const Buf *b) { return b->n >= 2 && b->p[0] == '[' && b->p[1] == '{'; }

static int line(const unsigned char *s, const unsigned char *e, const Keys *K, Line *L) {
    Cur c = {s, e};
    int r, seen_chat = 0, seen_id = 0, seen_target = 0;
    reset(&L->prompt);
    reset(&L->answer);
    L->has_answer = L->n_parts = 0;
    L->id_kind = 0;
    ws(&c);
    if (c.p >= c.end || *c.p != '{') return DECLINE;
    c.p++;
    ws(&c);
    if (c.p < c.end && *c.p == '}') return DECLINE;
    for (;;) {
        if ((r = object_key(&c, &L->key))) return r;
        if (L->key.n == K->chat_len && memcmp(L->key.p, K->chat_key, K->chat_len) == 0) {
            if (seen_chat++) return DECLINE;
            if (K->flat) {
                if ((r = flat_text(&c, &L->prompt, NULL))) return r;
                L->n_parts = 1;
            } else if ((r = messages(&c, L))) {
                return r;
            }
        } else if (K->flat && K->target_key && L->key.n == K->target_len && memcmp(L->key.p, K->target_key, K->target_len) == 0) {
            if (seen_target++) return DECLINE;
            if ((r = flat_text(&c, &L->answer, &L->has_answer))) return r;
        } else if (K->id_key && L->key.n == K->id_len && memcmp(L->key.p, K->id_key, K->id_len) == 0) {
            if (seen_id++) return DECLINE;
            if ((r = id_value(&c, L))) return r;
        } else if ((r = skip(&c, 1))) {
            return r;
        }
        int more = next_member(&c, '}');
        if (more < 0) return DECLINE;
        if (!more) break;
    }
    ws(&c);
    if (c.p != c.end || !seen_chat || !L->n_parts) return DECLINE;
    /* a flat field holding a chat or rubric as a JSON string: Python decodes it */
    if (K->flat && (starts_json_list(&L->prompt) || (L->has_answer && starts_json_list(&L->answer)))) return DECLINE;
    /* blank texts: Python decides unless a visible ASCII character settles it */
    if (!L->prompt.visible) return DECLINE;
    if (L->has_answer && !L->answer.visible) {
        if (L->answer.nonascii) return DECLINE;
        for (Py_ssize_t k = 0; k < L->answer.n; k++) {
            unsigned char ch = L->answer.p[k];
            if (!(ch == ' ' || (ch >= '\t' && ch <= '\r') || (ch >= 0x1C && ch <= 0x1F))) return DECLINE;
        }
        L->has_answer = 0;  /* whitespace only: no target */
    }
    return OK;
}

/* -- the filter ----------------------------------------------------------------------------- */

typedef struct {
    const uint64_t *v;
    Py_ssize_t n;
} Sorted;

static int contains(const Sorted *s, uint64_t x) {
    Py_ssize_t lo = 0, hi = s->n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (s->v[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo < s->n && s->v[lo] == x;
}

static inline int py_space(unsigned char ch) { return ch == ' ' || (ch >= '\t' && ch <= '\r') || (ch >= 0x1C && ch <= 0x1F); }

/* text_hash of leakcheck.detect.hashing.word_text(normalize(text)), where the raw bytes
   settle it: up to the end of the fifth word, all ASCII. A non-ASCII byte there declines;
   past it, the fifth word was ended by ASCII whitespace, which no normalization joins to
   what follows, and word_text lower-cases what normalize keeps the case of (LaTeX). */
static int word_hash(const Buf *t, Buf *scratch, uint64_t *out) {
    reset(scratch);
    Py_ssize_t i = 0, n = t->n;
    for (int w = 0; w < KEY_WORDS; w++) {
        while (i < n && py_space(t->p[i])) i++;
        if (i >= n) break;
        Py_ssize_t j = i;
        while (j < n && !py_space(t->p[j])) {
            if (t->p[j] >= 0x80) return DECLINE;
            j++;
        }
        if (grow(scratch, j - i + 1)) return NOMEM;
        if (w) scratch->p[scratch->n++] = ' ';
        for (Py_ssize_t k = i; k < j; k++) scratch->p[scratch->n++] = (t->p[k] >= 'A' && t->p[k] <= 'Z') ? t->p[k] | 32 : t->p[k];
        i = j;
    }
    *out = text_hash_of(scratch->p, scratch->n);
    return OK;
}

typedef struct {
    int on, words, nonascii, drop;
    Sorted full_p, full_t, words_p, words_t;
} Filter;

/* Whether a level could match this text (side 0: a train prompt, 1: a train target). */
static int may_match(const Filter *F, const Buf *t, int side, Buf *scratch, int *err) {
    if (contains(side ? &F->full_t : &F->full_p, text_hash_of(t->p, t->n))) return 1;
    if (!F->words) return 0;
    uint64_t h;
    int r = word_hash(t, scratch, &h);
    if (r == NOMEM) {
        *err = 1;
        return 1;
    }
    if (r == DECLINE) return F->nonascii;
    return contains(side ? &F->words_t : &F->words_p, h);
}

/* -- the entry point ------------------------------------------------------------------------ */

static PyObject *text_of(const Buf *b) {
    if (!b->nonascii) {
        PyObject *s = PyUnicode_New(b->n, 127);
        if (s) memcpy(PyUnicode_DATA(s), b->p, b->n);
        return s;
    }
    return PyUnicode_DecodeUTF8((const char *)b->p, b->n, "strict");
}

/* Record(id, row, prompt, target, None, None). A named tuple is a tuple subclass without
   instance attributes: it is allocated and filled as tuple.__new__ does, without the call
   through its Python-level __new__ (a fifth of the reader's time). Any other ``make`` is called. */
static PyObject *record(PyObject *make, int direct, Line *L, Py_ssize_t row) {
    PyObject *args[6] = {NULL, NULL, NULL, Py_None, Py_None, Py_None};
    PyObject *out = NULL;
    args[0] = L->id_kind ? text_of(&L->id) : PyUnicode_FromFormat("%zd", row);
    args[1] = PyLong_FromSsize_t(row);
    args[2] = text_of(&L->prompt);
    if (L->has_answer) args[3] = text_of(&L->answer);
    if (args[0] && args[1] && args[2] && args[3]) {
        if (direct) {
            PyTypeObject *tp = (PyTypeObject *)make;
            out = tp->tp_alloc(tp, 6);
            if (out) {
                for (int k = 0; k < 6; k++) {
                    Py_INCREF(args[k]);
                    PyTuple_SET_ITEM(out, k, args[k]);
                }
            }
        } else {
            out = PyObject_Vectorcall(make, args, 6, NULL);
        }
    }
    Py_XDECREF(args[0]);
    Py_XDECREF(args[1]);
    Py_XDECREF(args[2]);
    if (L->has_answer) Py_XDECREF(args[3]);
    return out;
}

static int sorted_arg(PyObject *o, Py_buffer *view, Sorted *s) {
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE)) return -1;
    s->v = (const uint64_t *)view->buf;
    s->n = view->len / 8;
    return 0;
}

static void free_line(Line *L) {
    PyMem_Free(L->key.p);
    PyMem_Free(L->role.p);
    PyMem_Free(L->content.p);
    PyMem_Free(L->prompt.p);
    PyMem_Free(L->answer.p);
    PyMem_Free(L->id.p);
}

/* chat_lines(data, first_line, chat_key, target_key, flat, id_key, id_required, max_line, make, filter)
       -> (rows, fast, fast_no_target, kept, declined, maybe) or None

   data: whole lines of a JSONL file (the first one numbered first_line + 1; a BOM at its start
   is skipped when first_line is 0). chat_key, id_key: UTF-8 bytes of the top-level keys (id_key
   None: no id); with ``flat``, chat_key is the prompt's key and target_key the target's (None:
   no target), both strings at the top level. make(id, row, prompt, target, group, subset) builds a record; row counts the
   non-blank lines from 0. filter: None (keep every line read here) or (full_p, full_t, words_p,
   words_t, use_words, nonascii, drop) with sorted uint64 buffers. rows: non-blank lines; fast:
   lines read here (kept or dropped); fast_no_target: those without a target; kept: [(record,
   line)]; declined: [(row, line, start, end)]; maybe: with a filter that does not drop, the rows
   of the kept lines it passes (else None). None: a line is longer than max_line bytes. */
static PyObject *chat_lines(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data;
    Py_ssize_t first_line, max_line;
    const char *chat_key, *id_key, *target_key;
    Py_ssize_t chat_len, id_len, target_len;
    int id_required, flat;
    PyObject *make, *filter;
    if (!PyArg_ParseTuple(args, "y*ny#z#pz#pnOO", &data, &first_line, &chat_key, &chat_len, &target_key, &target_len, &flat,
                          &id_key, &id_len, &id_required, &max_line, &make, &filter))
        return NULL;
    Keys K = {(const unsigned char *)chat_key, (const unsigned char *)id_key, (const unsigned char *)target_key,
              chat_len, id_len, target_len, flat};
    /* a tuple subclass of six fields with no instance dict: allocated directly (see record()) */
    int direct = PyType_Check(make) && PyType_IsSubtype((PyTypeObject *)make, &PyTuple_Type) &&
                 ((PyTypeObject *)make)->tp_dictoffset == 0;
    Filter F;
    memset(&F, 0, sizeof F);
    Py_buffer views[4];
    int n_views = 0;
    PyObject *kept = NULL, *declined = NULL, *maybe = NULL, *out = NULL;
    Line L;
    memset(&L, 0, sizeof L);
    Buf scratch = {0};
    if (filter != Py_None) {
        PyObject *fp, *ft, *wp, *wt;
        if (!PyArg_ParseTuple(filter, "OOOOppp", &fp, &ft, &wp, &wt, &F.words, &F.nonascii, &F.drop)) goto done;
        Sorted *dst[4] = {&F.full_p, &F.full_t, &F.words_p, &F.words_t};
        PyObject *src[4] = {fp, ft, wp, wt};
        for (int k = 0; k < 4; k++, n_views++)
            if (sorted_arg(src[k], &views[k], dst[k])) goto done;
        F.on = 1;
    }
    kept = PyList_New(0);
    declined = PyList_New(0);
    if (!kept || !declined) goto done;
    if (F.on && !F.drop) {
        maybe = PyList_New(0);
        if (!maybe) goto done;
    } else {
        maybe = Py_None;
        Py_INCREF(maybe);
    }
    const unsigned char *b = (const unsigned char *)data.buf, *end = b + data.len, *s = b;
    if (first_line == 0 && data.len >= 3 && memcmp(b, "\xef\xbb\xbf", 3) == 0) s += 3;
    Py_ssize_t lineno = first_line, rows = 0, fast = 0, fast_no_target = 0;
    while (s < end) {
        const unsigned char *nl = memchr(s, '\n', end - s);
        const unsigned char *e = nl ? nl + 1 : end;
        lineno++;
        Py_ssize_t body = (nl ? nl : end) - s;
        if (body > max_line) {
            out = Py_None;
            Py_INCREF(out);
            goto done;
        }
        const unsigned char *q = s;
        while (q < e && (*q == ' ' || (*q >= '\t' && *q <= '\r'))) q++;
        if (q == e) {  /* blank: not a row */
            s = e;
            continue;
        }
        Py_ssize_t row = rows++;
        int r = line(s, e, &K, &L);
        if (r == OK && id_required && K.id_key && !L.id_kind) r = DECLINE;  /* Python says the id is missing */
        if (r == NOMEM) {
            PyErr_NoMemory();
            goto done;
        }
        if (r == DECLINE) {
            PyObject *t = Py_BuildValue("(nnnn)", row, lineno, (Py_ssize_t)(s - b), (Py_ssize_t)(e - b));
            if (!t || PyList_Append(declined, t)) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
            s = e;
            continue;
        }
        fast++;
        if (!L.has_answer) fast_no_target++;
        int keep = 1, err = 0;
        if (F.on) {
            keep = may_match(&F, &L.prompt, 0, &scratch, &err) || (L.has_answer && may_match(&F, &L.answer, 1, &scratch, &err));
            if (err) {
                PyErr_NoMemory();
                goto done;
            }
            if (!F.drop) {  /* every line is kept; the caller probes the filter's levels on these alone */
                if (keep) {
                    PyObject *r = PyLong_FromSsize_t(row);
                    if (!r || PyList_Append(maybe, r)) {
                        Py_XDECREF(r);
                        goto done;
                    }
                    Py_DECREF(r);
                }
                keep = 1;
            }
        }
        if (keep) {
            PyObject *rec = record(make, direct, &L, row);
            if (!rec) goto done;
            PyObject *t = PyTuple_New(2);
            if (!t) {
                Py_DECREF(rec);
                goto done;
            }
            PyTuple_SET_ITEM(t, 0, rec);
            PyTuple_SET_ITEM(t, 1, PyLong_FromSsize_t(lineno));
            if (!PyTuple_GET_ITEM(t, 1) || PyList_Append(kept, t)) {
                Py_DECREF(t);
                goto done;
            }
            Py_DECREF(t);
        }
        s = e;
    }
    out = Py_BuildValue("(nnnOOO)", rows, fast, fast_no_target, kept, declined, maybe);
done:
    Py_XDECREF(kept);
    Py_XDECREF(declined);
    Py_XDECREF(maybe);
    for (int k = 0; k < n_views; k++) PyBuffer_Release(&views[k]);
    PyBuffer_Release(&data);
    free_line(&L);
    PyMem_Free(scratch.p);
    return out;
}

static PyObject *text_hash(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b)) return NULL;
    uint64_t h = text_hash_of((const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLongLong(h);
}

/* count_newlines(buffer, start, end) -> the "\n" bytes in buffer[start:end] (the shard plan counts
   a file's lines in one reused buffer). */
static PyObject *count_newlines(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer b;
    Py_ssize_t start, end, count = 0;
    if (!PyArg_ParseTuple(args, "y*nn", &b, &start, &end)) return NULL;
    if (start < 0) start = 0;
    if (end > b.len) end = b.len;
    const char *p = (const char *)b.buf + start, *stop = (const char *)b.buf + end;
    Py_BEGIN_ALLOW_THREADS
    while (p < stop && (p = memchr(p, '\n', stop - p)) != NULL) {
        count++;
        p++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&b);
    return PyLong_FromSsize_t(count);
}

static PyMethodDef methods[] = {
    {"count_newlines", count_newlines, METH_VARARGS, "count_newlines(buffer, start, end) -> newlines in buffer[start:end]"},
    {"chat_lines", chat_lines, METH_VARARGS,
     "chat_lines(data, first_line, chat_key, target_key, flat, id_key, id_required, max_line, make, filter) -> (rows, fast, fast_no_target, kept, declined, maybe) or None"},
    {"text_hash", text_hash, METH_VARARGS, "text_hash(data) -> the 64-bit fast-lane hash of the bytes"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_chatlines", NULL, -1, methods};

PyMODINIT_FUNC PyInit__chatlines(void) { return PyModule_Create(&module); }
