/* JSON Lines: writing rows (strings escaped as json.dumps does) and reading blocks. */
#include "native.h"

/* ---- JSON string literals ------------------------------------------------------------------- */

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

PyDoc_STRVAR(int64_text_doc,
"int64_text(values, out, offsets) -> n_bytes\n--\n\n"
"The decimal text of every int64 of values (as str(int) writes it), one after another into\n"
"the writable buffer out (at least 20 bytes per value), and where each starts into offsets\n"
"(int64, one more than the values; the last: n_bytes).");

static PyObject *py_int64_text(PyObject *self, PyObject *args) {
    Py_buffer values = {0}, out = {0}, offsets = {0};
    PyObject *ret = NULL;
    if (!PyArg_ParseTuple(args, "y*w*w*", &values, &out, &offsets)) return NULL;
    Py_ssize_t n = values.len / 8;
    if (values.len % 8 || offsets.len != (n + 1) * 8 || out.len < 20 * n) {
        PyErr_SetString(PyExc_ValueError, "values: int64; out: 20 bytes a value; offsets: "
                                          "int64, one more than the values");
        goto done;
    }
    const int64_t *v = (const int64_t *)values.buf;
    i64 *off = (i64 *)offsets.buf, pos = 0;
    u8 *o = (u8 *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        u8 digits[20];
        int k = 0;
        u64 u = v[i] < 0 ? (u64)0 - (u64)v[i] : (u64)v[i];
        off[i] = pos;
        do {
            digits[k++] = (u8)('0' + u % 10);
            u /= 10;
        } while (u);
        if (v[i] < 0) o[pos++] = '-';
        while (k) o[pos++] = digits[--k];
    }
    off[n] = pos;
    Py_END_ALLOW_THREADS
    ret = PyLong_FromSsize_t((Py_ssize_t)pos);
done:
    PyBuffer_Release(&values);
    PyBuffer_Release(&out);
    PyBuffer_Release(&offsets);
    return ret;
}

/* ---- JSON Lines ---------------------------------------------------------------------------- */

/* A fast reader for the JSON Lines most corpora hold: objects of strings, numbers, booleans and
 * nulls. It gives exactly the columns Arrow's JSON reader gives (names in order of first
 * appearance, int64 / double / string / bool / null, a missing key a null) and gives up (the
 * caller then asks Arrow) on anything where that is not certain: nested values, a type change
 * other than int -> double, a duplicate key, an integer of 19+ digits, NaN / Infinity, invalid UTF-8, a raw control character, a bad escape
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
    int maybe_timestamp; /* a string Arrow may read as a timestamp: the caller asks Arrow */
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
        c->maybe_timestamp |= timestamp_like(c->values.data + start, c->values.len - start);
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
"certain (then ask Arrow). columns: (name, kind, values, offsets, valid, maybe_timestamp) in\n"
"order of first appearance (maybe_timestamp: a string column Arrow may read as timestamps);\n"
"kind: 'null', 'bool' (values: a byte each), 'int64' / 'double' (8 bytes each),\n"
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
            "(s#sNNNN)", (const char *)(c->name.data ? c->name.data : (u8 *)""),
            (Py_ssize_t)c->name.len, kinds[c->kind], hand_over(numeric ? &numbers[i] : &c->values),
            c->kind == COL_STRING ? hand_over(&c->spans) : Py_NewRef(Py_None),
            hand_over(&c->valid), PyBool_FromLong(c->maybe_timestamp));
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


PyMethodDef JSONL_METHODS[] = {
    {"jsonl_rows", py_jsonl_rows, METH_VARARGS, jsonl_rows_doc},
    {"int64_text", py_int64_text, METH_VARARGS, int64_text_doc},
    {"read_jsonl", py_read_jsonl, METH_VARARGS, read_jsonl_doc},
    {NULL, NULL, 0, NULL},
};
