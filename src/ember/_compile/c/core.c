/* ember's optional compiled core (ember._compile.core): the common paths of
   autograd.recording.record and autograd.engine._execute in C, line for line the Python
   code they replace (which stays, and runs wherever this module cannot be built: no C
   compiler, WebAssembly, EMBER_COMPILE_KERNELS=0 or EMBER_COMPILED_CORE=0).

   Anything off the common path is handed to the Python code: record calls the Python
   record for results that are not plain ndarrays, meta arrays, forward AD, captures,
   dispatch modes and observers; execute calls the Python _execute for recorded backward
   passes (create_graph) and _run_special for every node the fast path does not take.
   Saved values and edges are the same objects the Python code makes, so either may run
   the backward of a graph the other recorded.

   Tensor and Node attributes are __slots__: their offsets are read from the classes'
   member descriptors once (init) and written directly for exact Tensors and Node
   subclasses; other objects (Tensor subclasses) go through getattr. */
#include "prelude.h"
#include <structmember.h>

/* What init() is given: the classes, the Python functions called off the fast path, and
   the module state record reads (lists and a thread-local, read at each call). */
static PyTypeObject *tensor_type, *node_type, *saved_output_type;
static PyObject *py_record, *py_execute, *run_special, *raise_modified, *fit, *add;
static PyObject *grad_accumulator, *current_view_fn, *saved_value, *as_view;
static PyObject *meta_made, *fw_on, *observe, *mode_state;
static PyObject *freed, *unsaved, *no_edge, *v0, *v00, *zero, *empty_tuple;
static PyObject *s_enabled, *s_inference, *s_plan, *s_view, *s_save, *s_base, *s_fn_version;
static PyObject *s_fast, *s_backward, *s_unpack_saved, *s_rg, *s_grad_fn, *s_aux, *s_vc;
static PyObject *s_root, *s_saved, *s_versions, *s_hooks, *s_next, *s_output_nr, *s_data;
static PyObject *s_meta, *s_plain, *s_retain_graph, *s_create_graph;

/* Slot offsets: Tensor's, Node's and SavedOutput's. */
static Py_ssize_t t_data, t_rg, t_grad_fn, t_output_nr, t_vc, t_grad, t_aux;
static Py_ssize_t n_next, n_saved, n_versions, n_meta, n_hooks, n_params;
static Py_ssize_t o_data, o_vc, o_output_nr;

/* (vectorcall: the argument before the first is ours, and the callee may use it) */
#define OFFSET PY_VECTORCALL_ARGUMENTS_OFFSET
#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* Store a new reference to v in a slot of a freshly allocated object (the slot is NULL). */
static inline void set_new(PyObject *obj, Py_ssize_t off, PyObject *v) {
  Py_INCREF(v);
  SLOT(obj, off) = v;
}

/* Replace a slot's value (the old one released after, as member descriptors do). */
static inline void set_slot(PyObject *obj, Py_ssize_t off, PyObject *v) {
  PyObject *old = SLOT(obj, off);
  Py_INCREF(v);
  SLOT(obj, off) = v;
  Py_XDECREF(old);
}

/* An attribute: read from its slot where ``from_slot`` (the object's class is known to
   keep it there, and the slot is set), else by getattr. New reference, NULL with an
   exception set. */
static PyObject *slot_or_attr(PyObject *obj, int from_slot, Py_ssize_t off, PyObject *name) {
  PyObject *v = from_slot ? SLOT(obj, off) : NULL;
  if (!v) return PyObject_GetAttr(obj, name);
  Py_INCREF(v);
  return v;
}

/* A Tensor attribute: the slot of an exact Tensor, getattr for a subclass (which may
   override it). */
#define tensor_attr(x, off, name) slot_or_attr((x), Py_IS_TYPE((x), tensor_type), (off), (name))

/* A node attribute: the slot of a Node subclass, else getattr. */
#define node_attr(node, off, name) \
  slot_or_attr((node), PyObject_TypeCheck((node), node_type), (off), (name))

/* The offset of the member descriptor ``name`` of ``type``, or -1 with an exception. */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
  PyObject *d = PyDict_GetItemString(type->tp_dict, name);
  if (!d || !Py_IS_TYPE(d, &PyMemberDescr_Type) ||
      ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
    PyErr_Format(PyExc_TypeError, "ember core: %s.%s is not a slot", type->tp_name, name);
    return -1;
  }
  return ((PyMemberDescrObject *)d)->d_member->offset;
}

/* x._vc[0] (a list or a tuple), new reference; NULL with TypeError for an inference
   tensor's None. */
static PyObject *version_of(PyObject *x) {
  PyObject *vc = tensor_attr(x, t_vc, s_vc);
  if (!vc) return NULL;
  PyObject *v = PySequence_GetItem(vc, 0);
  Py_DECREF(vc);
  return v;
}

/* -- record ------------------------------------------------------------------------- */

/* recording._edges: the next_functions for an op on ``inputs`` (a tuple), or None (new
   references both). */
