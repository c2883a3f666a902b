/* curator_text._native: the compiled kernels of the default text path, built when the package is
 * installed (no compiling on a machine's first run, no numba import in a worker).
 *
 * Every kernel reads a column of UTF-8 texts as (bytes, int64 starts, int64 ends: text d is
 * bytes[starts[d]:ends[d]], so a selection of an Arrow array's rows needs no copy) and writes
 * into arrays the caller allocated (NumPy), with the GIL released. Words are what
 * str.split() finds (runs of bytes that are not whitespace, Unicode spaces included). Text is
 * read 16 bytes at a time (SSE2 on x86-64; GCC's portable vectors elsewhere, a path the tests
 * build too) where it can be. The Python wrappers and the references the tests compare with are
 * in filters/_vec.py, filters/_ngrams.py, filters/repetition.py and io/jsonl_encode.py.
 */
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

static void texts_release(Texts *t) {
    if (t->bytes.obj) PyBuffer_Release(&t->bytes);
    if (t->starts.obj) PyBuffer_Release(&t->starts);
    if (t->ends.obj) PyBuffer_Release(&t->ends);
}

static int texts_check(Texts *t) {
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
static int out_check(Py_buffer *out, Py_ssize_t count, Py_ssize_t itemsize, const char *what) {
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
static u8 SPACE_CLASS[256];
/* The third bytes of the spaces E2 80 xx (U+2000-U+200A, U+2028, U+2029, U+202F). */
static u8 SPACE_E2_80[256];

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
static u8 POPCOUNT8[256];

static inline int is_continuation(u8 b) { return (b & 0xC0) == 0x80; }

/* ---- word counts, characters, byte classes --------------------------------------------------- */

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

static i64 count_words(const u8 *buf, i64 p, i64 hi) {
    i64 count = 0;
    u32 before = 1; /* the byte before is a space */
    while (p < hi) {
        if (p + 18 <= hi) {
            int cont, spill;
            u32 spaces = block_spaces(buf, p, &cont, &spill);
            u32 first = ~spaces & ((spaces << 1) | before) & 0xFFFF;
            count += POPCOUNT8[first & 0xFF] + POPCOUNT8[first >> 8];
            before = spaces >> 15;
            p += 16 + spill; /* the rest of a space: still a space */
            continue;
        }
        int width = space_width(buf, p, hi);
        u32 space = width ? 1 : 0;
        count += before & ~space & 1;
        before = space;
        p += width > 1 ? width : 1;
    }
    return count;
}

/* The characters of buf[p:hi]: its bytes less its continuation bytes (10xxxxxx), 16 at a time. */
static i64 count_chars(const u8 *buf, i64 p, i64 hi) {
    i64 cont = 0, size = hi - p;
    for (; p + 16 <= hi; p += 16) {
        u32 c = top_bits16((v16)((load16(buf + p) & splat16(0xC0)) == splat16(0x80)));
        cont += POPCOUNT8[c & 0xFF] + POPCOUNT8[c >> 8];
    }
    for (; p < hi; p++) cont += is_continuation(buf[p]);
    return size - cont;
}

/* Runs fn on every text of (buf, starts, ends, out): out[d] = fn(buf, starts[d], ends[d]). */
typedef i64 (*PerText)(const u8 *buf, i64 lo, i64 hi);

static PyObject *per_text_kernel(PyObject *args, PerText fn) {
    Texts t = {0};
    Py_buffer out = {0};
    if (!PyArg_ParseTuple(args, TEXTS_ARGS "w*", TEXTS_PTRS(t), &out)) return NULL;
    PyObject *ret = NULL;
    if (texts_check(&t) || out_check(&out, t.n, 8, "out")) goto done;
    i64 *o = (i64 *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < t.n; d++) o[d] = fn(t.buf, t.lo[d], t.hi[d]);
    Py_END_ALLOW_THREADS
    ret = Py_NewRef(Py_None);
done:
    texts_release(&t);
    if (out.obj) PyBuffer_Release(&out);
    return ret;
}

PyDoc_STRVAR(word_counts_doc,
"word_counts(buf, starts, ends, out)\n--\n\n"
"out[d] = len(text.split()) of every text (int64).");

static PyObject *py_word_counts(PyObject *self, PyObject *args) {
    return per_text_kernel(args, count_words);
}

PyDoc_STRVAR(char_counts_doc,
"char_counts(buf, starts, ends, out)\n--\n\n"
"out[d] = len(text) of every text (int64).");

static PyObject *py_char_counts(PyObject *self, PyObject *args) {
    return per_text_kernel(args, count_chars);
}

PyDoc_STRVAR(range_counts_doc,
"range_counts(buf, starts, ends, ranges, in_ranges, chars)\n--\n\n"
"in_ranges[d] = the bytes of every text in one of the byte ranges (bytes: lo, hi pairs,\n"
"inclusive, at most 16 pairs); chars[d] = its characters (both int64). 16 bytes at a time.");

static PyObject *py_range_counts(PyObject *self, PyObject *args) {
    Texts t = {0};
    Py_buffer ranges = {0}, in_out = {0}, chars_out = {0};
    if (!PyArg_ParseTuple(args, TEXTS_ARGS "y*w*w*", TEXTS_PTRS(t), &ranges, &in_out,
                          &chars_out))
        return NULL;
    PyObject *ret = NULL;
    if (texts_check(&t) || out_check(&in_out, t.n, 8, "in_ranges")
        || out_check(&chars_out, t.n, 8, "chars"))
        goto done;
    if (ranges.len % 2 || ranges.len > 32) {
        PyErr_SetString(PyExc_ValueError, "ranges: at most 16 (lo, hi) byte pairs");
        goto done;
    }
    int n_ranges = (int)(ranges.len / 2);
    const u8 *r = ranges.buf;
    u8 table[256] = {0};
    v16 lows[16], widths[16];
    for (int k = 0; k < 16; k++) { /* unused ranges hold 0xFF alone: never in UTF-8 */
        lows[k] = splat16(k < n_ranges ? r[2 * k] : 0xFF);
        widths[k] = splat16(k < n_ranges ? (u8)(r[2 * k + 1] - r[2 * k]) : 0);
        for (int b = k < n_ranges ? r[2 * k] : 256; b <= (k < n_ranges ? r[2 * k + 1] : -1); b++)
            table[b] = 1;
    }
    int wide = n_ranges > 8; /* 8 ranges (unrolled) or 16 */
    i64 *in = (i64 *)in_out.buf, *ch = (i64 *)chars_out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < t.n; d++) {
        i64 p = t.lo[d], hi = t.hi[d], hits = 0, cont = 0;
        for (; p + 16 <= hi; p += 16) {
            v16 x = load16(t.buf + p), m = splat16(0);
            for (int k = 0; k < 8; k++) m |= (v16)((x - lows[k]) <= widths[k]);
            if (wide)
                for (int k = 8; k < 16; k++) m |= (v16)((x - lows[k]) <= widths[k]);
            u32 h = top_bits16(m), c = top_bits16((v16)((x & splat16(0xC0)) == splat16(0x80)));
            hits += POPCOUNT8[h & 0xFF] + POPCOUNT8[h >> 8];
            cont += POPCOUNT8[c & 0xFF] + POPCOUNT8[c >> 8];
        }
        for (; p < hi; p++) {
            hits += table[t.buf[p]];
            cont += is_continuation(t.buf[p]);
        }
        in[d] = hits;
        ch[d] = (t.hi[d] - t.lo[d]) - cont;
    }
    Py_END_ALLOW_THREADS
    ret = Py_NewRef(Py_None);
done:
    texts_release(&t);
    if (ranges.obj) PyBuffer_Release(&ranges);
    if (in_out.obj) PyBuffer_Release(&in_out);
    if (chars_out.obj) PyBuffer_Release(&chars_out);
    return ret;
}

/* ---- NeMo Curator's URLs -------------------------------------------------------------------- */

/* Per byte: 1 for the characters NeMo Curator's URL pattern takes one at a time
 * ([A-Za-z0-9$\-_@.&+/:=?#~]|[!*\(\),]), 2 for hex digits (%XX), 3 for both. */
static u8 URL_CLASS[256];


/* The characters of buf[lo:hi] that re.sub(NEMO_URL_REGEX, "", text) removes: "https?://" then
 * one or more URL characters or %XX escapes, leftmost first, greedy, not overlapping (all ASCII:
 * bytes are characters). Found from their ":", looked for 16 bytes at a time. */
static i64 url_chars_one(const u8 *buf, i64 lo, i64 hi) {
    i64 p = lo, removed = 0, c = lo + 4;
    while (c + 2 < hi) {
        if (c + 16 <= hi) {
            u32 colons = top_bits16((v16)(load16(buf + c) == splat16(0x3A)));
            if (!colons) {
                c += 16;
                continue;
            }
            c += ctz64(colons);
        } else if (buf[c] != 0x3A) {
            c++;
            continue;
        }
        i64 first = buf[c - 1] == 0x73 ? c - 5 : c - 4;
        if (first < p || buf[first] != 0x68 || buf[first + 1] != 0x74 || buf[first + 2] != 0x74
            || buf[first + 3] != 0x70 || buf[c + 1] != 0x2F || buf[c + 2] != 0x2F) {
            c++;
            continue;
        }
        i64 q = c + 3;
        while (q < hi) {
            if (URL_CLASS[buf[q]] & 1)
                q++;
            else if (buf[q] == 0x25 && q + 2 < hi && (URL_CLASS[buf[q + 1]] & 2)
                     && (URL_CLASS[buf[q + 2]] & 2))
                q += 3;
            else
                break;
        }
        if (q == c + 3) {
            c++;
            continue;
        }
        removed += q - first;
        p = q;
        c = q + 4;
    }
    return removed;
}

PyDoc_STRVAR(url_chars_doc,
"url_chars(buf, starts, ends, out)\n--\n\n"
"out[d] = the characters of every text that removing NeMo Curator's URLs removes (int64).");

static PyObject *py_url_chars(PyObject *self, PyObject *args) {
    return per_text_kernel(args, url_chars_one);
}

/* ---- JSON string literals ------------------------------------------------------------------- */

static u8 JSON_WIDTH[256];  /* bytes each input byte takes in a JSON string */
static u8 JSON_LETTER[256]; /* the letter after the backslash of the two-byte escapes */
static u8 JSON_UNESCAPE[256]; /* the byte a two-byte escape's letter stands for (0: none) */
static const char HEX[] = "0123456789abcdef";

/* The lanes of 16 bytes that a JSON string must escape: control bytes, '"' and '\\'. */
static inline v16 json_special16(v16 x) {
    return (v16)((x < splat16(0x20)) | (x == splat16('"')) | (x == splat16('\\')));
}

/* The bytes buf[p:hi] take as the inside of a JSON string literal. */
static i64 json_size(const u8 *buf, i64 p, i64 hi) {
    i64 size = hi - p;
    for (; p + 16 <= hi; p += 16)
        if (any16(json_special16(load16(buf + p))))
            for (int k = 0; k < 16; k++) size += JSON_WIDTH[buf[p + k]] - 1;
    for (; p < hi; p++) size += JSON_WIDTH[buf[p]] - 1;
    return size;
}

/* Writes buf[p:hi] escaped as the inside of a JSON string literal at out; returns its end. */
static u8 *json_escape(const u8 *buf, i64 p, i64 hi, u8 *out) {
    while (p < hi) {
        i64 run = p; /* bytes that need no escape are copied as they are */
        while (run + 16 <= hi && !any16(json_special16(load16(buf + run)))) run += 16;
        while (run < hi && JSON_WIDTH[buf[run]] == 1) run++;
        memcpy(out, buf + p, (size_t)(run - p));
        out += run - p;
        p = run;
        if (p == hi) break;
        u8 b = buf[p++];
        if (JSON_WIDTH[b] == 2) {
            out[0] = '\\';
            out[1] = JSON_LETTER[b];
            out += 2;
        } else {
            memcpy(out, "\\u00", 4);
            out[4] = HEX[b >> 4];
            out[5] = HEX[b & 15];
            out += 6;
        }
    }
    return out;
}

/* One column of jsonl_rows: what precedes its value, its values (UTF-8), which are null, and
 * whether they are strings (quoted and escaped) or JSON already (numbers, true, false). */
typedef struct {
    Py_buffer prefix, valid;
    Texts values;
    int escape;
} Column;

/* The bytes row r takes in JSON Lines. */
static i64 row_size(const Column *cols, Py_ssize_t n_cols, Py_ssize_t r) {
    i64 size = 2; /* "}\n" */
    for (Py_ssize_t c = 0; c < n_cols; c++) {
        const Column *col = &cols[c];
        const u8 *valid = col->valid.obj ? col->valid.buf : NULL;
        size += col->prefix.len;
        if (valid && !valid[r])
            size += 4;
        else if (col->escape)
            size += 2 + json_size(col->values.buf, col->values.lo[r], col->values.hi[r]);
        else
            size += col->values.hi[r] - col->values.lo[r];
    }
    return size;
}

/* Writes row r at out; returns its end. */
static u8 *write_row(const Column *cols, Py_ssize_t n_cols, Py_ssize_t r, u8 *out) {
    for (Py_ssize_t c = 0; c < n_cols; c++) {
        const Column *col = &cols[c];
        const u8 *buf = col->values.buf, *valid = col->valid.obj ? col->valid.buf : NULL;
        memcpy(out, col->prefix.buf, (size_t)col->prefix.len);
        out += col->prefix.len;
        i64 lo = col->values.lo[r], hi = col->values.hi[r];
        if (valid && !valid[r]) {
            memcpy(out, "null", 4);
            out += 4;
        } else if (col->escape) {
            *out++ = '"';
            out = json_escape(buf, lo, hi, out);
            *out++ = '"';
        } else {
            memcpy(out, buf + lo, (size_t)(hi - lo));
            out += hi - lo;
        }
    }
    *out++ = '}';
    *out++ = '\n';
    return out;
}

PyDoc_STRVAR(jsonl_rows_doc,
"jsonl_rows(columns, first_row, out) -> (next_row, n_bytes)\n--\n\n"
"JSON Lines into the writable buffer out, from row first_row for as many whole rows as fit:\n"
"for every row, each column's prefix (b'{\"key\":', b',\"key\":' …) and value, then b'}\\n'.\n"
"columns: tuples (prefix, bytes, starts, ends, valid or None, escape): each row's value is\n"
"bytes[starts[r]:ends[r]] (int64 arrays); valid holds one byte\n"
"per row (0: null); escape: the values are strings, written quoted and escaped as\n"
"json.dumps(ensure_ascii=False) does, else written as they are (JSON already). A row larger\n"
"than out is not written (next_row == first_row): give a larger buffer.");

static PyObject *py_jsonl_rows(PyObject *self, PyObject *args) {
    PyObject *spec, *ret = NULL;
    Py_ssize_t first;
    Py_buffer out = {0};
    if (!PyArg_ParseTuple(args, "O!nw*", &PyTuple_Type, &spec, &first, &out)) return NULL;
    Py_ssize_t n_cols = PyTuple_GET_SIZE(spec), n_rows = -1;
    Column *cols = calloc((size_t)n_cols + 1, sizeof(Column));
    if (!cols) {
        PyBuffer_Release(&out);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t c = 0; c < n_cols; c++) {
        PyObject *item = PyTuple_GET_ITEM(spec, c), *valid;
        Column *col = &cols[c];
        if (!PyArg_ParseTuple(item, "y*" TEXTS_ARGS "Op", &col->prefix, TEXTS_PTRS(col->values),
                              &valid, &col->escape))
            goto done;
        if (valid != Py_None && PyObject_GetBuffer(valid, &col->valid, PyBUF_SIMPLE)) goto done;
        if (texts_check(&col->values)) goto done;
        if (n_rows < 0) n_rows = col->values.n;
        if (col->values.n != n_rows || (col->valid.obj && col->valid.len != n_rows)) {
            PyErr_SetString(PyExc_ValueError, "every column needs one value per row");
            goto done;
        }
    }
    if (n_rows < 0) n_rows = 0;
    if (first < 0 || first > n_rows) {
        PyErr_SetString(PyExc_ValueError, "first_row is out of range");
        goto done;
    }
    Py_ssize_t r = first;
    u8 *o = out.buf, *end = o + out.len;
    Py_BEGIN_ALLOW_THREADS
    for (; r < n_rows; r++) {
        if (row_size(cols, n_cols, r) > end - o) break;
        o = write_row(cols, n_cols, r, o);
    }
    Py_END_ALLOW_THREADS
    ret = Py_BuildValue("nn", r, (Py_ssize_t)(o - (u8 *)out.buf));
done:
    for (Py_ssize_t c = 0; c < n_cols; c++) {
        Column *col = &cols[c];
        if (col->prefix.obj) PyBuffer_Release(&col->prefix);
        texts_release(&col->values);
        if (col->valid.obj) PyBuffer_Release(&col->valid);
    }
    free(cols);
    PyBuffer_Release(&out);
    return ret;
}

/* ---- word n-grams --------------------------------------------------------------------------- */

#define FNV_OFFSET 0xCBF29CE484222325ULL
#define FNV_PRIME 0x100000001B3ULL

/* h with its bits mixed (MurmurHash3's finaliser): any of its bits make a slot. */
static inline u64 mix(u64 h) {
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDULL;
    h ^= h >> 33;
    return h;
}

/* The slot mask of a hash table for m entries (at most half full). */
static inline i64 table_mask(i64 m) {
    i64 size = 16;
    while (size < 2 * m) size *= 2;
    return size - 1;
}

/* An n-gram table slot: a hash of its words (confirmed on the words themselves), its
 * occurrences so far and first position. A slot is in use when gen is the text's: nothing to
 * clear between texts. */
typedef struct {
    u64 key;
    u32 gen, count;
    i64 first;
} GramSlot;

/* Scratch for the words of one text at a time (sized for the longest text of a call). */
typedef struct {
    i64 *starts, *ends; /* each word's bytes */
    i64 *cs;            /* cs[w]: the characters of the words before word w */
    u64 *keys;          /* a word's bytes when it has at most 8, else a hash of them */
    u64 *hashes;        /* a word's code: its key and length (word_code) */
    i64 *longs;         /* the words of more than 8 bytes */
    i64 *fail;          /* Knuth-Morris-Pratt's table of a word (count_bytes) */
    GramSlot *table;
    u32 gen;
    i64 cap, size;
} Scratch;

static void scratch_free(Scratch *s) {
    free(s->starts);
    free(s->table);
}

static int scratch_alloc(Scratch *s, const Texts *t) {
    i64 longest = 0;
    for (Py_ssize_t d = 0; d < t->n; d++)
        if (t->hi[d] - t->lo[d] > longest) longest = t->hi[d] - t->lo[d];
    s->cap = longest / 2 + 3;
    s->size = table_mask(2 * s->cap) + 1;
    s->starts = malloc(sizeof(i64) * 8 * (size_t)s->cap);
    s->table = calloc((size_t)s->size, sizeof(GramSlot));
    if (!s->starts || !s->table) {
        scratch_free(s);
        return -1;
    }
    s->ends = s->starts + s->cap;
    s->cs = s->ends + s->cap;
    s->keys = (u64 *)(s->cs + s->cap);
    s->hashes = s->keys + s->cap;
    s->longs = (i64 *)(s->hashes + s->cap);
    s->fail = s->longs + s->cap; /* 2 * cap: the longest word of the text */
    s->gen = 0;
    return 0;
}

/* The next text's generation: every slot of an older one is free. */
static void next_text(Scratch *s) {
    if (++s->gen == 0) { /* wrapped: clear once every 2^32 texts */
        memset(s->table, 0, sizeof(GramSlot) * (size_t)s->size);
        s->gen = 1;
    }
}

/* The words of buf[lo:hi] into s->starts / s->ends; returns their number and sets *chars to the
 * characters of buf[lo:hi]. It is read 16 bytes at a time: their spaces are a 16-bit mask whose
 * edges are the word starts and ends (the last bytes of a text a character at a time). */
static i64 bounds(const u8 *buf, i64 lo, i64 hi, Scratch *s, i64 *chars) {
    i64 *starts = s->starts, *ends = s->ends;
    i64 n_starts = 0, n_ends = 0, cont = 0, p = lo;
    u32 before = 1; /* the byte before p is a space (or the text starts there) */
    while (p < hi) {
        if (p + 18 <= hi) {
            int block_cont, spill;
            u32 spaces = block_spaces(buf, p, &block_cont, &spill);
            u32 after_space = (spaces << 1) | before;
            u32 first = ~spaces & after_space & 0xFFFF, last = spaces & ~after_space;
            for (int k = 0; k < 2; k++) { /* most 16 bytes of prose hold 2-3: no branch */
                starts[n_starts] = p + ctz64(first | 0x10000);
                n_starts += first != 0;
                first &= first - 1;
                ends[n_ends] = p + ctz64(last | 0x10000);
                n_ends += last != 0;
                last &= last - 1;
            }
            while (first) {
                starts[n_starts++] = p + ctz64(first);
                first &= first - 1;
            }
            while (last) {
                ends[n_ends++] = p + ctz64(last);
                last &= last - 1;
            }
            before = spaces >> 15;
            cont += block_cont + spill;
            p += 16 + spill; /* the rest of a space: still a space */
            continue;
        }
        int width = space_width(buf, p, hi);
        u32 space = width ? 1 : 0;
        if (before > space) starts[n_starts++] = p;
        if (space > before) ends[n_ends++] = p;
        before = space;
        cont += width ? width - 1 : is_continuation(buf[p]);
        p += width > 1 ? width : 1;
    }
    ends[n_ends] = hi; /* a text ending in a word */
    *chars = (hi - lo) - cont;
    return n_starts;
}

/* LOW_BYTES[k]: the low k bytes of a uint64 set (k = 0 .. 8). */
static const u64 LOW_BYTES[9] = {0, 0xFFULL, 0xFFFFULL, 0xFFFFFFULL, 0xFFFFFFFFULL,
                                 0xFFFFFFFFFFULL, 0xFFFFFFFFFFFFULL, 0xFFFFFFFFFFFFFFULL, ~0ULL};

/* A word's key and length as one number for the n-gram hashes (mixed there). */
static inline u64 word_code(u64 key, i64 length) {
    return key ^ ((u64)length << 56) ^ ((u64)length * 0x9E3779B97F4A7C15ULL);
}

/* The continuation bytes (10xxxxxx) of buf[p:e] (size: the bytes readable), 8 at a time. */
static inline i64 continuations(const u8 *buf, i64 size, i64 p, i64 e) {
    i64 cont = 0;
    for (; p + 8 <= e; p += 8) {
        u64 x = load8(buf + p);
        cont += lane_bits(x & ~(x << 1) & HIGH_BITS);
    }
    if (p < e && p + 8 <= size) { /* the last bytes, as 8 with the others masked off */
        u64 x = load8(buf + p) & LOW_BYTES[e - p];
        return cont + lane_bits(x & ~(x << 1) & HIGH_BITS);
    }
    for (; p < e; p++) cont += is_continuation(buf[p]);
    return cont;
}

/* The words of buf[lo:hi] (bounds), each word's key and hash, and the characters before each
 * word (cs). Returns the words; *chars: the characters of the text. */
static i64 words(const u8 *buf, i64 size, i64 lo, i64 hi, Scratch *s, i64 *chars) {
    i64 n_words = bounds(buf, lo, hi, s, chars);
    const i64 *starts = s->starts, *ends = s->ends;
    i64 *cs = s->cs, *longs = s->longs, n_long = 0;
    u64 *keys = s->keys, *hashes = s->hashes;
    int ascii = *chars == hi - lo; /* no continuation byte: characters are bytes */
    cs[0] = 0;
    /* every word's first 8 bytes (no branch on its length); longer words are noted and
     * hashed whole below */
    for (i64 w = 0; w < n_words; w++) {
        i64 st = starts[w], length = ends[w] - st;
        u64 x;
        if (st + 8 <= size) {
            x = load8(buf + st);
        } else {
            x = 0;
            for (i64 k = 0; k < length && k < 8; k++) x |= (u64)buf[st + k] << (8 * k);
        }
        u64 key = x & LOW_BYTES[length < 8 ? length : 8];
        keys[w] = key;
        hashes[w] = word_code(key, length);
        longs[n_long] = w;
        n_long += length > 8;
        cs[w + 1] = cs[w] + length;
    }
    for (i64 i = 0; i < n_long; i++) { /* hashed 8 bytes a step; confirmed on the bytes */
        i64 w = longs[i], st = starts[w], e = ends[w], k = st;
        u64 key = FNV_OFFSET;
        for (; k + 8 <= e; k += 8) key = mix(key ^ load8(buf + k)) + FNV_PRIME;
        u64 tail = 0;
        if (k + 8 <= size)
            tail = load8(buf + k) & LOW_BYTES[e - k];
        else
            for (int j = 0; k < e; k++, j++) tail |= (u64)buf[k] << (8 * j);
        keys[w] = key ^ tail;
        hashes[w] = word_code(keys[w], e - st);
    }
    if (!ascii) /* characters: the bytes that do not continue one (in words that have any) */
        for (i64 w = 0; w < n_words; w++) {
            i64 length = ends[w] - starts[w];
            int plain = length <= 8 && !(keys[w] & HIGH_BITS);
            cs[w + 1] = cs[w] + length - (plain ? 0 : continuations(buf, size, starts[w], ends[w]));
        }
    return n_words;
}

/* Whether words a and b are the same bytes. */
static inline int same_word(const u8 *buf, const Scratch *s, i64 a, i64 b) {
    i64 la = s->ends[a] - s->starts[a];
    return s->keys[a] == s->keys[b] && la == s->ends[b] - s->starts[b]
           && (la <= 8 || !memcmp(buf + s->starts[a], buf + s->starts[b], (size_t)la));
}

/* The slot of the n-gram at word j: found (count > 0; first: its first position) or taken for
 * it (count 0). Its hash only picks the slot: equal hashes are confirmed on the words. */
static inline GramSlot *gram_slot(const u8 *buf, Scratch *s, i64 j, int n, i64 mask,
                                  u64 hash_mask) {
    const u64 *codes = s->hashes;
    u64 h = codes[j];
    if (n == 2) /* the common case, unrolled */
        h = h * 0xC2B2AE3D27D4EB4FULL + codes[j + 1];
    else
        for (int k = 1; k < n; k++) h = h * 0xC2B2AE3D27D4EB4FULL + codes[j + k];
    h = mix(h) & hash_mask;
    i64 slot = (i64)(h & (u64)mask);
    for (;;) {
        GramSlot *g = &s->table[slot];
        if (g->gen != s->gen) {
            g->gen = s->gen;
            g->key = h;
            g->count = 0;
            g->first = j;
            return g;
        }
        if (g->key == h) {
            int k = 0;
            while (k < n && same_word(buf, s, g->first + k, j + k)) k++;
            if (k == n) return g;
        }
        slot = (slot + 1) & mask;
    }
}

/* str.count of words best .. best + n - 1 joined by single spaces (n >= 2) in the text of the
 * n_words words, from the words: an occurrence's first word ends a text word, its last word
 * starts one, the ones between are whole text words and one space byte separates each, so every
 * occurrence is found at the text word its first word ends. Non-overlapping, leftmost first. */
static i64 count_joined(const u8 *buf, const Scratch *s, i64 n_words, i64 best, int n) {
    const i64 *starts = s->starts, *ends = s->ends;
    i64 f0 = starts[best], f1 = ends[best], l0 = f1 - f0;
    i64 last0 = starts[best + n - 1], l_last = ends[best + n - 1] - last0;
    u8 tail = buf[f1 - 1];
    i64 found = 0, free_from = -1;
    for (i64 a = 0; a < n_words - n + 1; a++) {
        i64 e = ends[a];
        if (buf[e - 1] != tail || e - starts[a] < l0) continue;
        int ok = 1;
        for (int k = 0; k < n - 1; k++) {
            i64 gap = ends[a + k];
            if (starts[a + k + 1] != gap + 1 || buf[gap] != 32) {
                ok = 0;
                break;
            }
            if (k + 1 < n - 1 && !same_word(buf, s, a + k + 1, best + k + 1)) {
                ok = 0;
                break;
            }
        }
        if (!ok) continue;
        i64 z = starts[a + n - 1];
        if (ends[a + n - 1] - z < l_last) continue;
        if (memcmp(buf + e - l0, buf + f0, (size_t)l0)) continue;
        if (memcmp(buf + z, buf + last0, (size_t)l_last)) continue;
        if (e - l0 >= free_from) {
            found++;
            free_from = z + l_last;
        }
    }
    return found;
}

/* Non-overlapping occurrences, leftmost first (str.count), of buf[p0:p0 + m] in buf[lo:hi], by
 * Knuth-Morris-Pratt (linear in both; fail: m entries). */
static i64 count_bytes(const u8 *buf, i64 lo, i64 hi, i64 p0, i64 m, i64 *fail) {
    fail[0] = 0;
    i64 q = 0;
    for (i64 i = 1; i < m; i++) {
        while (q > 0 && buf[p0 + i] != buf[p0 + q]) q = fail[q - 1];
        if (buf[p0 + i] == buf[p0 + q]) q++;
        fail[i] = q;
    }
    i64 hits = 0;
    q = 0;
    for (i64 i = lo; i < hi; i++) {
        u8 c = buf[i];
        while (q > 0 && buf[p0 + q] != c) q = fail[q - 1];
        if (buf[p0 + q] == c) {
            q++;
            if (q == m) {
                hits++;
                q = 0; /* the next occurrence starts after this one */
            }
        }
    }
    return hits;
}

/* The score of one text of at least n words (its words are in s): see the kernels below. */
typedef double (*NgramScore)(const u8 *buf, i64 lo, i64 hi, Scratch *s, i64 n_words,
                             i64 length, int n, u64 hash_mask);

/* RepeatingTopNGramsFilter's score: the top n-gram (most occurrences, then characters, then
 * first) tracked as they are counted (occurrences only grow, so the top of the final counts is
 * the last top), then its occurrences counted as str.count does. */
static double top_score(const u8 *buf, i64 lo, i64 hi, Scratch *s, i64 n_words, i64 length,
                        int n, u64 hash_mask) {
    i64 m = n_words - n + 1, mask = table_mask(2 * m); /* a quarter full: few probes */
    i64 top = 0, top_count = 0, top_chars = -1;
    for (i64 j = 0; j < m; j++) {
        GramSlot *g = gram_slot(buf, s, j, n, mask, hash_mask);
        i64 c = ++g->count, first = g->first, chars = s->cs[j + n] - s->cs[j];
        if (c > top_count
            || (c == top_count && (chars > top_chars || (chars == top_chars && first < top)))) {
            top = first;
            top_count = c;
            top_chars = chars;
        }
    }
    i64 found = n > 1 ? count_joined(buf, s, n_words, top, n)
                      : count_bytes(buf, lo, hi, s->starts[top], s->ends[top] - s->starts[top],
                                    s->fail);
    return (double)(found * (top_chars + (n - 1))) / (double)length;
}

/* RepeatingDuplicateNGramsFilter's score: NeMo's count of the characters of repeated n-grams
 * (each character once, plus the spaces between their words) over the text's. */
static double duplicate_score(const u8 *buf, i64 lo, i64 hi, Scratch *s, i64 n_words,
                              i64 length, int n, u64 hash_mask) {
    i64 m = n_words - n + 1, mask = table_mask(2 * m), dup = 0, overlap = 0;
    for (i64 j = 0; j < m; j++) {
        GramSlot *g = gram_slot(buf, s, j, n, mask, hash_mask);
        if (g->count++) {
            dup += s->cs[j + n] - s->cs[j + overlap] + (overlap > 0 ? n - overlap : n - 1);
            overlap = n;
        }
        overlap = overlap > 0 ? overlap - 1 : 0;
    }
    return (double)dup / (double)length;
}

/* An n-gram kernel's call: (buf, starts, ends, n, hash_mask, out); out[d] = score(text d), 1.0
 * for texts of fewer than n words. */
static PyObject *ngram_kernel(PyObject *args, NgramScore score) {
    Texts t = {0};
    Py_buffer out = {0};
    Scratch s = {0};
    int n;
    unsigned long long mask;
    PyObject *ret = NULL;
    if (!PyArg_ParseTuple(args, TEXTS_ARGS "iKw*", TEXTS_PTRS(t), &n, &mask, &out)) return NULL;
    u64 hash_mask = mask;
    if (texts_check(&t) || out_check(&out, t.n, 8, "out")) goto done;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "n must be >= 1");
        goto done;
    }
    if (scratch_alloc(&s, &t)) {
        PyErr_NoMemory();
        goto done;
    }
    double *o = (double *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < t.n; d++) {
        i64 length;
        next_text(&s);
        i64 n_words = words(t.buf, t.bytes.len, t.lo[d], t.hi[d], &s, &length);
        o[d] = n_words < n ? 1.0 : score(t.buf, t.lo[d], t.hi[d], &s, n_words, length, n,
                                         hash_mask);
    }
    Py_END_ALLOW_THREADS
    ret = Py_NewRef(Py_None);
