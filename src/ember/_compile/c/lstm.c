/* An LSTM step's pointwise work (nn_rnn's LSTM op, eagerly: lowerings.eager("lstm_cell"),
   "lstm_cell_grad"). The op's time loop does each step's matmul with NumPy; the gates'
   nonlinearities and products were ~15 NumPy passes over small rows a step (about half of
   W9's LSTM step), here one pass each way. The gates are in the op's order (i, f, o, g),
   the sigmoid gates' pre-activations halved: sigmoid(x) = 0.5 * tanh(x / 2) + 0.5.

   Sizes: H, the hidden size (rows of the gates are 4 H, of the state H). */
#include "prelude.h"
#include "lowering.h"

/* tanh for T (both functions named, so kernels.build declares their vector variants) */
#define TANH(x) (sizeof(T) == sizeof(float) ? (T)tanhf((float)(x)) : (T)tanh((double)(x)))

/* Every argument a C-contiguous array of T with n[j] elements, those it writes (bits of
   `written`) writeable: they are the op's buffers, written in place, so nothing is
   converted. None is taken for the argument `optional` (then NULL). */
static int lstm_args(PyObject *const *args, int nargs, const npy_intp *n, T **p,
                     int optional, unsigned written) {
  for (int j = 0; j < nargs; j++) {
    if (args[j] == Py_None && j == optional) { p[j] = NULL; continue; }
    if (!PyArray_Check(args[j])) return 0;
    PyArrayObject *a = (PyArrayObject *)args[j];
    if (!PyArray_IS_C_CONTIGUOUS(a) || PyArray_TYPE(a) != NPY_T || PyArray_SIZE(a) != n[j]
        || (((written >> j) & 1) && !PyArray_ISWRITEABLE(a))) return 0;
    p[j] = PyArray_DATA(a);
  }
  return 1;
}

