"""The seed case: jax-ml/jax#30015 (gather with split int indices, and its grad)."""
from programs import case, Program, SEED, SUITE

N = 2048 * 2048 * 2048  # 2**33 index rows


def _seed(idx_dtype, grads):
    def build():
        import jax
        import jax.numpy as jnp

        # The name matters: the module is jit_function_using_idx.
        def function_using_idx(x, idx):
            tuples = tuple(jnp.split(idx, 3, axis=-1))
            gathered = x[tuples][..., 0]
            return jnp.sum(gathered * 2.5)

        fn = jax.grad(function_using_idx, argnums=0) if grads else function_using_idx
        args = (jax.ShapeDtypeStruct((128, 128, 128), jnp.float32),
                jax.ShapeDtypeStruct((N, 3), getattr(jnp, idx_dtype)))
        return Program(fn, args, notes=("jax.jit(jax.grad(function_using_idx, argnums=0))" if grads
                                        else "jax.jit(function_using_idx)"))
    return build


_DESC = ("jax-ml/jax#30015: x f32[128,128,128], idx %s[2048**3,3]; "
         "f(x, idx) = sum(x[tuple(split(idx, 3, -1))][..., 0] * 2.5)%s.")

for _dt in ("int32", "int16"):
    for _g in (True, False):
        for _latest in (False, True):
            _name = "seed_gather_grad_%s_%s%s" % (_dt, "grads" if _g else "nograds",
                                                  "_latest" if _latest else "")
            _det = None
            _look = ""
            _expect = []
            if _g:
                _det = {"name": "duplicate-buffer", "role": "positive",
                        "also": ["broadcast-materialized"] + (["dtype-widening"] if _dt == "int16" else [])}
                _look = ("The scatter index operand: a concatenate(+bitcast) fusion whose output "
                         "s32[N,1,3]/s32[N,3] has the byte size of a widened idx (96 GiB for int32) "
                         "and re-materializes the idx parameter; plus the broadcast(2.5) updates "
                         "f32[N,1] (32 GiB), materialized because scatter does not fuse its operands.")
                _expect = [r"concatenate", r"scatter"]
                if _dt == "int16":
                    _look += " For int16 the indices are also widened s16->s32 (dtype-widening)."
            case(_name,
                 _DESC % (_dt, ", differentiated w.r.t. x (jax.grad)" if _g else ""),
                 env=SUITE if _latest else SEED,
                 detector=_det, look_for=_look, expect=_expect,
                 tags=["seed"] + (["latest"] if _latest else []))(_seed(_dt, _g))


# The fixes of jax-ml/jax#30015, gradient of the int32 seed on jax 0.12: which forms keep
# XLA from copying the whole index array for the scatter (XLA's totals decide; see
# testdata/jax/README.md). Each function is named function_using_idx like the seed.
def _fix(form, idx_dtype="int32"):
    def build():
        import jax
        import jax.numpy as jnp
        from jax import lax

        if form == "promise_in_bounds":
            def function_using_idx(x, idx):
                dnums = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1, 2),
                                                   start_index_map=(0, 1, 2))
                gathered = lax.gather(x, idx, dnums, slice_sizes=(1, 1, 1),
                                      mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
                return jnp.sum(gathered * 2.5)
        elif form == "columns_nowrap":
            def function_using_idx(x, idx):
                gathered = x.at[idx[:, 0], idx[:, 1], idx[:, 2]].get(wrap_negative_indices=False)
                return jnp.sum(gathered * 2.5)
        else:  # split_nowrap
            def function_using_idx(x, idx):
                tuples = tuple(jnp.split(idx, 3, axis=-1))
                gathered = x.at[tuples].get(wrap_negative_indices=False)[..., 0]
                return jnp.sum(gathered * 2.5)

        args = (jax.ShapeDtypeStruct((128, 128, 128), jnp.float32),
                jax.ShapeDtypeStruct((N, 3), getattr(jnp, idx_dtype)))
        return Program(jax.grad(function_using_idx, argnums=0), args,
                       notes="jax.jit(jax.grad(function_using_idx, argnums=0)), " + _FIX_FORMS[form])
    return build


_FIX_FORMS = {
    "promise_in_bounds": "lax.gather(x, idx, ..., mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS) "
                         "on the whole index array",
    "columns_nowrap": "x.at[idx[:, 0], idx[:, 1], idx[:, 2]].get(wrap_negative_indices=False)",
    "split_nowrap": "x.at[tuple(jnp.split(idx, 3, -1))].get(wrap_negative_indices=False)[..., 0]",
}

# int16: jnp indexing converts each s16 column to s32 and concatenates them again, wrap or no
# wrap, so only the whole-array lax.gather keeps the copy away (176.01 -> 80.01 GiB).
for _dt, _form in (("int32", "promise_in_bounds"), ("int32", "columns_nowrap"),
                   ("int32", "split_nowrap"), ("int16", "promise_in_bounds"),
                   ("int16", "columns_nowrap"), ("int16", "split_nowrap")):
    _works = _form == "promise_in_bounds" or (_form == "columns_nowrap" and _dt == "int32")
    if _works:
        _outcome = "XLA's scatter reads idx itself: no copy of the index array."
    elif _dt == "int16":
        _outcome = ("No negative-index wrap, but the s16 columns are converted to s32 and "
                    "concatenated again: the 96 GiB copy stays.")
    else:
        _outcome = ("No negative-index wrap, but the split columns are still concatenated "
                    "again: the 96 GiB copy stays.")
    case("seed_gather_grad_%s_grads_%s" % (_dt, _form),
         "jax-ml/jax#30015, a fix tried: x f32[128,128,128], idx %s[2048**3,3]; the gradient "
         "w.r.t. x of sum(g * 2.5) with g = %s. %s" % (_dt, _FIX_FORMS[_form], _outcome),
         env=SUITE,
         detector={"name": "duplicate-buffer", "role": "negative" if _works else "positive",
                   "also": ["broadcast-materialized"] +
                           (["dtype-widening"] if _dt == "int16" and not _works else [])},
         look_for=("The scatter's index operand is the idx parameter itself (no concatenate "
                   "fusion); the broadcast(2.5) updates f32[N,...] (32 GiB) remain." if _works else
                   "A concatenate(+bitcast) fusion of idx's three slices%s, with no "
                   "compare/select (the wrap is gone), feeding the scatter: the 96 GiB copy; plus "
                   "the broadcast(2.5) updates (32 GiB)." % (
                       ", each converted s16->s32" if _dt == "int16" else "")),
         expect=[r"scatter"] + ([] if _works else [r"concatenate"]),
         expect_absent=([r"concatenate"] if _works else [r"select\("]),
         tags=["seed", "latest", "seed_fix"])(_fix(_form, _dt))