static PyObject *edges_of(PyObject *inputs) {
  Py_ssize_t n = PyTuple_GET_SIZE(inputs);
  PyObject *edges = PyTuple_New(n);
  if (!edges) return NULL;
  int needs = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *x = PyTuple_GET_ITEM(inputs, i), *edge = NULL;
    int rg = 0;
    if (PyObject_TypeCheck(x, tensor_type)) {
      PyObject *r = tensor_attr(x, t_rg, s_rg);
      if (!r) goto error;
      rg = PyObject_IsTrue(r);
      Py_DECREF(r);
      if (rg < 0) goto error;
    }
    if (!rg) {
      Py_INCREF(no_edge);
      PyTuple_SET_ITEM(edges, i, no_edge);
      continue;
    }
    needs = 1;
    PyObject *fn = tensor_attr(x, t_grad_fn, s_grad_fn);
    if (!fn) goto error;
    PyObject *aux = tensor_attr(x, t_aux, s_aux);
    if (!aux) {
      Py_DECREF(fn);
      goto error;
    }
    if (aux != Py_None) {
      /* a view whose base was written in place since it was made: its grad_fn regenerated */
      PyObject *base = PyObject_GetAttr(aux, s_base);
      int moved = 0;
      if (base && base != Py_None) {
        PyObject *fv = PyObject_GetAttr(aux, s_fn_version), *v = fv ? version_of(x) : NULL;
        moved = v ? PyObject_RichCompareBool(fv, v, Py_NE) : -1;
        Py_XDECREF(fv);
        Py_XDECREF(v);
      }
      Py_XDECREF(base);
      Py_DECREF(aux);
      if (!base || moved < 0) {
        Py_DECREF(fn);
        goto error;
      }
      if (moved) {
        Py_SETREF(fn, PyObject_CallOneArg(current_view_fn, x));
        if (!fn) goto error;
      }
    } else {
      Py_DECREF(aux);
    }
    if (fn != Py_None) {
      PyObject *nr = tensor_attr(x, t_output_nr, s_output_nr);
      edge = nr ? PyTuple_Pack(2, fn, nr) : NULL;
      Py_XDECREF(nr);
    } else {
      PyObject *acc = PyObject_CallOneArg(grad_accumulator, x);
      edge = acc ? PyTuple_Pack(2, acc, zero) : NULL;
      Py_XDECREF(acc);
    }
    Py_DECREF(fn);
    if (!edge) goto error;
    PyTuple_SET_ITEM(edges, i, edge);
  }
  if (!needs) {
    Py_DECREF(edges);
    Py_RETURN_NONE;
  }
  return edges;
error:
  Py_DECREF(edges);
  return NULL;
}

static PyObject *versions_tuple(PyObject *saved) {
  Py_ssize_t n = PyTuple_GET_SIZE(saved);
  PyObject *versions = PyTuple_New(n);
  if (!versions) return NULL;
  int all_zero = 1;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *v = version_of(PyTuple_GET_ITEM(saved, i));
    if (!v) {
      Py_DECREF(versions);
      return NULL;
    }
    all_zero = all_zero && v == zero;
    PyTuple_SET_ITEM(versions, i, v);
  }
  /* (the shared tuples, as the Python code: saved values are nearly always at version 0) */
  if (all_zero && (n == 1 || n == 2)) {
    Py_DECREF(versions);
    versions = n == 1 ? v0 : v00;
    Py_INCREF(versions);
  }
  return versions;
}

/* What the node saves, by the class's plan (opdef.save_plan), into _saved and _versions.
   0, or -1 with an exception. */
