/* im2col and col2im of 2-d convolutions (lowerings.im2col, lowerings.col2im; eager calls
   only): the copies around a convolution's GEMMs. NumPy builds a padded copy, then copies
   the windows out of a strided view (im2col), or adds each kernel tap's columns into a
   padded image through strided views and crops it (col2im): inner loops of one output row
   (16-32 elements in a CIFAR-size network) cost more in dispatch than in work, col2im of
   64x32x16x16 3x3 took 12 ms. Here the padding is a bounds check and each row one loop.

   The results are bit for bit the NumPy code's: copies and zeros, and col2im adds the taps
   into each element in the same (row-major) order, starting from zero.

   Sizes (constants): H, W the input plane; OH, OW the output plane; KH, KW the kernel; SH,
   SW the stride; DH, DW the dilation; PH, PW the top and left pads; PARALLEL 1 to split the
   planes (batch x channels) over the cores. */
#include "prelude.h"
#include "lowering.h"

#define KK (KH * KW)
#define OL (OH * OW)

/* The first output index o >= 0 whose input index o * s + off is >= 0. */
static inline npy_intp first_in(npy_intp off, npy_intp s) {
  return off >= 0 ? 0 : (-off + s - 1) / s;
}

/* One past the last output index o < on whose input index o * s + off is < n. */
static inline npy_intp end_in(npy_intp off, npy_intp s, npy_intp n, npy_intp on) {
  if (n - 1 - off < 0) return 0;
  const npy_intp e = (n - 1 - off) / s + 1;
  return e < on ? e : on;
}

/* cols (planes, KK, OL) from x (planes, H, W): zero where a window reads padding. */
static void im2col_loop(const T *x, T *cols, npy_intp planes) {
#if PARALLEL
  #pragma omp parallel for schedule(static)
#endif
  for (npy_intp p = 0; p < planes; p++) {
    const T *xp = x + p * H * W;
    T *cp = cols + p * KK * OL;
    for (npy_intp u = 0; u < KH; u++) {
      const npy_intp offy = u * DH - PH;
      const npy_intp y0 = first_in(offy, SH), y1 = end_in(offy, SH, H, OH);
      for (npy_intp v = 0; v < KW; v++) {
        const npy_intp offx = v * DW - PW;
        const npy_intp x0 = first_in(offx, SW), x1 = end_in(offx, SW, W, OW);
        T *row = cp + (u * KW + v) * OL;
        for (npy_intp oy = 0; oy < OH; oy++) {
          T *r = row + oy * OW;
          if (oy < y0 || oy >= y1 || x1 <= x0) {
            for (npy_intp ox = 0; ox < OW; ox++) r[ox] = 0;
            continue;
          }
          const T *src = xp + (oy * SH + offy) * W + offx;
          for (npy_intp ox = 0; ox < x0; ox++) r[ox] = 0;
          for (npy_intp ox = x0; ox < x1; ox++) r[ox] = src[ox * SW];
          for (npy_intp ox = x1; ox < OW; ox++) r[ox] = 0;
        }
      }
    }
  }
}

/* gx (planes, H, W) = the columns (planes, KK, OL) summed back into the image, the taps in
   row-major order; what falls on padding is dropped. */
static void col2im_loop(const T *cols, T *gx, npy_intp planes) {
#if PARALLEL
  #pragma omp parallel for schedule(static)
#endif
  for (npy_intp p = 0; p < planes; p++) {
    T *gp = gx + p * H * W;
    const T *cp = cols + p * KK * OL;
    for (npy_intp i = 0; i < H * W; i++) gp[i] = 0;
    for (npy_intp u = 0; u < KH; u++) {
      const npy_intp offy = u * DH - PH;
      const npy_intp y0 = first_in(offy, SH), y1 = end_in(offy, SH, H, OH);
      for (npy_intp v = 0; v < KW; v++) {
        const npy_intp offx = v * DW - PW;
        const npy_intp x0 = first_in(offx, SW), x1 = end_in(offx, SW, W, OW);
        if (x1 <= x0) continue;
        const T *row = cp + (u * KW + v) * OL;
        for (npy_intp oy = y0; oy < y1; oy++) {
          const T *r = row + oy * OW;
          T *dst = gp + (oy * SH + offy) * W + offx;
          for (npy_intp ox = x0; ox < x1; ox++) dst[ox * SW] += r[ox];
        }
      }
    }
  }
}

/* (x, cols) for im2col, (cols, gx) for col2im: C-contiguous arrays of the module's dtype
   whose sizes are whole numbers of planes (checked here), made by the caller. */
static int _conv_args(PyObject *const *args, Py_ssize_t nargs, PyArrayObject **a,
                      const npy_intp *per_plane, npy_intp *planes) {
  if (nargs != 2) goto bad;
  for (int j = 0; j < 2; j++) {
    if (!PyArray_Check(args[j])) goto bad;
    a[j] = (PyArrayObject *)args[j];
    if (!PyArray_IS_C_CONTIGUOUS(a[j]) || PyArray_TYPE(a[j]) != NPY_T) goto bad;
  }
  *planes = PyArray_SIZE(a[0]) / per_plane[0];
  for (int j = 0; j < 2; j++)
    if (PyArray_SIZE(a[j]) != *planes * per_plane[j]) goto bad;
  return 1;
bad:
  PyErr_SetString(PyExc_TypeError, "ember conv2d kernel: arguments");
  return 0;
}

/* A module function of two arrays of the given per-plane sizes, calling ``loop`` on their
   data and the number of planes. */
#define CONV_FUNCTION(name, loop, s0, s1)                                                   \
static PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {            \
  PyArrayObject *a[2]; npy_intp planes;                                                     \
  const npy_intp per_plane[2] = {s0, s1};                                                   \
  if (!_conv_args(args, nargs, a, per_plane, &planes)) return NULL;                         \
  Py_BEGIN_ALLOW_THREADS                                                                    \
  loop(PyArray_DATA(a[0]), PyArray_DATA(a[1]), planes);                                     \
  Py_END_ALLOW_THREADS                                                                      \
  Py_RETURN_NONE;                                                                           \
}

CONV_FUNCTION(im2col, im2col_loop, H * W, KK * OL)
CONV_FUNCTION(col2im, col2im_loop, KK * OL, H * W)
