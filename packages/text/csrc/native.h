/* The shared parts of curator_text._native: types, reading texts (bytes, starts, ends) from
 * Python, 16-byte vectors, whitespace and JSON byte tables (filled by module.c). */
#ifndef CURATOR_NATIVE_H
#define CURATOR_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "curator_text._native reads 8 bytes as one little-endian integer (word keys)"
#endif

typedef int64_t i64;
typedef uint64_t u64;
typedef uint32_t u32;
typedef uint8_t u8;

#define HIGH_BITS 0x8080808080808080ULL
#define LANES(b) (0x0101010101010101ULL * (u64)(b))

static inline u64 load8(const u8 *p) {
    u64 x;
    memcpy(&x, p, 8);
    return x;
}

static inline int ctz64(u64 x) { return __builtin_ctzll(x); }

/* The set bits of m, which has bits only at the top of its bytes (a sum over the lanes: no
 * popcount instruction, which the baseline x86-64 target lacks). */
static inline int lane_bits(u64 m) { return (int)(((m >> 7) * LANES(1)) >> 56); }

/* ---- arguments ------------------------------------------------------------------------------ */

/* A column of texts: bytes, and where each text starts and ends in them (two int64 arrays:
 * an Arrow array's offsets[:-1] and offsets[1:], or those of some of its rows), checked. */
typedef struct {
    Py_buffer bytes, starts, ends;
    const u8 *buf;
    const i64 *lo, *hi;
    Py_ssize_t n; /* texts */
} Texts;

static inline void texts_release(Texts *t) {
    if (t->bytes.obj) PyBuffer_Release(&t->bytes);
    if (t->starts.obj) PyBuffer_Release(&t->starts);
    if (t->ends.obj) PyBuffer_Release(&t->ends);
}

static inline int texts_check(Texts *t) {
    if (t->starts.len % 8 || t->starts.len != t->ends.len) {
        PyErr_SetString(PyExc_ValueError, "starts and ends must be int64 arrays of one length");
        return -1;
    }
    t->buf = (const u8 *)t->bytes.buf;
    t->lo = (const i64 *)t->starts.buf;
    t->hi = (const i64 *)t->ends.buf;
    t->n = t->starts.len / 8;
    for (Py_ssize_t d = 0; d < t->n; d++) {
        if (t->lo[d] < 0 || t->hi[d] < t->lo[d] || t->hi[d] > t->bytes.len) {
            PyErr_Format(PyExc_ValueError, "text %zd (bytes %lld to %lld) is not inside the %zd "
                         "bytes", d, (long long)t->lo[d], (long long)t->hi[d], t->bytes.len);
            return -1;
        }
    }
    return 0;
}

#define TEXTS_ARGS "y*y*y*"
#define TEXTS_PTRS(t) &(t).bytes, &(t).starts, &(t).ends

/* An output array of ``count`` items of ``itemsize`` bytes. */
static inline int out_check(Py_buffer *out, Py_ssize_t count, Py_ssize_t itemsize, const char *what) {
    if (out->len != count * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd bytes, got %zd", what,
                     count * itemsize, out->len);
        return -1;
    }
    return 0;
}

/* ---- whitespace ----------------------------------------------------------------------------- */

/* Per byte value: 1 for the ASCII whitespace str.split() splits on, 2 for the first byte of a
 * multi-byte character that may be whitespace. */
extern u8 SPACE_CLASS[256];
/* Per byte: 1 for the characters NeMo Curator's URL pattern takes one at a time, 2 for hex digits
 * (%XX), 3 for both (counts.c). */
extern u8 URL_CLASS[256];
/* The third bytes of the spaces E2 80 xx (U+2000-U+200A, U+2028, U+2029, U+202F). */
extern u8 SPACE_E2_80[256];

/* The bytes of the whitespace character at buf[p] (before hi), or 0. */
static inline int space_width(const u8 *buf, i64 p, i64 hi) {
    u8 b0 = buf[p];
    u8 kind = SPACE_CLASS[b0];
    if (kind != 2) return kind;
    u8 b1 = p + 1 < hi ? buf[p + 1] : 0;
    if (b0 == 0xC2) return (b1 == 0x85 || b1 == 0xA0) ? 2 : 0;
    u8 b2 = p + 2 < hi ? buf[p + 2] : 0;
    if ((b0 == 0xE1 && b1 == 0x9A && b2 == 0x80) || (b0 == 0xE2 && b1 == 0x80 && SPACE_E2_80[b2])
        || (b0 == 0xE2 && b1 == 0x81 && b2 == 0x9F) || (b0 == 0xE3 && b1 == 0x80 && b2 == 0x80))
        return 3;
    return 0;
}

typedef u8 v16 __attribute__((vector_size(16)));

static inline v16 load16(const u8 *p) {
    v16 v;
    memcpy(&v, p, 16);
    return v;
}