static int save(PyObject *node, PyObject *cls, long plan, PyObject *inputs, PyObject *edges,
                PyObject *t, PyObject *out, PyObject *extras) {
  PyObject *saved = NULL, *versions = NULL;
  if (plan == 0) {
    saved = empty_tuple;
    versions = empty_tuple;
    Py_INCREF(saved);
    Py_INCREF(versions);
  } else if (plan == 1) { /* the one input */
    saved = inputs;
    Py_INCREF(saved);
  } else if (plan == 2) { /* the one output (just made: version 0) */
    PyObject *so = saved_output_type->tp_alloc(saved_output_type, 0);
    if (!so) return -1;
    set_new(so, o_data, out);
    set_new(so, o_vc, SLOT(t, t_vc));
    set_new(so, o_output_nr, zero);
    saved = PyTuple_Pack(1, so);
    Py_DECREF(so);
    if (!saved) return -1;
    versions = v0;
    Py_INCREF(versions);
  } else if (plan == 3) { /* each of two inputs' rules reads the other one (mul) */
    PyObject *pair[2];
    for (int i = 0; i < 2; i++) {
      PyObject *x = PyTuple_GET_ITEM(inputs, i);
      /* x is read by the other input's rule: unsaved when that one needs no gradient */
      PyObject *other = PyTuple_GET_ITEM(PyTuple_GET_ITEM(edges, 1 - i), 0);
      if (other == Py_None) {
        Py_INCREF(unsaved);
        pair[i] = unsaved;
      } else if (!Py_IS_TYPE(x, tensor_type)) {
        pair[i] = PyObject_CallOneArg(saved_value, x);
      } else {
        Py_INCREF(x);
        pair[i] = x;
      }
      if (!pair[i]) {
        if (i) Py_DECREF(pair[0]);
        return -1;
      }
    }
    saved = PyTuple_Pack(2, pair[0], pair[1]);
    Py_DECREF(pair[0]);
    Py_DECREF(pair[1]);
    if (!saved) return -1;
  } else {
    PyObject *save_fn = PyObject_GetAttr(cls, s_save);
    if (!save_fn) return -1;
    PyObject *args[4] = {inputs, edges, t, extras};
    saved = PyObject_Vectorcall(save_fn, args, 4, NULL);
    Py_DECREF(save_fn);
    if (!saved) return -1;
    if (!PyTuple_Check(saved)) {
      Py_SETREF(saved, PySequence_Tuple(saved));
      if (!saved) return -1;
    }
  }
  if (!versions) {
    versions = versions_tuple(saved);
    if (!versions) {
      Py_DECREF(saved);
      return -1;
    }
  }
  set_slot(node, n_saved, saved);
  set_slot(node, n_versions, versions);
  Py_DECREF(saved);
  Py_DECREF(versions);
  return 0;
}

static PyObject *call_py_record(PyObject *const *args, Py_ssize_t nargs) {
  return PyObject_Vectorcall(py_record, args, nargs, NULL);
}

static int truth(PyObject *obj, PyObject *name) {
  PyObject *v = PyObject_GetAttr(obj, name);
  if (!v) return -1;
  int r = PyObject_IsTrue(v);
  Py_DECREF(v);
  return r;
}

/* ((out.shape, out.dtype),): a node's _meta for one output. */
static PyObject *shape_and_dtype(PyArrayObject *out) {
  int nd = PyArray_NDIM(out);
  PyObject *shape = PyTuple_New(nd);
  if (!shape) return NULL;
  for (int i = 0; i < nd; i++) {
    PyObject *n = PyLong_FromSsize_t(PyArray_DIM(out, i));
    if (!n) {
      Py_DECREF(shape);
      return NULL;
    }
    PyTuple_SET_ITEM(shape, i, n);
  }
  PyObject *entry = PyTuple_Pack(2, shape, (PyObject *)PyArray_DESCR(out));
  Py_DECREF(shape);
  if (!entry) return NULL;
  PyObject *meta = PyTuple_Pack(1, entry);
  Py_DECREF(entry);
  return meta;
}

static PyObject *record_array(PyObject *cls, PyObject *out, PyObject *inputs,
                              PyObject *const *args, Py_ssize_t nargs);

/* record(cls, out, inputs, params=(), extras=(), plain=False): recording.record. */
static PyObject *record(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 3 || nargs > 6) return call_py_record(args, nargs);
  PyObject *cls = args[0], *out = args[1], *inputs = args[2];
  /* The Python code's other paths: NumPy scalars and other array classes, meta arrays,
     forward AD (captures, dispatch modes), observers (anomaly mode) */
  PyObject *array = NULL; /* (a 0-d array for a NumPy scalar: tensors hold arrays) */
  if (PyArray_IsScalar(out, Generic)) {
    if (!(array = PyArray_FromScalar(out, NULL))) return NULL;
    out = array;
  }
  PyObject *t = record_array(cls, out, inputs, args, nargs);
  Py_XDECREF(array);
  return t;
}

