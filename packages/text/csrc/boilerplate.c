/* BoilerPlateStringFilter's scores. */
#include "native.h"

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


PyMethodDef BOILERPLATE_METHODS[] = {
    {"boilerplate_scores", py_boilerplate_scores, METH_VARARGS, boilerplate_scores_doc},
    {NULL, NULL, 0, NULL},
};

PyObject *boilerplate_anchors(void) {
    PyObject *anchors = PyTuple_New(N_ANCHORS);
    if (!anchors) return NULL;
    for (int k = 0; k < N_ANCHORS; k++) {
        PyObject *word = PyUnicode_FromString(ANCHORS[k]);
        if (!word) {
            Py_DECREF(anchors);
            return NULL;
        }
        PyTuple_SET_ITEM(anchors, k, word);
    }
    return anchors;
}