done:
    scratch_free(&s);
    texts_release(&t);
    if (out.obj) PyBuffer_Release(&out);
    return ret;
}

PyDoc_STRVAR(top_ngram_scores_doc,
"top_ngram_scores(buf, starts, ends, n, hash_mask, out)\n--\n\n"
"out[d] (float64) = RepeatingTopNGramsFilter's score of every text: its top word n-gram (most\n"
"frequent, then most characters, then first) joined by spaces, its occurrences (str.count)\n"
"times its characters over the text's; texts of fewer than n words score 1.0. hash_mask keeps\n"
"only some bits of every hash (tests make collisions certain with it).");

static PyObject *py_top_ngram_scores(PyObject *self, PyObject *args) {
    return ngram_kernel(args, top_score);
}

PyDoc_STRVAR(duplicate_ngram_scores_doc,
"duplicate_ngram_scores(buf, starts, ends, n, hash_mask, out)\n--\n\n"
"out[d] (float64) = RepeatingDuplicateNGramsFilter's score of every text: the characters of the\n"
"n-grams seen before in the text, each counted once, plus the spaces between their words, over\n"
"the text's characters; texts of fewer than n words score 1.0.");

static PyObject *py_duplicate_ngram_scores(PyObject *self, PyObject *args) {
    return ngram_kernel(args, duplicate_score);
}