/* record() for an ``out`` that may be an array. */
static PyObject *record_array(PyObject *cls, PyObject *out, PyObject *inputs,
                              PyObject *const *args, Py_ssize_t nargs) {
  PyObject *params = nargs > 3 ? args[3] : empty_tuple;
  PyObject *extras = nargs > 4 ? args[4] : empty_tuple;
  int plain = nargs > 5 ? PyObject_IsTrue(args[5]) : 0;
  if (plain < 0) return NULL;
  if (!PyArray_CheckExact(out) || !PyTuple_Check(inputs) || !PyType_Check(cls) ||
      !PyType_IsSubtype((PyTypeObject *)cls, node_type) ||
      PyList_GET_SIZE(observe) || (PyList_GET_SIZE(fw_on) && !plain))
    return call_py_record(args, nargs);
  int meta = PyObject_IsTrue(PyList_GET_ITEM(meta_made, 0));
  if (meta) return meta < 0 ? NULL : call_py_record(args, nargs);
  int enabled = truth(mode_state, s_enabled);
  if (enabled < 0) return NULL;

  PyObject *t = tensor_type->tp_alloc(tensor_type, 0);
  if (!t) return NULL;
  PyObject *vc = PyList_New(1);
  if (!vc) {
    Py_DECREF(t);
    return NULL;
  }
  Py_INCREF(zero);
  PyList_SET_ITEM(vc, 0, zero);
  /* A version counter only ever holds an int: it can be in no reference cycle, and the
     cyclic GC need not count it (fewer tracked objects per op, fewer full collections). */
  PyObject_GC_UnTrack(vc);
  set_new(t, t_data, out);
  set_new(t, t_output_nr, zero);
  SLOT(t, t_vc) = vc; /* (the new reference) */
  set_new(t, t_grad, Py_None);
  set_new(t, t_aux, Py_None);

  char kind = PyArray_DESCR((PyArrayObject *)out)->kind;
  PyObject *edges = NULL;
  if (enabled && (kind == 'f' || kind == 'c' || kind == 'V')) {
    edges = edges_of(inputs);
    if (!edges) goto error;
  }
  if (!edges || edges == Py_None) {
    Py_XDECREF(edges);
    set_new(t, t_rg, Py_False);
    set_new(t, t_grad_fn, Py_None);
    if (!enabled) { /* inference mode implies grad mode off */
      int inference = truth(mode_state, s_inference);
      if (inference < 0) goto error;
      if (inference) set_slot(t, t_vc, Py_None);
    }
  } else {
    PyObject *plan_obj = PyObject_GetAttr(cls, s_plan);
    long plan = plan_obj ? PyLong_AsLong(plan_obj) : -1;
    Py_XDECREF(plan_obj);
    if (plan == -1 && PyErr_Occurred()) {
      Py_DECREF(edges);
      goto error;
    }
    PyObject *node = ((PyTypeObject *)cls)->tp_alloc((PyTypeObject *)cls, 0);
    PyObject *meta_entry = node ? shape_and_dtype((PyArrayObject *)out) : NULL;
    if (!meta_entry) {
      Py_XDECREF(node);
      Py_DECREF(edges);
      goto error;
    }
    set_new(node, n_next, edges);
    SLOT(node, n_meta) = meta_entry; /* (the new reference) */
    set_new(node, n_hooks, Py_None);
    set_new(node, n_params, params);
    int failed = save(node, cls, plan, inputs, edges, t, out, extras);
    Py_DECREF(edges);
    if (failed) {
      Py_DECREF(node);
      /* an inference tensor's version counter is None: the Python code raises torch's error */
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) goto error;
      PyErr_Clear();
      Py_DECREF(t);
      return call_py_record(args, nargs);
    }
    SLOT(t, t_grad_fn) = node; /* (the new reference) */
    set_new(t, t_rg, Py_True);
  }
  int view = truth(cls, s_view);
  if (view) { /* the result is a view of the first input */
    PyObject *base = view < 0 ? NULL : PySequence_GetItem(inputs, 0);
    PyObject *r = base ? PyObject_CallFunctionObjArgs(as_view, t, base, NULL) : NULL;
    Py_XDECREF(base);
    if (!r) goto error;
    Py_DECREF(r);
  }
  return t;
error:
  Py_DECREF(t);
  return NULL;
}

/* -- the engine's loop ------------------------------------------------------------------ */

/* The ready stack: (node, gradients) pairs, owned references. */
typedef struct {
  PyObject **items;
  Py_ssize_t size, cap;
} Stack;

static int push(Stack *st, PyObject *node, PyObject *grads) {
  if (st->size + 2 > st->cap) {
    Py_ssize_t cap = st->cap ? 2 * st->cap : 64;
    PyObject **items = PyMem_Realloc(st->items, cap * sizeof(PyObject *));
    if (!items) {
      PyErr_NoMemory();
      return -1;
    }
    st->items = items;
    st->cap = cap;
  }
  Py_INCREF(node);
  Py_INCREF(grads);
  st->items[st->size++] = node;
  st->items[st->size++] = grads;
  return 0;
}

/* engine._fit for arrays, inlined as the Python loop does: ``g`` reduced to the shape and
   dtype its destination recorded. Takes the reference to g; returns a new one. */
static PyObject *fitted(PyObject *g, PyObject *shape, PyObject *dt) {
  if (!PyArray_CheckExact(g)) {
    if (PyArray_IsScalar(g, Generic) && PyTuple_Check(shape) && !PyTuple_GET_SIZE(shape)) {
      /* NumPy gives scalars for 0-d results: gradients are arrays */
      Py_SETREF(g, PyArray_FromScalar(g, NULL));
      if (!g) return NULL;
    } else { /* other array classes, a scalar for a shaped output: the Python code */
      PyObject *r = PyObject_CallFunctionObjArgs(fit, g, shape, dt, Py_False, NULL);
      Py_DECREF(g);
      return r;
    }
  }
  PyArrayObject *a = (PyArrayObject *)g;
  int nd = PyArray_NDIM(a), same = PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == nd;
  for (int i = 0; same && i < nd; i++) {
    Py_ssize_t n = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
    if (n == -1 && PyErr_Occurred()) {
      Py_DECREF(g);
      return NULL;
    }
    same = n == PyArray_DIM(a, i);
  }
  int same_dtype = (PyObject *)PyArray_DESCR(a) == dt;
  if (same && same_dtype) return g;
  if (!same_dtype) { /* (dtype objects compare by value: a different object may be equal) */
    int ne = PyObject_RichCompareBool((PyObject *)PyArray_DESCR(a), dt, Py_NE);
    if (ne < 0) {
      Py_DECREF(g);
      return NULL;
    }
    same_dtype = !ne;
  }
  if (same && same_dtype) return g;
  PyObject *r = PyObject_CallFunctionObjArgs(fit, g, shape, dt, Py_False, NULL);
  Py_DECREF(g);
  return r;
}

