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