/* ---- boilerplate --------------------------------------------------------------------------- */

/* Words that every one of NeMo Curator's boilerplate strings holds (lowercase ASCII; the last
 * is "lorem ipsum", which makes a text score 1): a text without one of them as str.lower() sees
 * it (ASCII letters, and the Kelvin sign for "k") holds none of the strings. Each is found by
 * three of its bytes (any case) at an offset. */
static const char *const ANCHORS[] = {"cookie", "privacy", "terms of use", "lorem ipsum"};
static const char ANCHOR_BYTES[][4] = {"coo", "pri", "rms", "lor"};
static const int ANCHOR_AT[] = {0, 0, 2, 0};
#define N_ANCHORS 4
#define LOREM (N_ANCHORS - 1)

static inline u8 lower_ascii(u8 b) { return b >= 'A' && b <= 'Z' ? b + 32 : b; }

static inline int kelvin_at(const u8 *buf, i64 q, i64 hi) {
    return q + 2 < hi && buf[q] == 0xE2 && buf[q + 1] == 0x84 && buf[q + 2] == 0xAA;
}

/* The end of term (lowercase ASCII) if buf[q:hi] starts with it as str.lower() sees it, else
 * -1. */
static i64 match_forward(const u8 *buf, i64 q, i64 hi, const char *term, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (term[i] == 'k' && kelvin_at(buf, q, hi)) { /* KELVIN SIGN: lowercases to "k" */
            q += 3;
            continue;
        }
        if (q >= hi || lower_ascii(buf[q]) != (u8)term[i]) return -1;
        q++;
    }
    return q;
}