/* The fast path of one plain op node: its backward on the first gradient and the saved
   arrays, checked against in-place changes. New reference to the results (a tuple). */
static PyObject *run_fast(PyObject *node, PyObject *g0, int retain_graph) {
  PyObject *saved = node_attr(node, n_saved, s_saved), *results = NULL;
  if (!saved) return NULL;
  int has_saved = PyObject_IsTrue(saved);
  if (has_saved < 0) goto done;
  if (g0 == Py_None) {
    results = empty_tuple;
    Py_INCREF(results);
  } else if (!has_saved) {
    PyObject *args[3] = {NULL, node, g0};
    results = PyObject_VectorcallMethod(s_backward, args + 1, 2 | OFFSET, NULL);
  } else if (saved == freed || !PyTuple_Check(saved) || PyTuple_GET_SIZE(saved) > 2) {
    PyObject *unpacked = PyObject_CallMethodOneArg(node, s_unpack_saved, Py_False);
    if (!unpacked) goto done;
    PyObject *list = PySequence_List(unpacked);
    Py_DECREF(unpacked);
    if (!list) goto done;
    if (PyList_Insert(list, 0, g0) < 0) {
      Py_DECREF(list);
      goto done;
    }
    PyObject *method = PyObject_GetAttr(node, s_backward);
    PyObject *tuple = method ? PyList_AsTuple(list) : NULL;
    Py_DECREF(list);
    if (tuple) results = PyObject_Call(method, tuple, NULL);
    Py_XDECREF(method);
    Py_XDECREF(tuple);
  } else {
    Py_ssize_t n = PyTuple_GET_SIZE(saved);
    PyObject *versions = SLOT(node, n_versions);
    if (!versions || !PyTuple_Check(versions) || PyTuple_GET_SIZE(versions) != n) {
      PyErr_SetString(PyExc_RuntimeError, "ember core: a node's saved versions");
      goto done;
    }
    PyObject *args[4] = {NULL, node, g0, NULL};
    PyObject *data[2] = {NULL, NULL};
    int ok = 1;
    for (Py_ssize_t i = 0; i < n && ok; i++) {
      PyObject *item = PyTuple_GET_ITEM(saved, i), *version = PyTuple_GET_ITEM(versions, i);
      PyObject *v = version_of(item);
      int moved = v ? PyObject_RichCompareBool(v, version, Py_NE) : -1;
      Py_XDECREF(v);
      if (moved) { /* torch's error for the changed one (or the one that failed) */
        if (moved > 0) {
          PyObject *r =
              n == 1 ? PyObject_CallFunctionObjArgs(raise_modified, node, item, version, NULL)
                     : PyObject_CallMethodOneArg(node, s_unpack_saved, Py_False);
          Py_XDECREF(r);
        }
        ok = PyErr_Occurred() ? 0 : ok;
        if (!ok) break;
      }
      data[i] = tensor_attr(item, t_data, s_data);
      ok = data[i] != NULL;
    }
    if (ok) {
      args[3] = data[0];
      if (n == 2) {
        PyObject *args2[5] = {NULL, node, g0, data[0], data[1]};
        results = PyObject_VectorcallMethod(s_backward, args2 + 1, 4 | OFFSET, NULL);
      } else {
        results = PyObject_VectorcallMethod(s_backward, args + 1, 3 | OFFSET, NULL);
      }
    }
    Py_XDECREF(data[0]);
    Py_XDECREF(data[1]);
  }
  if (results && !PyTuple_Check(results)) Py_SETREF(results, PyTuple_Pack(1, results));
  if (results && has_saved && !retain_graph) set_slot(node, n_saved, freed);
done:
  Py_DECREF(saved);
  return results;
}

/* A new list of n Nones. */
static PyObject *nones(Py_ssize_t n) {
  PyObject *list = PyList_New(n);
  for (Py_ssize_t i = 0; list && i < n; i++) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(list, i, Py_None);
  }
  return list;
}

/* Deliver the gradient g (a new reference, or NULL for None) for output nr of nxt:
   engine._execute's inner loop body. 0, or -1 with an exception. */