static inline v16 splat16(u8 b) {
    v16 v;
    memset(&v, b, 16);
    return v;
}

/* Whether any lane of the comparison mask m is set. */
static inline int any16(v16 m) {
    u64 lanes[2];
    memcpy(lanes, &m, 16);
    return (lanes[0] | lanes[1]) != 0;
}

#if defined(__SSE2__) && !defined(CURATOR_PORTABLE)
#include <emmintrin.h>
/* Bit k: the top bit of byte k of m (16 bytes). */
static inline u32 top_bits16(v16 m) { return (u32)_mm_movemask_epi8((__m128i)m); }
#else
/* Bit k: the top bit of byte k of m (16 bytes), by a multiply per 8 bytes (portable; the tests
 * build and check this path too). */
static inline u32 top_bits16(v16 m) {
    u64 lanes[2];
    memcpy(lanes, &m, 16);
    u64 a = ((lanes[0] & HIGH_BITS) * 0x0002040810204081ULL) >> 56;
    u64 b = ((lanes[1] & HIGH_BITS) * 0x0002040810204081ULL) >> 56;
    return (u32)(a | (b << 8));
}
#endif

typedef signed char s16 __attribute__((vector_size(16)));

/* The lanes of 16 ASCII bytes (below 0x80: signed compares hold) that str.split() splits on
 * (9-13, 28-32). */
static inline v16 ascii_spaces16(v16 x) {
    s16 y = (s16)x;
    return (v16)(((y > (s16)splat16(8)) & (y < (s16)splat16(14)))
                 | ((y > (s16)splat16(27)) & (y < (s16)splat16(33))));
}

/* POPCOUNT8[b]: the set bits of the byte b (no popcount instruction on baseline x86-64). */
extern u8 POPCOUNT8[256];

static inline int is_continuation(u8 b) { return (b & 0xC0) == 0x80; }

/* The whitespace lanes (as str.split() sees them) of the 16 bytes at buf[p], which must be
 * followed by 2 more of the same text: ASCII spaces, and every byte of a multi-byte space
 * (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). *cont: the
 * continuation bytes among the 16; *spill: the bytes of a space that continue after them (all
 * continuation bytes). Blocks of ASCII, most of prose, take the first return. */
static inline u32 block_spaces(const u8 *buf, i64 p, int *cont, int *spill) {
    v16 x = load16(buf + p);
    u32 spaces = top_bits16(ascii_spaces16(x)); /* high bytes are negative: never ASCII spaces */
    if (!top_bits16(x)) {
        *cont = *spill = 0;
        return spaces;
    }
    v16 x1 = load16(buf + p + 1), x2 = load16(buf + p + 2);
    v16 two = (x == splat16(0xC2)) & ((x1 == splat16(0x85)) | (x1 == splat16(0xA0)));
    v16 three = ((x == splat16(0xE1)) & (x1 == splat16(0x9A)) & (x2 == splat16(0x80)))
                | ((x == splat16(0xE2)) & (x1 == splat16(0x80))
                   & (((x2 - splat16(0x80)) <= splat16(0x0A)) | (x2 == splat16(0xA8))
                      | (x2 == splat16(0xA9)) | (x2 == splat16(0xAF))))
                | ((x == splat16(0xE2)) & (x1 == splat16(0x81)) & (x2 == splat16(0x9F)))
                | ((x == splat16(0xE3)) & (x1 == splat16(0x80)) & (x2 == splat16(0x80)));
    u32 m2 = top_bits16(two), m3 = top_bits16(three);
    u32 all = spaces | m2 | (m2 << 1) | m3 | (m3 << 1) | (m3 << 2);
    u32 c = top_bits16((v16)((x & splat16(0xC0)) == splat16(0x80)));
    *cont = POPCOUNT8[c & 0xFF] + POPCOUNT8[c >> 8];
    *spill = all >> 17 ? 2 : all >> 16 ? 1 : 0;
    return all & 0xFFFF;
}

extern u8 JSON_WIDTH[256];  /* bytes each input byte takes in a JSON string */
extern u8 JSON_LETTER[256]; /* the letter after the backslash of the two-byte escapes */
extern u8 JSON_UNESCAPE[256]; /* the byte a two-byte escape's letter stands for (0: none) */
extern const char HEX[];

/* The lanes of 16 bytes that a JSON string must escape: control bytes, '"' and '\\'. */
static inline v16 json_special16(v16 x) {
    return (v16)((x < splat16(0x20)) | (x == splat16('"')) | (x == splat16('\\')));
}

/* Each file's functions for the module (NULL-terminated). */
extern PyMethodDef COUNT_METHODS[], NGRAM_METHODS[], BOILERPLATE_METHODS[], JSONL_METHODS[];
/* The words every boilerplate string holds, as a tuple of str (boilerplate.c). */
PyObject *boilerplate_anchors(void);
/* Fills the byte tables above (module.c). */
void init_tables(void);

#endif