/* The start of term if buf[lo:q] ends with it as str.lower() sees it, else -1. */
static i64 match_backward(const u8 *buf, i64 lo, i64 q, const char *term, size_t len) {
    for (size_t i = len; i-- > 0;) {
        if (term[i] == 'k' && q - 3 >= lo && kelvin_at(buf, q - 3, q)) {
            q -= 3;
            continue;
        }
        if (q <= lo || lower_ascii(buf[q - 1]) != (u8)term[i]) return -1;
        q--;
    }
    return q;
}

/* Calls found(q, anchor, ctx) for every anchor word of buf[lo:hi], in order, until it returns
 * nonzero (then returns that). The anchors' three bytes are looked for 16 positions at a
 * time; each hit is checked whole. */
typedef int (*AnchorFound)(i64 q, int anchor, void *ctx);

static int anchor_check(const u8 *buf, i64 lo, i64 hi, i64 q, AnchorFound found, void *ctx) {
    for (int k = 0; k < N_ANCHORS; k++) {
        i64 at = q - ANCHOR_AT[k];
        if (at >= lo && match_forward(buf, at, hi, ANCHORS[k], strlen(ANCHORS[k])) >= 0) {
            int r = found(at, k, ctx);
            if (r) return r;
        }
    }
    return 0;
}

