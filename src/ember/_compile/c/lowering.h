/* What every lowering's C file (lowerings.py's hand-written loops) starts from, after
   prelude.h. lowerings.py builds a module for one dtype and one set of sizes: it defines
   the dtype's macros below and the file's sizes (named in its head comment), then includes
   the file. Sizes are constants of the source, so gcc unrolls and vectorises for them.

     T                 float or double
     NPY_T             its NumPy type number: NPY_FLOAT or NPY_DOUBLE
     T_BITS            an integer type of T's size: npy_int32 or npy_int64
     EXP_LOW           exp() of less underflows to 0 (or to a subnormal below 1e-37, taken
                       as 0): -87.0f or -708.0
     EXP(x), LOG(x),   libm's functions for T: expf(x) or exp(x)... (kernels.build declares
     SQRT(x)           the vector variants of the functions the module's code calls) */
#if !defined(T) || !defined(NPY_T) || !defined(T_BITS) || !defined(EXP_LOW) \
    || !defined(EXP) || !defined(LOG) || !defined(SQRT)
#error "lowering.h: T, NPY_T, T_BITS, EXP_LOW, EXP, LOG and SQRT are defined by lowerings.py"
#endif

/* exp(z), or 0 where z < EXP_LOW (masked -inf scores included), without handing those to
   exp(): libmvec's vector exp takes a scalar path for a whole vector holding one (5-9x
   slower). The argument is cleared with bits: gcc moves a select in the argument past the
   call (exp(c ? 0 : z) became c ? 1 : exp(z), -inf reaching exp again). */
static inline T exp_or_zero(T z) {
  const int dead = z < EXP_LOW;
  union { T value; T_BITS bits; } arg = {z};
  arg.bits &= (T_BITS)dead - 1;
  const T e = EXP(arg.value);
  return dead ? (T)0 : e;
}

/* The largest of x[0..n), NaN if one is (NumPy's maximum); n a constant where inlined. */
static inline T row_max(const T *x, npy_intp n) {
  T m = -(T)INFINITY;
  int nan = 0;
  #pragma omp simd reduction(max:m) reduction(|:nan)
  for (npy_intp i = 0; i < n; i++) { m = x[i] > m ? x[i] : m; nan |= x[i] != x[i]; }
  return nan ? (T)NAN : m;
}