static int deliver(Stack *st, PyObject *deps, PyObject *buffers, PyObject *nxt,
                   PyObject *nr_obj, PyObject *g) {
  PyObject *count = PyDict_GetItemWithError(deps, nxt); /* (borrowed) */
  if (!count) {
    if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, nxt);
    goto error;
  }
  long d = PyLong_AsLong(count) - 1;
  if (d == -2 && PyErr_Occurred()) goto error;
  if (g) {
    Py_ssize_t nr = PyLong_AsSsize_t(nr_obj);
    if (nr == -1 && PyErr_Occurred()) goto error;
    PyObject *meta = node_attr(nxt, n_meta, s_meta);
    if (!meta) goto error;
    Py_ssize_t n_out = PyObject_Length(meta);
    PyObject *entry = n_out >= 0 ? PySequence_GetItem(meta, nr) : NULL;
    Py_DECREF(meta);
    if (!entry) goto error;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
      Py_DECREF(entry);
      PyErr_SetString(PyExc_RuntimeError, "ember core: a node's output metadata");
      goto error;
    }
    g = fitted(g, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1));
    Py_DECREF(entry);
    if (!g) return -1;
    int buffered = PyDict_Contains(buffers, nxt);
    if (buffered < 0) goto error;
    if (d == 0 && n_out == 1 && !buffered) {
      /* sole (or last) consumer of a single-output node: no buffer needed */
      PyObject *grads = PyList_New(1);
      if (!grads || PyDict_SetItem(deps, nxt, zero) < 0) {
        Py_XDECREF(grads);
        goto error;
      }
      PyList_SET_ITEM(grads, 0, g); /* (the reference) */
      int r = push(st, nxt, grads);
      Py_DECREF(grads);
      return r;
    }
    PyObject *buf = PyDict_GetItemWithError(buffers, nxt); /* (borrowed) */
    if (!buf) {
      if (PyErr_Occurred() || !(buf = nones(n_out))) goto error;
      int r = PyDict_SetItem(buffers, nxt, buf);
      Py_DECREF(buf); /* (the dict's reference keeps it) */
      if (r < 0) goto error;
    }
    PyObject *old = PyList_GetItem(buf, nr); /* (borrowed) */
    if (!old) goto error;
    if (old == Py_None) {
      if (PyList_SetItem(buf, nr, g) < 0) return -1; /* (steals g) */
    } else {
      PyObject *sum = PyObject_CallFunctionObjArgs(add, old, g, NULL);
      Py_DECREF(g);
      if (!sum || PyList_SetItem(buf, nr, sum) < 0) return -1;
    }
    g = NULL;
  }
  PyObject *left = PyLong_FromLong(d);
  int r = left ? PyDict_SetItem(deps, nxt, left) : -1;
  Py_XDECREF(left);
  if (r < 0) return -1;
  if (d == 0) {
    PyObject *buf = PyDict_GetItemWithError(buffers, nxt);
    if (buf) {
      Py_INCREF(buf);
      if (PyDict_DelItem(buffers, nxt) < 0) {
        Py_DECREF(buf);
        return -1;
      }
    } else if (PyErr_Occurred()) {
      return -1;
    } else { /* a node nothing reached still runs (as a no-op): its inputs are released */
      PyObject *meta = node_attr(nxt, n_meta, s_meta);
      Py_ssize_t n_out = meta ? PyObject_Length(meta) : -1;
      Py_XDECREF(meta);
      if (n_out < 0 || !(buf = nones(n_out))) return -1;
    }
    r = push(st, nxt, buf);
    Py_DECREF(buf);
    return r;
  }
  return 0;
error:
  Py_XDECREF(g);
  return -1;
}