static int each_anchor(const u8 *buf, i64 lo, i64 hi, AnchorFound found, void *ctx) {
    i64 p = lo;
    const v16 fold = splat16(0x20);
    for (; p + 18 <= hi; p += 16) {
        v16 a = load16(buf + p) | fold, b = load16(buf + p + 1) | fold,
            c = load16(buf + p + 2) | fold, m = {0};
        for (int k = 0; k < N_ANCHORS; k++)
            m |= (v16)((a == ANCHOR_BYTES[k][0]) & (b == ANCHOR_BYTES[k][1])
                       & (c == ANCHOR_BYTES[k][2]));
        u64 lanes[2];
        memcpy(lanes, &m, 16);
        for (int half = 0; half < 2; half++) {
            for (u64 bits = lanes[half] & HIGH_BITS; bits; bits &= bits - 1) {
                int r = anchor_check(buf, lo, hi, p + 8 * half + (ctz64(bits) >> 3), found, ctx);
                if (r) return r;
            }
        }
    }
    for (; p < hi; p++) {
        int hit = 0;
        for (int k = 0; k < N_ANCHORS && !hit; k++)
            hit = p + 3 <= hi && lower_ascii(buf[p]) == (u8)ANCHOR_BYTES[k][0]
                  && lower_ascii(buf[p + 1]) == (u8)ANCHOR_BYTES[k][1]
                  && lower_ascii(buf[p + 2]) == (u8)ANCHOR_BYTES[k][2];
        if (hit) {
            int r = anchor_check(buf, lo, hi, p, found, ctx);
            if (r) return r;
        }
    }
    return 0;
}

/* The policy strings (lowercase ASCII) with the anchor each holds and where. */
typedef struct {
    const char *text;
    size_t len, at;
    int anchor;
} Policy;

typedef struct {
    const u8 *buf;
    i64 lo, hi;
    const Policy *policies;
    Py_ssize_t n_policies;
    i64 *bad;  /* starts of the policy strings found */
    i64 n_bad, cap_bad;
} BoilerplateScan;

static int found_policy(i64 q, int anchor, void *ctx) {
    BoilerplateScan *s = ctx;
    if (anchor == LOREM) return 1;
    for (Py_ssize_t i = 0; i < s->n_policies; i++) {
        const Policy *pol = &s->policies[i];
        if (pol->anchor != anchor) continue;
        i64 start = match_backward(s->buf, s->lo, q, pol->text, pol->at);
        if (start < 0 || match_forward(s->buf, q, s->hi, pol->text + pol->at,
                                       pol->len - pol->at) < 0)
            continue;
        if (s->n_bad == s->cap_bad) {
            i64 cap = s->cap_bad ? 2 * s->cap_bad : 16;
            i64 *grown = realloc(s->bad, sizeof(i64) * (size_t)cap);
            if (!grown) return -1;
            s->bad = grown;
            s->cap_bad = cap;
        }
        s->bad[s->n_bad++] = start;
        break; /* one string makes the paragraph boilerplate */
    }
    return 0;
}

static int compare_i64(const void *a, const void *b) {
    i64 x = *(const i64 *)a, y = *(const i64 *)b;
    return (x > y) - (x < y);
}

/* NeMo Curator's score of buf[lo:hi]: the paragraphs (text.split("\n\n")) that hold a policy
 * string over all paragraphs; 1.0 if "lorem ipsum" is anywhere; -2.0 when out of memory. A
 * string holds no newline, so each one found lies in the paragraph where it starts. */
static double boilerplate_score(BoilerplateScan *s) {
    s->n_bad = 0;
    int r = each_anchor(s->buf, s->lo, s->hi, found_policy, s);
    if (r == 1) return 1.0;
    if (r < 0) return -2.0;
    if (!s->n_bad) return 0.0;
    qsort(s->bad, (size_t)s->n_bad, sizeof(i64), compare_i64);
    i64 paragraphs = 1, bad = 0, last = -1, next = 0;
    const u8 *buf = s->buf;
    for (i64 p = s->lo; p <= s->hi; p++) {
        int sep = p + 1 < s->hi && buf[p] == '\n' && buf[p + 1] == '\n';
        if (sep || p == s->hi) { /* the paragraph [.., p) ends: were strings found in it? */
            if (next < s->n_bad && s->bad[next] < p) {
                bad += last != paragraphs;
                last = paragraphs;
                while (next < s->n_bad && s->bad[next] < p) next++;
            }
            if (sep) {
                paragraphs++;
                p++;
            }
        }
    }
    return (double)bad / (double)paragraphs;
}

