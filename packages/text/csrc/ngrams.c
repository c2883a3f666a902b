/* Word n-grams: RepeatingTopNGramsFilter's and RepeatingDuplicateNGramsFilter's scores. */
#include "native.h"

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


PyMethodDef NGRAM_METHODS[] = {
    {"top_ngram_scores", py_top_ngram_scores, METH_VARARGS, top_ngram_scores_doc},
    {"duplicate_ngram_scores", py_duplicate_ngram_scores, METH_VARARGS, duplicate_ngram_scores_doc},
    {NULL, NULL, 0, NULL},
};