/* execute(job, deps, root_grads): engine._execute. */
static PyObject *execute(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3) {
    PyErr_SetString(PyExc_TypeError, "execute(job, deps, root_grads)");
    return NULL;
  }
  PyObject *job = args[0], *deps = args[1];
  int as_tensors = truth(job, s_create_graph);
  if (as_tensors) /* a recorded backward: the rules run on Tensors, the Python loop */
    return as_tensors < 0 ? NULL : PyObject_Vectorcall(py_execute, args, 3, NULL);
  int plain = truth(job, s_plain), retain_graph = truth(job, s_retain_graph);
  PyObject *root = PyObject_GetAttr(job, s_root);
  if (plain < 0 || retain_graph < 0 || !root || !PyDict_CheckExact(deps)) {
    Py_XDECREF(root);
    if (!PyErr_Occurred()) return PyObject_Vectorcall(py_execute, args, 3, NULL);
    return NULL;
  }
  PyObject *buffers = PyDict_New();
  Stack st = {NULL, 0, 0};
  int failed = !buffers || push(&st, root, args[2]) < 0;
  Py_DECREF(root);
  while (!failed && st.size) {
    PyObject *grads = st.items[--st.size], *node = st.items[--st.size];
    PyObject *results = NULL;
    int fast = plain && PyObject_TypeCheck(node, node_type) && SLOT(node, n_hooks) == Py_None;
    if (fast) {
      fast = truth(node, s_fast);
      if (fast < 0) goto next;
    }
    if (fast) { /* the fast path: a plain op node, its saved arrays unpacked inline */
      PyObject *g0 = PySequence_GetItem(grads, 0);
      if (!g0) goto next;
      results = run_fast(node, g0, retain_graph);
      Py_DECREF(g0);
    } else {
      results = PyObject_CallFunctionObjArgs(run_special, job, node, grads, NULL);
      if (results && !PyTuple_Check(results)) Py_SETREF(results, PySequence_Tuple(results));
    }
    if (!results) goto next;
    /* Drop the gradients' list before delivering, so a leaf fed by the same array as its
       sibling can see it unshared and adopt it (the Python loop's references likewise). */
    Py_CLEAR(grads);
    PyObject *edges = node_attr(node, n_next, s_next);
    if (!edges || !PyTuple_Check(edges)) {
      if (edges) PyErr_SetString(PyExc_RuntimeError, "ember core: next_functions");
      Py_XDECREF(edges);
      Py_CLEAR(results);
      goto next;
    }
    Py_ssize_t n_edges = PyTuple_GET_SIZE(edges), n_results = PyTuple_GET_SIZE(results);
    /* Deliver in reverse so the first input's node runs first (LIFO): a leaf fed by the
       same array as its sibling then sees it unshared and can adopt it. */
    for (Py_ssize_t i = n_edges - 1; i >= 0; i--) {
      PyObject *edge = PyTuple_GET_ITEM(edges, i);
      if (!PyTuple_Check(edge) || PyTuple_GET_SIZE(edge) != 2) {
        PyErr_SetString(PyExc_RuntimeError, "ember core: an edge");
        break;
      }
      PyObject *nxt = PyTuple_GET_ITEM(edge, 0);
      if (nxt == Py_None) continue;
      PyObject *g = i < n_results ? PyTuple_GET_ITEM(results, i) : Py_None;
      if (g == Py_None) {
        g = NULL;
      } else {
        Py_INCREF(g);
      }
      if (deliver(&st, deps, buffers, nxt, PyTuple_GET_ITEM(edge, 1), g) < 0) break;
    }
    Py_DECREF(edges);
    Py_CLEAR(results);
  next:
    failed = PyErr_Occurred() != NULL;
    Py_DECREF(node);
    Py_XDECREF(grads);
  }
  while (st.size) Py_DECREF(st.items[--st.size]);
  PyMem_Free(st.items);
  Py_XDECREF(buffers);
  if (failed) return NULL;
  Py_RETURN_NONE;
}

/* dependencies(root): engine._dependencies, for every node reachable from root the number
   of edges pointing at it. */
static PyObject *dependencies(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 1) {
    PyErr_SetString(PyExc_TypeError, "dependencies(root)");
    return NULL;
  }
  PyObject *deps = PyDict_New(), *one = PyLong_FromLong(1);
  Stack st = {NULL, 0, 0}; /* (pairs: the node and itself, unused) */
  int failed = !deps || !one || push(&st, args[0], args[0]) < 0;
  while (!failed && st.size) {
    Py_DECREF(st.items[--st.size]);
    PyObject *node = st.items[--st.size];
    PyObject *edges = node_attr(node, n_next, s_next);
    PyObject *seq = edges ? PySequence_Fast(edges, "next_functions") : NULL;
    Py_XDECREF(edges);
    Py_DECREF(node);
    if (!seq) {
      failed = 1;
      break;
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq) && !failed; i++) {
      PyObject *edge = PySequence_Fast_GET_ITEM(seq, i);
      PyObject *nxt = PyTuple_Check(edge) && PyTuple_GET_SIZE(edge) == 2
                          ? PyTuple_GET_ITEM(edge, 0)
                          : NULL;
      if (!nxt) {
        PyErr_SetString(PyExc_RuntimeError, "ember core: an edge");
        failed = 1;
      } else if (nxt != Py_None) {
        PyObject *count = PyDict_GetItemWithError(deps, nxt); /* (borrowed) */
        if (count) {
          PyObject *more = PyNumber_Add(count, one);
          failed = !more || PyDict_SetItem(deps, nxt, more) < 0;
          Py_XDECREF(more);
        } else {
          failed = PyErr_Occurred() || PyDict_SetItem(deps, nxt, one) < 0 ||
                   push(&st, nxt, nxt) < 0;
        }
      }
    }
    Py_DECREF(seq);
  }
  while (st.size) Py_DECREF(st.items[--st.size]);
  PyMem_Free(st.items);
  Py_XDECREF(one);
  if (failed) {
    Py_XDECREF(deps);
    return NULL;
  }
  return deps;
}

/* -- init ------------------------------------------------------------------------------- */

static int take(PyObject *refs, const char *name, PyObject **dst) {
  PyObject *v = PyDict_GetItemString(refs, name);
  if (!v) {
    PyErr_Format(PyExc_KeyError, "ember core: init needs %s", name);
    return -1;
  }
  Py_INCREF(v);
  Py_XSETREF(*dst, v);
  return 0;
}