PyDoc_STRVAR(boilerplate_scores_doc,
"boilerplate_scores(buf, starts, ends, policies, out)\n--\n\n"
"out[d] (float64) = BoilerPlateStringFilter's score of every text: the paragraphs (split on\n"
"\"\\n\\n\") holding one of the policies (lowercase ASCII bytes, each holding one of\n"
"BOILERPLATE_ANCHORS) as str.lower() sees them, over all paragraphs; 1.0 where \"lorem ipsum\"\n"
"is anywhere.");

static PyObject *py_boilerplate_scores(PyObject *self, PyObject *args) {
    Texts t = {0};
    Py_buffer out = {0};
    PyObject *strings, *ret = NULL;
    Policy *policies = NULL;
    BoilerplateScan scan = {0};
    if (!PyArg_ParseTuple(args, TEXTS_ARGS "O!w*", TEXTS_PTRS(t), &PyTuple_Type, &strings,
                          &out))
        return NULL;
    if (texts_check(&t) || out_check(&out, t.n, 8, "out")) goto done;
    Py_ssize_t n_policies = PyTuple_GET_SIZE(strings);
    policies = calloc((size_t)n_policies + 1, sizeof(Policy));
    if (!policies) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_policies; i++) {
        PyObject *item = PyTuple_GET_ITEM(strings, i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "policies must be a tuple of bytes");
            goto done;
        }
        Policy *pol = &policies[i];
        pol->text = PyBytes_AS_STRING(item);
        pol->len = (size_t)PyBytes_GET_SIZE(item);
        pol->anchor = -1;
        for (size_t at = 0; at < pol->len && pol->anchor < 0; at++)
            for (int k = 0; k < LOREM && pol->anchor < 0; k++)
                if (!strncmp(pol->text + at, ANCHORS[k], strlen(ANCHORS[k]))) {
                    pol->anchor = k;
                    pol->at = at;
                }
        if (pol->anchor < 0) {
            PyErr_Format(PyExc_ValueError, "policy %R holds none of %s", item,
                         "BOILERPLATE_ANCHORS");
            goto done;
        }
    }
    scan.buf = t.buf;
    scan.policies = policies;
    scan.n_policies = n_policies;
    double *o = (double *)out.buf;
    int oom = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t d = 0; d < t.n && !oom; d++) {
        scan.lo = t.lo[d];
        scan.hi = t.hi[d];
        o[d] = boilerplate_score(&scan);
        oom = o[d] < -1.0;
    }
    Py_END_ALLOW_THREADS
    if (oom) {
        PyErr_NoMemory();
        goto done;
    }
    ret = Py_NewRef(Py_None);
done:
    free(scan.bad);
    free(policies);
    texts_release(&t);
    if (out.obj) PyBuffer_Release(&out);
    return ret;
}

/* ---- JSON Lines ---------------------------------------------------------------------------- */

/* A fast reader for the JSON Lines most corpora hold: objects of strings, numbers, booleans and
 * nulls. It gives exactly the columns Arrow's JSON reader gives (names in order of first
 * appearance, int64 / double / string / bool / null, a missing key a null) and gives up (the
 * caller then asks Arrow) on anything where that is not certain: nested values, a type change
 * other than int -> double, a duplicate key, a string Arrow might read as a timestamp, an
 * integer of 19+ digits, NaN / Infinity, invalid UTF-8, a raw control character, a bad escape
 * or surrogate, a byte-order mark, more than MAX_COLUMNS columns, a syntax error. */

#define MAX_COLUMNS 256

enum { COL_NULL, COL_BOOL, COL_INT, COL_DOUBLE, COL_STRING };

typedef struct { /* a growable byte buffer */
    u8 *data;
    size_t len, cap;
} Bytes;

static int bytes_reserve(Bytes *b, size_t more) {
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more) cap *= 2;
    u8 *grown = realloc(b->data, cap);
    if (!grown) return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

