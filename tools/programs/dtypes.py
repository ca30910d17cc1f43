"""Element types: bf16, f16, int8, int4, fp8, bool, complex64, f64-free mixed precision."""
from programs import case, Program
from programs.basic import _sds, _mlp_apply, _mlp_params


@case("dtype_bf16_mlp_grad", "bf16 MLP (widths 2048-8192-2048, batch 4096) loss and grad; "
      "the CPU backend may upcast bf16 dots to f32 (look for convert around dot).",
      expect=[r"bf16\["])
def dtype_bf16_mlp_grad():
    import jax
    import jax.numpy as jnp

    def bf16_mlp_loss(params, x):
        return jnp.mean(_mlp_apply(params, x).astype(jnp.float32) ** 2)
    return Program(jax.grad(bf16_mlp_loss),
                   (_mlp_params([2048, 8192, 2048], "bfloat16"), _sds((4096, 2048), "bfloat16")))


@case("dtype_f16_ops", "f16 elementwise ops, a reduction with f32 accumulation and a matmul on "
      "f16[4096,4096].", expect=[r"f16\["])
def dtype_f16_ops():
    import jax.numpy as jnp

    def f16_ops(x, w):
        y = jnp.exp(x) * 0.5 + x
        return y @ w, jnp.sum(y, axis=0, dtype=jnp.float32)
    return Program(f16_ops, (_sds((4096, 4096), "float16"), _sds((4096, 4096), "float16")))


@case("dtype_int8_quantized_matmul", "int8 weight-only quantization: dequantize int8 weights "
      "s8[8192,8192] with per-column f32 scales and matmul with f32 activations.",
      expect=[r"s8\["])
def dtype_int8_quantized_matmul():
    import jax.numpy as jnp

    def int8_dequant_matmul(x, wq, scale):
        return x @ (wq.astype(jnp.float32) * scale)
    return Program(int8_dequant_matmul, (_sds((1024, 8192)), _sds((8192, 8192), "int8"),
                                         _sds((8192,))))


@case("dtype_int4", "int4 arrays: s4[8192,8192] weights (XLA packs s4 two per byte on CPU, "
      "or not: check allocation sizes) converted to f32 and multiplied.",
      expect=[r"s4\["])
def dtype_int4():
    import jax.numpy as jnp

    def int4_weights(x, w4):
        return x @ w4.astype(jnp.float32), (w4 + jnp.int4(1))
    return Program(int4_weights, (_sds((512, 8192)), _sds((8192, 8192), "int4")))


@case("dtype_fp8", "fp8 (float8_e4m3fn and float8_e5m2) casts: quantize f32[4096,4096] to both "
      "fp8 formats, matmul of the dequantized values, return the fp8 arrays too.",
      expect=[r"f8e4m3fn\[", r"f8e5m2\["])
def dtype_fp8():
    import jax.numpy as jnp

    def fp8_casts(x, w):
        a = x.astype(jnp.float8_e4m3fn)
        b = w.astype(jnp.float8_e5m2)
        return a, b, a.astype(jnp.float32) @ b.astype(jnp.float32)
    return Program(fp8_casts, (_sds((4096, 4096)), _sds((4096, 4096))))


@case("dtype_bool_masks", "bool (pred) masks: compare, logical ops, a bool output pred[8192,8192] "
      "and a masked count.", expect=[r"pred\[8192,8192\]"])
def dtype_bool_masks():
    import jax.numpy as jnp

    def masks(x, y, m):
        a = (x > 0) & ~m
        b = (y < x) | m
        return a ^ b, jnp.sum(a, dtype=jnp.int32), jnp.where(b, x, y)
    return Program(masks, (_sds((8192, 8192)), _sds((8192, 8192)), _sds((8192, 8192), "bool_")))


@case("dtype_complex64_fft", "complex64: rfft/fft of f32[1024,8192] signals, complex multiply, "
      "inverse fft; XLA fft ops and c64 buffers.", expect=[r"c64\[", r"fft\("])
def dtype_complex64_fft():
    import jax.numpy as jnp

    def fft_filter(x, h):
        X = jnp.fft.fft(x.astype(jnp.complex64), axis=-1)
        return jnp.fft.ifft(X * h, axis=-1), jnp.fft.rfft(x, axis=-1)
    return Program(fft_filter, (_sds((1024, 8192)), _sds((8192,), "complex64")))


@case("dtype_mixed_uint", "Unsigned and small integer types: u8 image f32 normalization, u16/u32 "
      "bit ops, s16 -> s32 widening sum on [4096,4096].")
def dtype_mixed_uint():
    import jax.numpy as jnp

    def small_ints(img, a, b):
        f = img.astype(jnp.float32) / 255.0
        c = (a.astype(jnp.uint32) << 3) ^ b
        return f, c, jnp.sum(a.astype(jnp.int32), axis=0)
    return Program(small_ints, (_sds((4096, 4096), "uint8"), _sds((4096, 4096), "int16"),
                                _sds((4096, 4096), "uint32")))
