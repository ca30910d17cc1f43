"""Multi-device programs on 8 forced CPU devices: shard_map collectives and jit/GSPMD sharding."""
from programs import case, Program
from programs.basic import _sds

DEV8 = ["--xla_force_host_platform_device_count=8"]


def _mesh(shape, names):
    # Auto (GSPMD) axes: newer jax defaults make_mesh to Explicit axes.
    import jax
    import programs
    at = getattr(jax.sharding, "AxisType", None)
    if programs.DEVICES is not None:
        # A deviceless accelerator topology (tools/gen_accel_testdata.py): its first
        # prod(shape) devices in order. jax.make_mesh is not used here: it refuses TPU v4
        # topologies whose devices are cores (two per chip) rather than chips.
        import numpy as np
        n = int(np.prod(shape))
        devs = np.array(list(programs.DEVICES)[:n], dtype=object).reshape(shape)
        return jax.sharding.Mesh(devs, names, axis_types=(at.Auto,) * len(shape))
    if at is not None:
        return jax.make_mesh(shape, names, axis_types=(at.Auto,) * len(shape))
    return jax.make_mesh(shape, names)


def _sh(mesh, *spec):
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P
    return NamedSharding(mesh, P(*spec))


def _shard_map(f, mesh, in_specs, out_specs, **kw):
    import jax
    sm = getattr(jax, "shard_map", None)
    if sm is None:
        from jax.experimental.shard_map import shard_map as sm
    return sm(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, **kw)


@case("shard_map_psum_allgather", "shard_map over 8 CPU devices (mesh axis 'x'): row-sharded "
      "matmul partial sums reduced with lax.psum (all-reduce) and the sharded activations "
      "gathered with lax.all_gather; per-device shapes in the HLO.",
      extra_xla_flags=DEV8, expect=[r"all-reduce", r"all-gather"], tags=["multi-device"])
def shard_map_psum_allgather():
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import PartitionSpec as P
    mesh = _mesh((8,), ("x",))

    def local(x, w):
        partial = x @ w                       # [B, D] partial sums over the sharded K dim
        full = lax.psum(partial, "x")
        g = lax.all_gather(jnp.tanh(x), "x", axis=1, tiled=True)
        return full, g

    def psum_allgather(x, w):
        # all_gather results are "varying" for the replication checker: disable it.
        return _shard_map(local, mesh, (P(None, "x"), P("x", None)), (P(), P()),
                          check_vma=False)(x, w)
    return Program(psum_allgather, (_sds((2048, 8192), sharding=_sh(mesh, None, "x")),
                                    _sds((8192, 2048), sharding=_sh(mesh, "x", None))))


@case("shard_map_reduce_scatter_all_to_all", "shard_map over 8 CPU devices: lax.psum_scatter "
      "(reduce-scatter) of per-device gradients and lax.all_to_all resharding (sequence <-> heads), "
      "plus a ring lax.ppermute (collective-permute).",
      extra_xla_flags=DEV8, expect=[r"reduce-scatter|all-reduce", r"all-to-all",
                                    r"collective-permute"], tags=["multi-device"])
def shard_map_reduce_scatter_all_to_all():
    from jax import lax
    from jax.sharding import PartitionSpec as P
    mesh = _mesh((8,), ("x",))

    def local(g, a):
        rs = lax.psum_scatter(g, "x", scatter_dimension=0, tiled=True)
        a2a = lax.all_to_all(a, "x", split_axis=1, concat_axis=0, tiled=True)
        ring = lax.ppermute(rs, "x", [(i, (i + 1) % 8) for i in range(8)])
        return rs, a2a, ring

    def reduce_scatter_a2a(g, a):
        return _shard_map(local, mesh, (P(), P("x", None)), (P("x"), P(None, "x"), P("x")))(g, a)
    return Program(reduce_scatter_a2a, (_sds((8192, 1024), sharding=_sh(mesh)),
                                        _sds((8192, 2048), sharding=_sh(mesh, "x", None))))


@case("jit_sharded_mlp_2d_mesh", "jax.jit (pjit) of a 2-layer MLP train step with NamedSharding "
      "inputs on a (4 data x 2 model) mesh of 8 CPU devices; GSPMD inserts the collectives. "
      "Params are donated.", extra_xla_flags=DEV8, expect=[r"all-reduce"], tags=["multi-device"])
def jit_sharded_mlp_2d_mesh():
    import jax
    import jax.numpy as jnp
    mesh = _mesh((4, 2), ("data", "model"))

    def loss(p, x, y):
        h = jax.nn.relu(x @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    def sharded_train_step(p, x, y):
        l, g = jax.value_and_grad(loss)(p, x, y)
        return jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, p, g), l
    p = {"w1": _sds((2048, 8192), sharding=_sh(mesh, None, "model")),
         "w2": _sds((8192, 2048), sharding=_sh(mesh, "model", None))}
    x = _sds((4096, 2048), sharding=_sh(mesh, "data", None))
    return Program(sharded_train_step, (p, x, x), {"donate_argnums": (0,)})


@case("jit_sharding_constraint_reshard", "jax.jit with in/out shardings and a "
      "with_sharding_constraint that reshards f32[8192,8192] from rows to columns over 8 "
      "devices (GSPMD inserts an all-to-all).",
      extra_xla_flags=DEV8, expect=[r"all-to-all\("], tags=["multi-device"])
def jit_sharding_constraint_reshard():
    import jax
    import jax.numpy as jnp
    mesh = _mesh((8,), ("x",))

    def reshard(x):
        y = jnp.tanh(x)
        y = jax.lax.with_sharding_constraint(y, _sh(mesh, None, "x"))
        return y * 2.0
    return Program(reshard, (_sds((8192, 8192), sharding=_sh(mesh, "x", None)),),
                   {"out_shardings": _sh(mesh, None, "x")})