static int bytes_put(Bytes *b, const void *src, size_t n) {
    if (bytes_reserve(b, n)) return -1;
    memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

typedef struct {
    Bytes name;   /* the key, unescaped */
    int kind;     /* COL_* */
    Bytes values; /* strings: their bytes; numbers: their text (spans below); bools: a byte each */
    Bytes spans;  /* strings: int32 end offsets; numbers: int64 (start, end) into the block */
    Bytes valid;  /* a byte per row */
    i64 rows;     /* rows filled so far (the others are null) */
    i64 seen_in;  /* the last row that set it (duplicate keys) */
} JCol;

typedef struct {
    const u8 *p, *end, *block;
    JCol *cols;
    int n_cols;
    Bytes key; /* scratch: the key being read */
    i64 row;
} JParse;

#define JFAIL (-1) /* give up: not certain to match Arrow (or a syntax error) */
#define JNOMEM (-2)

static inline void skip_ws(JParse *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
        j->p++;
}

/* The code point of 4 hex digits at p, or -1. */
static int hex4(const u8 *p) {
    int v = 0;
    for (int k = 0; k < 4; k++) {
        u8 c = p[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

static int put_utf8(Bytes *out, u32 cp) {
    u8 b[4];
    int n;
    if (cp < 0x80) { b[0] = (u8)cp; n = 1; }
    else if (cp < 0x800) { b[0] = 0xC0 | (cp >> 6); b[1] = 0x80 | (cp & 0x3F); n = 2; }
    else if (cp < 0x10000) {
        b[0] = 0xE0 | (cp >> 12); b[1] = 0x80 | ((cp >> 6) & 0x3F); b[2] = 0x80 | (cp & 0x3F);
        n = 3;
    } else {
        b[0] = 0xF0 | (cp >> 18); b[1] = 0x80 | ((cp >> 12) & 0x3F);
        b[2] = 0x80 | ((cp >> 6) & 0x3F); b[3] = 0x80 | (cp & 0x3F);
        n = 4;
    }
    return bytes_put(out, b, (size_t)n) ? JNOMEM : 0;
}

/* Whether buf[0:n] is valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF). */
static int valid_utf8(const u8 *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (i + 16 <= n && !top_bits16(load16(s + i))) { /* 16 ASCII bytes */
            i += 16;
            continue;
        }
        u8 c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t k;
        u32 cp;
        if (c >= 0xC2 && c <= 0xDF) { k = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { k = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 3; cp = c & 0x07; }
        else return 0;
        if (i + k >= n) return 0;
        for (size_t m = 1; m <= k; m++) {
            if ((s[i + m] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + m] & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF)))
            || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += k + 1;
    }
    return 1;
}

/* The string at j->p (after its opening quote), unescaped, appended to out; j->p past its
 * closing quote. */
static int read_string(JParse *j, Bytes *out) {
    const u8 *p = j->p, *end = j->end;
    size_t start = out->len;
    int high = 0;
    for (;;) {
        const u8 *run = p; /* bytes that need nothing are copied as they are */
        while (p + 16 <= end) {
            v16 x = load16(p);
            u32 stop = top_bits16(json_special16(x));
            high |= top_bits16(x) != 0;
            if (stop) {
                p += ctz64(stop);
                break;
            }
            p += 16;
        }
        while (p < end && *p >= 0x20 && *p != '"' && *p != '\\') high |= *p++ >= 0x80;
        if (bytes_put(out, run, (size_t)(p - run))) return JNOMEM;
        if (p >= end || *p < 0x20) return JFAIL; /* no closing quote, or a raw control byte */
        if (*p == '"') break;
        if (p + 1 >= end) return JFAIL;
        u8 e = p[1];
        if (JSON_UNESCAPE[e]) { /* \" \\ \/ \b \f \n \r \t */
            if (bytes_put(out, &JSON_UNESCAPE[e], 1)) return JNOMEM;
            p += 2;
            continue;
        }
        if (e != 'u' || p + 6 > end) return JFAIL;
        int cp = hex4(p + 2);
        if (cp < 0) return JFAIL;
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) { /* a surrogate pair */
            if (p + 6 > end || p[0] != '\\' || p[1] != 'u') return JFAIL;
            int lo = hex4(p + 2);
            if (lo < 0xDC00 || lo > 0xDFFF) return JFAIL;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return JFAIL;
        }
        int r = put_utf8(out, (u32)cp);
        if (r) return r;
    }
    j->p = p + 1;
    if (high && !valid_utf8(out->data + start, out->len - start)) return JFAIL;
    return 0;
}

/* Whether s (n bytes) may be read as a timestamp by Arrow: "YYYY-MM-DD", then only the bytes
 * of a time and a zone ("T10:00:00.5+01:00", " 10:00Z"), 40 bytes at most. */
static int timestamp_like(const u8 *s, size_t n) {
    if (n < 10 || n > 40) return 0;
    for (int k = 0; k < 10; k++)
        if (k == 4 || k == 7 ? s[k] != '-' : (s[k] < '0' || s[k] > '9')) return 0;
    for (size_t k = 10; k < n; k++)
        if (!((s[k] >= '0' && s[k] <= '9') || strchr(":.+-TZ ", s[k]))) return 0;
    return 1;
}

/* The number at j->p (JSON's grammar); j->p past it. *is_int: no fraction or exponent. Gives up
 * on an integer of 19+ digits (Arrow reads it as int64 or double by its value). */
static int scan_number(JParse *j, int *is_int) {
    const u8 *p = j->p, *end = j->end;
    if (p < end && *p == '-') p++;
    const u8 *digits = p;
    if (p >= end || *p < '0' || *p > '9') return JFAIL;
    if (*p == '0') p++;
    else while (p < end && *p >= '0' && *p <= '9') p++;
    i64 int_digits = p - digits;
    *is_int = 1;
    if (p < end && *p == '.') {
        *is_int = 0;
        p++;
        if (p >= end || *p < '0' || *p > '9') return JFAIL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        *is_int = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return JFAIL;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (*is_int && int_digits > 18) return JFAIL;
    j->p = p;
    return 0;
}

static int fill_nulls(JCol *c, i64 upto) { /* rows before upto that did not set c: null */
    while (c->rows < upto) {
        u8 zero = 0;
        if (bytes_put(&c->valid, &zero, 1)) return JNOMEM;
        if (c->kind == COL_STRING) {
            int32_t off = (int32_t)c->values.len;
            if (bytes_put(&c->spans, &off, 4)) return JNOMEM;
        } else if (c->kind == COL_INT || c->kind == COL_DOUBLE) {
            i64 span[2] = {0, 0};
            if (bytes_put(&c->spans, span, 16)) return JNOMEM;
        } else if (c->kind == COL_BOOL) {
            if (bytes_put(&c->values, &zero, 1)) return JNOMEM;
        }
        c->rows++;
    }
    return 0;
}

/* Column c takes kind (null rows of it so far, if any, get that kind's empty values). */
static int set_kind(JCol *c, int kind, size_t block_size) {
    if (c->kind == kind || kind == COL_NULL) return 0;
    if (c->kind == COL_INT && kind == COL_DOUBLE) { c->kind = COL_DOUBLE; return 0; }
    if (c->kind == COL_DOUBLE && kind == COL_INT) return 0;
    if (c->kind != COL_NULL) return JFAIL; /* Arrow fails or promotes otherwise */
    i64 rows = c->rows;
    c->rows = 0;
    c->valid.len = 0;
    c->kind = kind;
    if (kind == COL_STRING) { /* offsets start at 0; the strings fit in the block's bytes */
        int32_t zero = 0;
        if (bytes_put(&c->spans, &zero, 4) || bytes_reserve(&c->values, block_size))
            return JNOMEM;
    }
    return fill_nulls(c, rows);
}

static JCol *column(JParse *j, int hint) {
    const Bytes *k = &j->key;
    if (hint < j->n_cols && j->cols[hint].name.len == k->len
        && !memcmp(j->cols[hint].name.data, k->data, k->len))
        return &j->cols[hint];
    for (int i = 0; i < j->n_cols; i++)
        if (j->cols[i].name.len == k->len && !memcmp(j->cols[i].name.data, k->data, k->len))
            return &j->cols[i];
    if (j->n_cols == MAX_COLUMNS) return NULL;
    JCol *c = &j->cols[j->n_cols++];
    memset(c, 0, sizeof *c);
    c->seen_in = -1;
    if (bytes_put(&c->name, k->data, k->len)) return NULL;
    return c;
}

/* One value of column c in row j->row. */
static int read_value(JParse *j, JCol *c) {
    int r = fill_nulls(c, j->row);
    if (r) return r;
    u8 one = 1, zero = 0;
    const u8 *p = j->p;
    if (p >= j->end) return JFAIL;
    if (*p == '"') {
        if ((r = set_kind(c, COL_STRING, (size_t)(j->end - j->block)))) return r;
        j->p++;
        size_t start = c->values.len;
        if ((r = read_string(j, &c->values))) return r;
        if (timestamp_like(c->values.data + start, c->values.len - start)) return JFAIL;
        if (c->values.len > 0x7FFFFFFF) return JFAIL;
        int32_t off = (int32_t)c->values.len;
        if (bytes_put(&c->spans, &off, 4) || bytes_put(&c->valid, &one, 1)) return JNOMEM;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
        int is_int;
        const u8 *start = p;
        if (scan_number(j, &is_int)) return JFAIL;
        if ((r = set_kind(c, is_int ? COL_INT : COL_DOUBLE, 0))) return r;
        i64 span[2] = {start - j->block, j->p - j->block};
        if (bytes_put(&c->spans, span, 16) || bytes_put(&c->valid, &one, 1)) return JNOMEM;
    } else if (j->end - p >= 4 && !memcmp(p, "true", 4)) {
        if ((r = set_kind(c, COL_BOOL, 0))) return r;
        j->p += 4;
        if (bytes_put(&c->values, &one, 1) || bytes_put(&c->valid, &one, 1)) return JNOMEM;
    } else if (j->end - p >= 5 && !memcmp(p, "false", 5)) {
        if ((r = set_kind(c, COL_BOOL, 0))) return r;
        j->p += 5;
        if (bytes_put(&c->values, &zero, 1) || bytes_put(&c->valid, &one, 1)) return JNOMEM;
    } else if (j->end - p >= 4 && !memcmp(p, "null", 4)) {
        j->p += 4;
        return 0; /* the row stays unset: filled as null */
    } else {
        return JFAIL; /* an object, an array, NaN, Infinity, or not JSON */
    }
    c->rows++;
    return 0;
}

static int read_rows(JParse *j) {
    if (j->end - j->p >= 3 && j->p[0] == 0xEF && j->p[1] == 0xBB && j->p[2] == 0xBF)
        return JFAIL; /* a byte-order mark */
    for (;;) {
        skip_ws(j);
        if (j->p >= j->end) return 0;
        if (*j->p != '{') return JFAIL;
        j->p++;
        skip_ws(j);
        int field = 0;
        if (j->p < j->end && *j->p == '}') {
            j->p++;
        } else {
            for (;; field++) {
                if (j->p >= j->end || *j->p != '"') return JFAIL;
                j->p++;
                j->key.len = 0;
                int r = read_string(j, &j->key);
                if (r) return r;
                JCol *c = column(j, field);
                if (!c) return j->n_cols == MAX_COLUMNS ? JFAIL : JNOMEM;
                if (c->seen_in == j->row) return JFAIL; /* a duplicate key */
                c->seen_in = j->row;
                skip_ws(j);
                if (j->p >= j->end || *j->p != ':') return JFAIL;
                j->p++;
                skip_ws(j);
                if ((r = read_value(j, c))) return r;
                skip_ws(j);
                if (j->p < j->end && *j->p == ',') {
                    j->p++;
                    skip_ws(j);
                    continue;
                }
                if (j->p < j->end && *j->p == '}') {
                    j->p++;
                    break;
                }
                return JFAIL;
            }
        }
        j->row++;
    }
}

/* The number texts of a numeric column, parsed: int64 or double values. */
static int parse_numbers(const u8 *block, JCol *c, Bytes *out) {
    i64 n = c->rows;
    const i64 *span = (const i64 *)c->spans.data;
    if (bytes_reserve(out, (size_t)n * 8)) return JNOMEM;
    char tmp[512];
    for (i64 r = 0; r < n; r++) {
        i64 a = span[2 * r], b = span[2 * r + 1];
        if (!c->valid.data[r]) {
            memset(out->data + out->len, 0, 8);
        } else if (c->kind == COL_INT) {
            i64 v = 0;
            int neg = block[a] == '-';
            for (i64 k = a + neg; k < b; k++) v = v * 10 + (block[k] - '0');
            v = neg ? -v : v;
            memcpy(out->data + out->len, &v, 8);
        } else {
            if (b - a >= (i64)sizeof tmp) return JFAIL;
            memcpy(tmp, block + a, (size_t)(b - a));
            tmp[b - a] = 0;
            double v = strtod(tmp, NULL);
            if (v > DBL_MAX || v < -DBL_MAX) return JFAIL; /* Arrow refuses what overflows */
            memcpy(out->data + out->len, &v, 8);
        }
        out->len += 8;
    }
    return 0;
}

static void free_columns(JCol *cols, int n) {
    for (int i = 0; i < n; i++) {
        free(cols[i].name.data);
        free(cols[i].values.data);
        free(cols[i].spans.data);
        free(cols[i].valid.data);
    }
}

static void free_owned(PyObject *capsule) {
    free(PyCapsule_GetPointer(capsule, "curator_text.owned"));
}

/* (address, length, owner) of b's bytes, handed over (b no longer owns them): Arrow wraps
 * them without a copy (pyarrow.foreign_buffer), the owner frees them when collected. */
static PyObject *hand_over(Bytes *b) {
    void *data = b->data ? b->data : malloc(1);
    if (!data) return PyErr_NoMemory();
    PyObject *owner = PyCapsule_New(data, "curator_text.owned", free_owned);
    if (!owner) {
        free(data);
        b->data = NULL;
        return NULL;
    }
    PyObject *out = Py_BuildValue("(KnN)", (unsigned long long)(uintptr_t)data,
                                  (Py_ssize_t)b->len, owner);
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

PyDoc_STRVAR(read_jsonl_doc,
"read_jsonl(block) -> (rows, columns) or None\n--\n\n"
"The JSON Lines block (bytes-like) as Arrow's JSON reader reads it, or None where that is not\n"
"certain (then ask Arrow). columns: (name, kind, values, offsets, valid) in order of first\n"
"appearance; kind: 'null', 'bool' (values: a byte each), 'int64' / 'double' (8 bytes each),\n"
"'string' (values: the UTF-8 bytes, offsets: int32, one more than rows); valid: a byte per\n"
"row (0: null). Each buffer is (address, length, owner): wrap it with pyarrow.foreign_buffer\n"
"keeping the owner.");

static PyObject *py_read_jsonl(PyObject *self, PyObject *args) {
    Py_buffer block = {0};
    if (!PyArg_ParseTuple(args, "y*", &block)) return NULL;
    JCol *cols = calloc(MAX_COLUMNS, sizeof(JCol));
    if (!cols) {
        PyBuffer_Release(&block);
        return PyErr_NoMemory();
    }
    JParse j = {.p = block.buf, .end = (const u8 *)block.buf + block.len, .block = block.buf,
                .cols = cols};
    int r;
    Bytes numbers[MAX_COLUMNS];
    memset(numbers, 0, sizeof numbers);
    Py_BEGIN_ALLOW_THREADS
    r = read_rows(&j);
    for (int i = 0; !r && i < j.n_cols; i++) {
        r = fill_nulls(&cols[i], j.row);
        if (!r && (cols[i].kind == COL_INT || cols[i].kind == COL_DOUBLE))
            r = parse_numbers(j.block, &cols[i], &numbers[i]);
    }
    Py_END_ALLOW_THREADS
    PyObject *ret = NULL, *list = NULL;
    if (r == JNOMEM) {
        PyErr_NoMemory();
        goto done;
    }
    if (r) {
        ret = Py_NewRef(Py_None);
        goto done;
    }
    static const char *const kinds[] = {"null", "bool", "int64", "double", "string"};
    list = PyList_New(j.n_cols);
    if (!list) goto done;
    for (int i = 0; i < j.n_cols; i++) {
        JCol *c = &cols[i];
        int numeric = c->kind == COL_INT || c->kind == COL_DOUBLE;
        PyObject *item = Py_BuildValue(
            "(s#sNNN)", (const char *)(c->name.data ? c->name.data : (u8 *)""),
            (Py_ssize_t)c->name.len, kinds[c->kind], hand_over(numeric ? &numbers[i] : &c->values),
            c->kind == COL_STRING ? hand_over(&c->spans) : Py_NewRef(Py_None),
            hand_over(&c->valid));
        if (!item) goto done;
        PyList_SET_ITEM(list, i, item);
    }
    ret = Py_BuildValue("(nN)", (Py_ssize_t)j.row, list);
    list = NULL;
done:
    Py_XDECREF(list);
    for (int i = 0; i < MAX_COLUMNS; i++) free(numbers[i].data);
    free_columns(cols, j.n_cols);
    free(cols);
    free(j.key.data);
    PyBuffer_Release(&block);
    return ret;
}

/* ---- module --------------------------------------------------------------------------------- */

static void init_tables(void) {
    for (int b = 0; b < 256; b++) POPCOUNT8[b] = (u8)__builtin_popcount((unsigned)b);
    for (int c = 9; c < 14; c++) SPACE_CLASS[c] = 1;
    for (int c = 28; c < 33; c++) SPACE_CLASS[c] = 1;
    SPACE_CLASS[0xC2] = SPACE_CLASS[0xE1] = SPACE_CLASS[0xE2] = SPACE_CLASS[0xE3] = 2;
    for (int c = 0x80; c < 0x8B; c++) SPACE_E2_80[c] = 1;
    SPACE_E2_80[0xA8] = SPACE_E2_80[0xA9] = SPACE_E2_80[0xAF] = 1;

    const char *single =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789$-_@.&+/:=?#~!*(),";
    for (const char *c = single; *c; c++) URL_CLASS[(u8)*c] = 1;
    for (const char *c = "0123456789abcdefABCDEF"; *c; c++) URL_CLASS[(u8)*c] |= 2;

    for (int c = 0; c < 256; c++) JSON_WIDTH[c] = c < 32 ? 6 : 1;
    const char *esc[][2] = {{"\"", "\""}, {"\\", "\\"}, {"\n", "n"}, {"\r", "r"},
                            {"\t", "t"},  {"\b", "b"},  {"\f", "f"}};
    for (size_t k = 0; k < sizeof esc / sizeof esc[0]; k++) {
        JSON_WIDTH[(u8)esc[k][0][0]] = 2;
        JSON_LETTER[(u8)esc[k][0][0]] = (u8)esc[k][1][0];
        JSON_UNESCAPE[(u8)esc[k][1][0]] = (u8)esc[k][0][0];
    }
    JSON_UNESCAPE['/'] = '/';
}

static PyMethodDef methods[] = {
    {"word_counts", py_word_counts, METH_VARARGS, word_counts_doc},
    {"char_counts", py_char_counts, METH_VARARGS, char_counts_doc},
    {"range_counts", py_range_counts, METH_VARARGS, range_counts_doc},
    {"url_chars", py_url_chars, METH_VARARGS, url_chars_doc},
    {"jsonl_rows", py_jsonl_rows, METH_VARARGS, jsonl_rows_doc},
    {"read_jsonl", py_read_jsonl, METH_VARARGS, read_jsonl_doc},
    {"top_ngram_scores", py_top_ngram_scores, METH_VARARGS, top_ngram_scores_doc},
    {"duplicate_ngram_scores", py_duplicate_ngram_scores, METH_VARARGS,
     duplicate_ngram_scores_doc},
    {"boilerplate_scores", py_boilerplate_scores, METH_VARARGS, boilerplate_scores_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "curator_text._native",
    "The compiled kernels of the default text path (built at install time).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *anchors = PyTuple_New(N_ANCHORS);
    if (!anchors) goto fail;
    for (int k = 0; k < N_ANCHORS; k++) {
        PyObject *word = PyUnicode_FromString(ANCHORS[k]);
        if (!word) {
            Py_DECREF(anchors);
            goto fail;
        }
        PyTuple_SET_ITEM(anchors, k, word);
    }
    if (PyModule_AddObject(m, "BOILERPLATE_ANCHORS", anchors) == 0) return m;
    Py_DECREF(anchors);
fail:
    Py_DECREF(m);
    return NULL;
}
