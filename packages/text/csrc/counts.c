/* Per-text counts: words, characters, bytes of a class, NeMo Curator's URL characters. */
#include "native.h"

/* ---- word counts, characters, byte classes --------------------------------------------------- */

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


PyMethodDef COUNT_METHODS[] = {
    {"word_counts", py_word_counts, METH_VARARGS, word_counts_doc},
    {"char_counts", py_char_counts, METH_VARARGS, char_counts_doc},
    {"range_counts", py_range_counts, METH_VARARGS, range_counts_doc},
    {"url_chars", py_url_chars, METH_VARARGS, url_chars_doc},
    {NULL, NULL, 0, NULL},
};