static int intern(PyObject **dst, const char *text) {
  if (!*dst) *dst = PyUnicode_InternFromString(text);
  return *dst ? 0 : -1;
}

/* core_init(refs): the classes, functions and module state the two functions use (a dict:
   see ember._compile.core.install). Called once per process, before either runs. */
static PyObject *core_init(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 1 || !PyDict_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "core_init(refs: dict)");
    return NULL;
  }
  PyObject *refs = args[0];
  PyObject *types[3] = {NULL, NULL, NULL};
  if (take(refs, "Tensor", &types[0]) || take(refs, "Node", &types[1]) ||
      take(refs, "SavedOutput", &types[2]))
    goto error;
  for (int i = 0; i < 3; i++)
    if (!PyType_Check(types[i])) {
      PyErr_SetString(PyExc_TypeError, "ember core: a class expected");
      goto error;
    }
  if (take(refs, "record", &py_record) || take(refs, "execute", &py_execute) ||
      take(refs, "run_special", &run_special) || take(refs, "raise_modified", &raise_modified) ||
      take(refs, "fit", &fit) || take(refs, "add", &add) ||
      take(refs, "grad_accumulator", &grad_accumulator) ||
      take(refs, "current_view_fn", &current_view_fn) ||
      take(refs, "saved_value", &saved_value) || take(refs, "as_view", &as_view) ||
      take(refs, "meta_made", &meta_made) || take(refs, "fw_on", &fw_on) ||
      take(refs, "observe", &observe) || take(refs, "mode_state", &mode_state) ||
      take(refs, "freed", &freed) || take(refs, "unsaved", &unsaved) ||
      take(refs, "no_edge", &no_edge))
    goto error;
  if (!PyList_CheckExact(meta_made) || PyList_GET_SIZE(meta_made) < 1 ||
      !PyList_CheckExact(fw_on) || !PyList_CheckExact(observe)) {
    PyErr_SetString(PyExc_TypeError, "ember core: the module state lists");
    goto error;
  }
  PyTypeObject *t = (PyTypeObject *)types[0], *n = (PyTypeObject *)types[1];
  PyTypeObject *o = (PyTypeObject *)types[2];
  if ((t_data = slot_offset(t, "_data")) < 0 || (t_rg = slot_offset(t, "_rg")) < 0 ||
      (t_grad_fn = slot_offset(t, "grad_fn")) < 0 ||
      (t_output_nr = slot_offset(t, "_output_nr")) < 0 || (t_vc = slot_offset(t, "_vc")) < 0 ||
      (t_grad = slot_offset(t, "_grad")) < 0 || (t_aux = slot_offset(t, "_aux")) < 0 ||
      (n_next = slot_offset(n, "next_functions")) < 0 ||
      (n_saved = slot_offset(n, "_saved")) < 0 || (n_versions = slot_offset(n, "_versions")) < 0 ||
      (n_meta = slot_offset(n, "_meta")) < 0 || (n_hooks = slot_offset(n, "_hooks")) < 0 ||
      (n_params = slot_offset(n, "_params")) < 0 || (o_data = slot_offset(o, "_data")) < 0 ||
      (o_vc = slot_offset(o, "_vc")) < 0 || (o_output_nr = slot_offset(o, "_output_nr")) < 0)
    goto error;
  Py_XSETREF(tensor_type, t);
  Py_XSETREF(node_type, n);
  Py_XSETREF(saved_output_type, o);
  if (!zero && !(zero = PyLong_FromLong(0))) return NULL;
  if (!empty_tuple && !(empty_tuple = PyTuple_New(0))) return NULL;
  if (!v0 && !(v0 = PyTuple_Pack(1, zero))) return NULL;
  if (!v00 && !(v00 = PyTuple_Pack(2, zero, zero))) return NULL;
  if (intern(&s_enabled, "enabled") || intern(&s_inference, "inference") ||
      intern(&s_plan, "_plan") || intern(&s_view, "_view") || intern(&s_save, "_save") ||
      intern(&s_base, "base") || intern(&s_fn_version, "fn_version") ||
      intern(&s_fast, "_fast") || intern(&s_backward, "backward") ||
      intern(&s_unpack_saved, "_unpack_saved") || intern(&s_rg, "_rg") ||
      intern(&s_grad_fn, "grad_fn") || intern(&s_aux, "_aux") || intern(&s_vc, "_vc") ||
      intern(&s_output_nr, "_output_nr") || intern(&s_data, "_data") ||
      intern(&s_meta, "_meta") || intern(&s_plain, "plain") ||
      intern(&s_retain_graph, "retain_graph") || intern(&s_create_graph, "create_graph") ||
      intern(&s_saved, "_saved") || intern(&s_versions, "_versions") ||
      intern(&s_hooks, "_hooks") || intern(&s_next, "next_functions") || intern(&s_root, "root"))
    return NULL;
  Py_RETURN_NONE;
error:
  for (int i = 0; i < 3; i++) Py_XDECREF(types[i]);
  return NULL;
}