static PyObject *lstm_cell(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (acts (b, 4H): the step's input projection in, tanh(it + hw) out; hw (b, 4H), the
     step's h W_hh^T; c (b, H), the previous cell; cells (b, H), tanhc (b, H), h (b, H):
     out) */
  if (nargs != 6 || !PyArray_Check(args[0])) goto bad;
  const npy_intp b = PyArray_SIZE((PyArrayObject *)args[0]) / (4 * H);
  const npy_intp n[6] = {4 * H * b, 4 * H * b, H * b, H * b, H * b, H * b};
  T *p[6];
  if (!lstm_args(args, 6, n, p, -1, 1u | 8u | 16u | 32u)) goto bad;
  T *acts = p[0], *cells = p[3], *tanhc = p[4], *h = p[5];
  const T *hw = p[1], *c = p[2];
  Py_BEGIN_ALLOW_THREADS
  for (npy_intp r = 0; r < b; r++) {
    T *a = acts + r * 4 * H;
    const T *x = hw + r * 4 * H;
    _Pragma("omp simd")
    for (npy_intp j = 0; j < 4 * H; j++) a[j] = TANH(a[j] + x[j]);
    const T *cr = c + r * H;
    T *cn = cells + r * H, *tc = tanhc + r * H, *hr = h + r * H;
    _Pragma("omp simd")
    for (npy_intp j = 0; j < H; j++) {
      const T si = a[j] * (T)0.5 + (T)0.5, sf = a[H + j] * (T)0.5 + (T)0.5;
      const T so = a[2 * H + j] * (T)0.5 + (T)0.5;
      const T v = sf * cr[j] + si * a[3 * H + j];
      const T t = TANH(v);
      cn[j] = v;
      tc[j] = t;
      hr[j] = so * t;
    }
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember lstm_cell kernel: arguments");
  return NULL;
}

/* One row of lstm_cell_grad; `go` is read as go[j * go_step]: go_step is 1 (a row of the
   output's gradient), 0 (one value broadcast: the gradient of a sum) or -1 (none). Called
   with constants, so each case is a loop of its own, vectorised. */
static inline void lstm_grad_row(const T *restrict dhr, const T *restrict go, const int go_step,
                                 const T *restrict a, const T *restrict tc,
                                 const T *restrict cp, T *restrict dcr, T *restrict dr) {
  _Pragma("omp simd")
  for (npy_intp j = 0; j < H; j++) {
    const T dht = go_step < 0 ? dhr[j] : dhr[j] + go[j * go_step];
    const T ai = a[j], af = a[H + j], ao = a[2 * H + j], ag = a[3 * H + j];
    const T si = ai * (T)0.5 + (T)0.5, sf = af * (T)0.5 + (T)0.5;
    const T so = ao * (T)0.5 + (T)0.5;
    const T t = tc[j];
    const T dct = ((T)1 - t * t) * dht * so + dcr[j];
    dr[j] = dct * ag * ((T)1 - ai * ai);
    dr[H + j] = dct * cp[j] * ((T)1 - af * af);
    dr[2 * H + j] = dht * t * ((T)1 - ao * ao);
    dr[3 * H + j] = dct * si * ((T)1 - ag * ag);
    dcr[j] = dct * sf;
  }
}

static PyObject *lstm_cell_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* (dh (b, H), the gradient of the step's h; go (b, H) or None, the output's, added to it
     (any row stride; its rows contiguous or one value broadcast); acts (b, 4H), tanhc (b,
     H), cprev (b, H): the step's gates, tanh of its cell and its previous cell; dc (b, H):
     the gradient of its cell in, of the previous cell out; d (b, 4H) out: the gradient of
     the gates' tanh arguments (each gate's output gradient times 1 - tanh^2)) */
  if (nargs != 7 || !PyArray_Check(args[0])) goto bad;
  const npy_intp b = PyArray_SIZE((PyArrayObject *)args[0]) / H;
  const npy_intp n[7] = {H * b, H * b, 4 * H * b, H * b, H * b, H * b, 4 * H * b};
  PyObject *checked[7];
  for (int j = 0; j < 7; j++) checked[j] = args[j];
  checked[1] = Py_None;  /* go is checked here */
  const char *go = NULL;
  npy_intp go_row = 0;
  int go_step = -1;
  if (args[1] != Py_None) {
    if (!PyArray_Check(args[1])) goto bad;
    PyArrayObject *g = (PyArrayObject *)args[1];
    if (PyArray_TYPE(g) != NPY_T || PyArray_NDIM(g) != 2 || PyArray_DIM(g, 0) != b
        || PyArray_DIM(g, 1) != H) goto bad;
    const npy_intp cs = PyArray_STRIDE(g, 1);
    if (cs == (npy_intp)sizeof(T)) go_step = 1;
    else if (cs == 0) go_step = 0;
    else goto bad;
    go = PyArray_DATA(g);
    go_row = PyArray_STRIDE(g, 0);
  }
  T *p[7];
  if (!lstm_args(checked, 7, n, p, 1, 32u | 64u)) goto bad;
  const T *dh = p[0], *acts = p[2], *tanhc = p[3], *cprev = p[4];
  T *dc = p[5], *d = p[6];
  Py_BEGIN_ALLOW_THREADS
  for (npy_intp r = 0; r < b; r++) {
    const T *gor = go ? (const T *)(go + r * go_row) : NULL;
    const T *a = acts + r * 4 * H, *dhr = dh + r * H, *tc = tanhc + r * H;
    const T *cp = cprev + r * H;
    T *dcr = dc + r * H, *dr = d + r * 4 * H;
    if (go_step == 1) lstm_grad_row(dhr, gor, 1, a, tc, cp, dcr, dr);
    else if (go_step == 0) lstm_grad_row(dhr, gor, 0, a, tc, cp, dcr, dr);
    else lstm_grad_row(dhr, NULL, -1, a, tc, cp, dcr, dr);
  }
  Py_END_ALLOW_THREADS
  Py_RETURN_NONE;
bad:
  PyErr_SetString(PyExc_TypeError, "ember lstm_cell_grad kernel: arguments");
  return NULL;
}
