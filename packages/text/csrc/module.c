/* curator_text._native (this module and counts.c, ngrams.c, boilerplate.c, jsonl.c): the compiled
 * kernels of the default text path, built when the package is
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
#include "native.h"

u8 SPACE_CLASS[256];
u8 SPACE_E2_80[256];
u8 POPCOUNT8[256];
u8 JSON_WIDTH[256];
u8 JSON_LETTER[256];
u8 JSON_UNESCAPE[256];
u8 URL_CLASS[256];
const char HEX[] = "0123456789abcdef";

/* The byte tables of native.h. */
void init_tables(void) {
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

/* The module's functions: every file's table, one after another. */
static PyMethodDef methods[32];

static int collect_methods(void) {
    PyMethodDef *tables[] = {COUNT_METHODS, NGRAM_METHODS, BOILERPLATE_METHODS, JSONL_METHODS};
    size_t n = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
        for (PyMethodDef *d = tables[t]; d->ml_name; d++) {
            if (n + 1 >= sizeof methods / sizeof methods[0]) return -1;
            methods[n++] = *d;
        }
    methods[n] = (PyMethodDef){NULL, NULL, 0, NULL};
    return 0;
}

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "curator_text._native",
    "The compiled kernels of the default text path (built at install time).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    if (collect_methods()) {
        PyErr_SetString(PyExc_SystemError, "curator_text._native: too many functions");
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    PyObject *anchors = boilerplate_anchors();
    if (anchors && PyModule_AddObject(m, "BOILERPLATE_ANCHORS", anchors) == 0) return m;
    Py_XDECREF(anchors);
    Py_DECREF(m);
    return NULL;
}
