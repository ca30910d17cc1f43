"""hlomem.fit: the largest setting (batch, sequence length, ...) that fits a
chip, found with XLA's own compiles and without the chip.

Every probe is a real compile (hlomem._probe.compile_probe): on TPU the
compile itself decides (E1000 CompileTimeHbmOom or not), elsewhere XLA's
total against the usable memory. One integer setting is bisected; any
number of discrete settings (remat policy, microbatches, mesh) form a grid
whose every combination gets its own bisection. Near the limit XLA
rematerializes, so memory is not a line in the setting: no verdict is ever
extrapolated, and the answer's neighbours are compiled too.
"""
import concurrent.futures
import html
import importlib.util
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from ._report import Error, write_atomically

# What a build returns: (function, args) or (function, args, jit keyword arguments).
BuildFn = Callable[..., Any]


@dataclass
class Probe:
    """One compile of the program at one setting."""
    settings: Dict[str, Any]  # every setting, the searched one included
    value: int                # the searched setting's value
    fits: Optional[bool]      # None when the probe failed for another reason
    status: str               # "ok", "oom" (XLA said it does not fit), "error", "build-error"
    error: str = ""
    total_bytes: Optional[int] = None
    # What XLA says the program needs: its total, or for an out-of-memory
    # compile the figure of its error (E1000's "required", to its rounding).
    needed_bytes: Optional[int] = None
    temp_bytes: Optional[int] = None
    usable_bytes: Optional[int] = None
    memory_spaces: Dict[str, int] = field(default_factory=dict)
    compile_seconds: float = 0.0
    remat_count: Optional[int] = None
    flops: Optional[float] = None
    cached: bool = False
    # The optimized HLO, for what-grows; not in to_dict() (megabytes).
    hlo_text: str = field(default="", repr=False)

    @classmethod
    def from_result(cls, settings: Dict[str, Any], value: int, result: Dict[str, Any]) -> "Probe":
        return cls(settings=dict(settings), value=value, fits=result.get("fits"),
                   status=result.get("status", "error"), error=result.get("error") or "",
                   total_bytes=result.get("total_bytes"),
                   needed_bytes=result.get("total_bytes") or (result.get("oom") or {}).get("required_bytes"),
                   temp_bytes=result.get("temp_bytes"),
                   usable_bytes=result.get("usable_bytes"),
                   memory_spaces=dict(result.get("memory_spaces") or {}),
                   compile_seconds=float(result.get("compile_seconds") or 0.0),
                   remat_count=result.get("remat_count"), flops=result.get("flops"),
                   cached=bool(result.get("cached")), hlo_text=result.get("hlo_text") or "")


@dataclass
class FrontierPoint:
    """The answer for one combination of the discrete settings."""
    choices: Dict[str, Any]
    largest: Optional[int]  # None: nothing in the range fits
    probes: List[Probe]
    # Set when the probes were not monotone: a value fit above one that did
    # not (XLA rematerialized), so other values above the answer may fit too.
    non_monotone: bool = False
    error: str = ""  # a probe that failed for a reason other than memory

    @property
    def compiles(self) -> int:
        return sum(1 for p in self.probes if not p.cached)


class _Bisection:
    """The probes of one combination: both ends first, then bisection of the
    bracket (a value that fits, a larger one that does not), then the
    answer's lower neighbour. At most ceil(log2(hi - lo)) + 3 compiles."""

    def __init__(self, lo: int, hi: int):
        self.range = (lo, hi)
        self.results: Dict[int, Probe] = {}
        self.error = ""

    def _fits(self, value: int) -> Optional[bool]:
        probe = self.results.get(value)
        return None if probe is None else probe.fits

    def wanted(self) -> List[int]:
        """The values to compile now; [] when done."""
        if self.error:
            return []
        lo, hi = self.range
        ends = [v for v in (lo, hi) if v not in self.results]
        if ends:
            return ends
        if self._fits(lo) is False:
            return []  # nothing fits
        answer = self.answer()
        if answer is None:
            return []
        if answer < hi:
            fail = min(v for v, p in self.results.items() if v > answer and p.fits is False)
            if fail - answer > 1:
                return [(answer + fail) // 2]
        below = answer - 1
        if below >= lo and below not in self.results:
            return [below]
        return []

    def answer(self) -> Optional[int]:
        """The largest value known to fit. Bisection probes between it and
        the smallest failure above it until the two are adjacent. Near the
        limit XLA's rematerialization can make fits and failures alternate
        (a value fits, the next one does not, the one after fits again): the
        answer then stays on the highest fit seen, and its lower neighbour,
        which does not fit, marks the result non-monotone."""
        lo, hi = self.range
        if self._fits(lo) is not True:
            return None
        return max(v for v, p in self.results.items() if p.fits is True)

    def record(self, value: int, probe: Probe) -> None:
        self.results[value] = probe
        if probe.status in ("error", "build-error"):
            self.error = probe.error or probe.status

    def non_monotone(self) -> bool:
        values = sorted(self.results)
        seen_failure = False
        for v in values:
            fits = self._fits(v)
            if fits is False:
                seen_failure = True
            elif fits is True and seen_failure:
                return True
        return False


def _parse_range(name: str, spec: Any) -> Tuple[int, int]:
    if isinstance(spec, range):
        spec = (spec.start, spec.stop - 1)
    if isinstance(spec, str) and ":" in spec:
        spec = tuple(spec.split(":", 1))
    try:
        lo, hi = (int(x) for x in spec)
    except (TypeError, ValueError):
        raise Error(f"{name}: expected a range of integers such as (1, 4096) or '1:4096', "
                    f"not {spec!r}") from None
    if lo > hi or lo < 0:
        raise Error(f"{name}: the range {lo}:{hi} is empty or negative")
    return lo, hi


def _split_settings(settings: Dict[str, Any]) -> Tuple[str, Tuple[int, int], Dict[str, List[Any]]]:
    """The one bisected integer setting (a pair or 'lo:hi') and the grid."""
    searched = [(k, v) for k, v in settings.items()
                if isinstance(v, (tuple, range)) or (isinstance(v, str) and ":" in v)]
    if len(searched) != 1:
        raise Error("fit needs exactly one setting to search, given as a range such as "
                    f"batch=(1, 4096); got {len(searched)} ({', '.join(k for k, _ in searched) or 'none'})")
    name, spec = searched[0]
    grid = {}
    for k, v in settings.items():
        if k == name:
            continue
        choices = list(v) if isinstance(v, list) else [v]
        if not choices:
            raise Error(f"{k}: no choices given")
        grid[k] = choices
    return name, _parse_range(name, spec), grid


def _load_build(ref: Union[str, BuildFn]) -> BuildFn:
    """A build function, or 'path/to/file.py:name' imported by path."""
    if callable(ref):
        return ref
    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise Error(f"{ref}: error: expected FILE.py:FUNCTION")
    if not os.path.exists(path):
        raise Error(f"{path}: error: no such file")
    spec = importlib.util.spec_from_file_location(f"_hlomem_fit_build_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.pop(0)
    build = getattr(module, name, None)
    if not callable(build):
        raise Error(f"{path}: error: no function '{name}' in it")
    return build


def _unpack_build(built: Any) -> Tuple[Callable, Sequence[Any], Dict[str, Any]]:
    if not isinstance(built, tuple) or len(built) not in (2, 3) or not callable(built[0]):
        raise TypeError("a fit build function returns (function, args) or (function, args, "
                        f"jit_kwargs), not {type(built).__name__}")
    fn, args = built[0], built[1]
    kwargs = dict(built[2]) if len(built) == 3 and built[2] else {}
    return fn, tuple(args) if isinstance(args, (list, tuple)) else (args,), kwargs


def run_probe(build_ref: Union[str, BuildFn], settings: Dict[str, Any], device: Optional[str],
              usable_bytes: Optional[int], cache_dir: Optional[str] = None) -> Dict[str, Any]:
    """One probe, in whatever process the executor chose: build the program
    for `settings` and compile it. The user's own failure (a build that
    raises) is told apart from XLA's verdict."""
    try:
        build = _load_build(build_ref)
        fn, args, kwargs = _unpack_build(build(**settings))
    except Exception as e:  # the user's code: reported as such, never a memory verdict
        return {"fits": None, "status": "build-error",
                "error": "".join(traceback.format_exception_only(type(e), e)).strip()}
    from ._probe import compile_probe
    return compile_probe(fn, args, kwargs, device=device, usable_bytes=usable_bytes,
                         keep_hlo_text=True, cache_dir=cache_dir)


def default_cache_dir() -> str:
    """Where probe results are kept between runs: $HLOMEM_CACHE_DIR, else
    ~/.cache/hlomem/fit (XDG_CACHE_HOME honoured)."""
    if os.environ.get("HLOMEM_CACHE_DIR"):
        return os.environ["HLOMEM_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hlomem", "fit")


class _InProcessExecutor(concurrent.futures.Executor):
    """Runs each task when submitted: for builds that cannot be sent to
    another process (a lambda, a notebook's function)."""

    def submit(self, fn, *args, **kwargs):
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as e:  # noqa: B036 - handed to the caller through the future
            future.set_exception(e)
        return future


def _picklable(obj: Any) -> bool:
    import pickle
    try:
        pickle.dumps(obj)
        return True
    except Exception:
        return False


def search(submit: Callable[[Dict[str, Any]], "concurrent.futures.Future"], name: str,
           bounds: Tuple[int, int], grid: Dict[str, List[Any]], jobs: int,
           progress: Optional[Callable[[Probe, int], None]] = None) -> List[FrontierPoint]:
    """Runs every combination's bisection, keeping up to `jobs` probes in
    flight across combinations. `submit(settings)` starts one probe and
    returns a future of compile_probe's dict."""
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())] or [{}]
    states = [_Bisection(*bounds) for _ in combos]
    in_flight: Dict[concurrent.futures.Future, Tuple[int, int]] = {}
    asked = set()
    done_count = 0
    while True:
        for k, state in enumerate(states):
            for value in state.wanted():
                if len(in_flight) >= jobs:
                    break
                if (k, value) in asked:
                    continue
                asked.add((k, value))
                settings = dict(combos[k], **{name: value})
                in_flight[submit(settings)] = (k, value)
        if not in_flight:
            break
        finished, _ = concurrent.futures.wait(list(in_flight), return_when=concurrent.futures.FIRST_COMPLETED)
        for future in finished:
            k, value = in_flight.pop(future)
            settings = dict(combos[k], **{name: value})
            try:
                result = future.result()
            except Exception as e:  # the worker itself died
                result = {"fits": None, "status": "error", "error": f"the probe's process failed: {e}"}
            probe = Probe.from_result(settings, value, result)
            states[k].record(value, probe)
            done_count += 1
            if progress:
                progress(probe, done_count)
    frontier = []
    for combo, state in zip(combos, states):
        probes = [state.results[v] for v in sorted(state.results)]
        frontier.append(FrontierPoint(choices=combo, largest=None if state.error else state.answer(),
                                      probes=probes, non_monotone=state.non_monotone(),
                                      error=state.error))
    return frontier


def max_compiles(bounds: Tuple[int, int]) -> int:
    """The most compiles one combination's search takes."""
    lo, hi = bounds
    return (math.ceil(math.log2(hi - lo)) if hi > lo else 0) + 3


def _human(n: Optional[float]) -> str:
    if n is None:
        return "-"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f}{unit}"
    return f"{int(n)}B"


class FitResult:
    """The search: every probe, the frontier (the largest fitting value per
    combination) and, where the probes allow, what grows with the setting."""

    def __init__(self, setting: str, bounds: Tuple[int, int], device: Optional[str],
                 frontier: List[FrontierPoint], wall_seconds: float,
                 breakdown: Optional[Dict[str, Any]] = None):
        self.setting = setting
        self.bounds = bounds
        self.device = device
        self.frontier = frontier
        self.wall_seconds = wall_seconds
        self.breakdown = breakdown

    @property
    def probes(self) -> List[Probe]:
        return [p for point in self.frontier for p in point.probes]

    @property
    def largest(self) -> Optional[int]:
        """The largest fitting value over the frontier (None: nothing fits)."""
        values = [p.largest for p in self.frontier if p.largest is not None]
        return max(values) if values else None

    @property
    def best(self) -> Optional[FrontierPoint]:
        fitting = [p for p in self.frontier if p.largest is not None]
        return max(fitting, key=lambda p: p.largest) if fitting else None

    @property
    def errors(self) -> List[FrontierPoint]:
        return [p for p in self.frontier if p.error]

    def assert_largest(self, at_least: int) -> None:
        """Raises AssertionError, with the frontier, when the largest fitting
        value fell below `at_least` (a pytest gate)."""
        if self.largest is None or self.largest < at_least:
            raise AssertionError(f"the largest {self.setting} that fits is {self.largest}, "
                                 f"below {at_least}\n{self}")

    def to_dict(self) -> Dict[str, Any]:
        return {
            "tool": "hlomem", "kind": "fit", "setting": self.setting,
            "range": list(self.bounds), "device": self.device, "largest": self.largest,
            "wall_seconds": round(self.wall_seconds, 3),
            "frontier": [{"choices": p.choices, "largest": p.largest, "non_monotone": p.non_monotone,
                          "error": p.error, "compiles": p.compiles,
                          "probes": [_probe_dict(q) for q in p.probes]} for p in self.frontier],
            "breakdown": self.breakdown,
        }

    def _device_text(self) -> str:
        if isinstance(self.device, (list, tuple)):
            return "each of " + ", ".join(map(str, self.device))
        return self.device or "the given memory"

    def to_json(self, indent: Optional[int] = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, default=str)

    def __str__(self) -> str:
        lines = [f"hlomem fit: the largest {self.setting} in {self.bounds[0]}:{self.bounds[1]} "
                 f"that fits {self._device_text()}"]
        for point in self.frontier:
            label = ", ".join(f"{k}={v}" for k, v in point.choices.items()) or self.setting
            verdict = (f"error: {point.error.splitlines()[0] if point.error else ''}" if point.error
                       else "nothing fits" if point.largest is None
                       else f"largest {self.setting}={point.largest}")
            lines.append("")
            lines.append(f"{label}: {verdict}  ({point.compiles} compiles)")
            if point.non_monotone:
                lines.append("  note: a larger value fit above one that did not (XLA rematerialized "
                             "near the limit); values above the answer may fit too")
            lines.append(f"  {self.setting:>10}  {'fits':>5}  {'total':>10}  {'temp':>10}  "
                         f"{'usable':>10}  {'remat':>5}  {'GFLOP':>9}  {'compile':>8}")
            for p in point.probes:
                fits = {True: "yes", False: "no"}.get(p.fits, p.status)
                gflop = f"{p.flops / 1e9:.2f}" if p.flops is not None else "-"
                remat = "-" if p.remat_count is None else str(p.remat_count)
                seconds = "cached" if p.cached else f"{p.compile_seconds:.1f}s"
                need = _human(p.total_bytes) if p.total_bytes is not None else (
                    f"~{_human(p.needed_bytes)}" if p.needed_bytes is not None else "-")
                lines.append(f"  {p.value:>10}  {fits:>5}  {need:>10}  "
                             f"{_human(p.temp_bytes):>10}  {_human(p.usable_bytes):>10}  {remat:>5}  "
                             f"{gflop:>9}  {seconds:>8}")
        if self.breakdown:
            b = self.breakdown
            lines.append("")
            lines.append(f"What grows with {self.setting} (the buffers live at the peak of the probes at "
                         f"{b['probes'][0]} and {b['probes'][1]}):")
            lines.append(f"  fixed {_human(b['fixed_bytes'])} + {_human(b['per_unit_bytes'])} per "
                         f"{self.setting}")
            if b.get("check"):
                c = b["check"]
                lines.append(f"  at {self.setting}={c['value']}: predicted {_human(c['predicted_bytes'])}, "
                             f"XLA {_human(c['xla_bytes'])} ({c['error_percent']:+.2f}%)"
                             + ("  (a compile beyond the search's, for this check)"
                                if c.get("extra_compile") else ""))
            lines.append(f"  {'per ' + self.setting:>12}  {'at ' + str(b['probes'][1]):>10}  source line")
            for row in b["by_line"][:8]:
                lines.append(f"  {_human(row['per_unit_bytes']):>12}  {_human(row['bytes_at_second']):>10}  "
                             f"{row['source'] or '(no source line)'}")
        lines.append("")
        lines.append(f"{len(self.probes)} probes, {sum(1 for p in self.probes if not p.cached)} compiles, "
                     f"{self.wall_seconds:.1f}s")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<FitResult {self.setting} largest={self.largest} probes={len(self.probes)}>"

    # --- the chart -------------------------------------------------------
    def svg(self, width: int = 640, height: int = 320) -> str:
        """Memory against the setting: each probe (filled: fits), the usable
        line, one series per combination."""
        points = [p for p in self.probes if p.needed_bytes is not None]
        if not points:
            return ""
        xs = [p.value for p in points]
        usable = [p.usable_bytes for p in self.probes if p.usable_bytes]
        ys = [p.needed_bytes for p in points] + usable
        x0, x1 = min(xs), max(xs)
        y1 = max(ys) * 1.08
        left, right, top, bottom = 70, 20, 20, 40

        def sx(x: float) -> float:
            return left + (x - x0) / max(1, x1 - x0) * (width - left - right)

        def sy(y: float) -> float:
            return height - bottom - y / y1 * (height - top - bottom)

        colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
               f'font-family="sans-serif" font-size="11">',
               f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#444"/>',
               f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#444"/>']
        for k in range(5):
            y = y1 * k / 4
            out.append(f'<text x="{left - 4}" y="{sy(y) + 4:.1f}" text-anchor="end">{_human(y)}</text>')
        for x in sorted({x0, x1, *(p.largest for p in self.frontier if p.largest is not None)}):
            out.append(f'<text x="{sx(x):.1f}" y="{height - bottom + 14}" text-anchor="middle">{x}</text>')
        out.append(f'<text x="{(left + width - right) / 2}" y="{height - 6}" text-anchor="middle">'
                   f'{html.escape(self.setting)}</text>')
        for u in sorted(set(usable)):  # one line per chip's memory
            out.append(f'<line x1="{left}" y1="{sy(u):.1f}" x2="{width - right}" y2="{sy(u):.1f}" '
                       f'stroke="#d62728" stroke-dasharray="5,3"/>')
            out.append(f'<text x="{width - right}" y="{sy(u) - 4:.1f}" text-anchor="end" fill="#d62728">'
                       f'usable {_human(u)}</text>')
        for i, point in enumerate(self.frontier):
            color = colors[i % len(colors)]
            series = [p for p in point.probes if p.needed_bytes is not None]
            path = " ".join(f"{sx(p.value):.1f},{sy(p.needed_bytes):.1f}" for p in series)
            if len(series) > 1:
                out.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-opacity="0.5"/>')
            for p in series:
                fill = color if p.fits else "white"
                out.append(f'<circle cx="{sx(p.value):.1f}" cy="{sy(p.needed_bytes):.1f}" r="4" '
                           f'fill="{fill}" stroke="{color}"><title>{html.escape(self.setting)}={p.value}: '
                           f'{_human(p.needed_bytes)}{" fits" if p.fits else " does not fit"}</title></circle>')
            if self.frontier and (point.choices or len(self.frontier) > 1):
                label = ", ".join(f"{k}={v}" for k, v in point.choices.items())
                out.append(f'<text x="{left + 8}" y="{top + 12 + 14 * i}" fill="{color}">'
                           f'{html.escape(label)}</text>')
        out.append("</svg>")
        return "\n".join(out)

    def to_html(self) -> str:
        return ("<!doctype html><meta charset='utf-8'><title>hlomem fit</title>"
                f"<h3>hlomem fit: largest {html.escape(self.setting)} = {self.largest}</h3>"
                f"{self.svg()}<pre>{html.escape(str(self))}</pre>")

    def _repr_html_(self) -> str:
        return f"<div>{self.svg()}<pre>{html.escape(str(self))}</pre></div>"

    def to_markdown(self) -> str:
        return f"### hlomem fit: largest {self.setting} = {self.largest}\n\n```\n{self}\n```\n"

    def plot(self, path: Union[str, os.PathLike]) -> None:
        """Writes the chart as PNG (matplotlib) or SVG (by the file's suffix)."""
        path = os.fspath(path)
        if path.endswith(".svg"):
            write_atomically(path, self.svg())
            return
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            raise Error("plot(path) writes PNG with matplotlib, which is not installed "
                        "(pip install matplotlib), or SVG for a path ending in .svg") from None
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for point in self.frontier:
            series = [p for p in point.probes if p.needed_bytes is not None]
            label = ", ".join(f"{k}={v}" for k, v in point.choices.items()) or self.setting
            line, = ax.plot([p.value for p in series], [p.needed_bytes / 2**30 for p in series], alpha=0.5,
                            label=label)
            ax.scatter([p.value for p in series if p.fits], [p.needed_bytes / 2**30 for p in series if p.fits],
                       color=line.get_color())
            ax.scatter([p.value for p in series if not p.fits],
                       [p.needed_bytes / 2**30 for p in series if not p.fits], facecolors="white",
                       edgecolors=line.get_color())
        usable = [p.usable_bytes for p in self.probes if p.usable_bytes]
        if usable:
            for u in sorted(set(usable)):  # one line per chip's memory
                ax.axhline(u / 2**30, color="#d62728", linestyle="--", label=f"usable {_human(u)}")
            limit = max(usable)
            # Zoom on the limit: probes far above it only say "no".
            near = [p.value for p in self.probes if p.needed_bytes is not None and p.needed_bytes <= 1.6 * limit]
            if near:
                ax.set_ylim(0, 1.6 * limit / 2**30)
                ax.set_xlim(min(near) - 0.02 * max(near), 1.15 * max(near))
        for point in self.frontier:
            if point.largest is not None:
                fit = next(p for p in point.probes if p.value == point.largest)
                if fit.needed_bytes is not None:
                    ax.annotate(f"{point.largest}", (fit.value, fit.needed_bytes / 2**30),
                                textcoords="offset points", xytext=(-6, 8), ha="right")
        ax.set_xlabel(self.setting)
        ax.set_ylabel("XLA's need (GiB)")
        ax.legend()
        fig.tight_layout()
        tmp = f"{path}.tmp{os.getpid()}"
        fig.savefig(tmp, format="png")
        plt.close(fig)
        os.replace(tmp, path)


def _probe_dict(probe: Probe) -> Dict[str, Any]:
    out = asdict(probe)
    out.pop("hlo_text")
    return out


def _grows_linearly(p: Probe) -> bool:
    return p.status in ("ok", "oom") and p.total_bytes is not None and bool(p.hlo_text) \
        and not p.remat_count


def what_grows(point: FrontierPoint, setting: str,
               compile_at: Optional[Callable[[int], Probe]] = None) -> Optional[Dict[str, Any]]:
    """The fixed and per-unit bytes, in all and by source line (the buffers
    live at the peak), from the two largest fitting probes compiled without
    rematerialization (where the need still grows as a line: the smallest
    values can take other fusions), checked against XLA's total at a third.
    When the search left no third such probe, `compile_at` compiles one
    between the two (a compile beyond the search's, marked as such)."""
    linear = [p for p in point.probes if _grows_linearly(p)]
    # Fitting probes first, largest first: closest to where the answer is used.
    linear.sort(key=lambda p: (not p.fits, -p.value))
    if len(linear) < 2:
        return None
    second, first = linear[0], linear[1]
    if first.value > second.value:
        first, second = second, first
    if first.value == second.value:
        return None
    from ._analyze import analyze
    span = second.value - first.value

    def by_line(probe: Probe) -> Dict[str, int]:
        # Bytes live at the peak per source line: they sum to the peak, where
        # all buffers would count memory that XLA reuses several times.
        return {row.key: row.bytes for row in analyze(probe.hlo_text).by_line}

    a, b = by_line(first), by_line(second)
    rows = []
    for key in set(a) | set(b):
        per_unit = (b.get(key, 0) - a.get(key, 0)) / span
        rows.append({"source": key, "per_unit_bytes": round(per_unit),
                     "fixed_bytes": round(a.get(key, 0) - per_unit * first.value),
                     "bytes_at_second": b.get(key, 0)})
    rows.sort(key=lambda r: (-abs(r["per_unit_bytes"]), -r["fixed_bytes"], r["source"]))
    per_unit_total = (second.total_bytes - first.total_bytes) / span
    fixed_total = first.total_bytes - per_unit_total * first.value
    out = {"probes": [first.value, second.value], "fixed_bytes": round(fixed_total),
           "per_unit_bytes": round(per_unit_total), "by_line": rows, "check": None}
    third, extra = (linear[2], False) if len(linear) > 2 else (None, True)
    if third is None and compile_at is not None and span >= 2:
        third = compile_at(first.value + span // 2)
        if not _grows_linearly(third):
            third = None
    if third is not None:
        predicted = fixed_total + per_unit_total * third.value
        out["check"] = {"value": third.value, "predicted_bytes": round(predicted),
                        "xla_bytes": third.total_bytes, "extra_compile": extra,
                        "error_percent": 100.0 * (predicted - third.total_bytes) / third.total_bytes}
    return out


def _print_progress(expected: int) -> Callable[[Probe, int], None]:
    def show(probe: Probe, done: int) -> None:
        settings = " ".join(f"{k}={v}" for k, v in probe.settings.items())
        if probe.status in ("ok", "oom"):
            verdict = "fits" if probe.fits else "does not fit"
            need = probe.total_bytes if probe.total_bytes is not None else probe.needed_bytes
            figures = f"{_human(need)} of {_human(probe.usable_bytes)}"
        else:
            verdict = probe.status
            figures = (probe.error.splitlines() or [""])[-1][:120]
        when = "cached" if probe.cached else f"{probe.compile_seconds:.1f}s"
        print(f"hlomem fit: probe {done}/<={expected}  {settings}: {verdict}  {figures}  ({when})",
              file=sys.stderr, flush=True)
    return show


def fit(build: Union[BuildFn, str], *, device: Optional[str] = None,
        usable: Union[int, str, None] = None, executor: Optional[concurrent.futures.Executor] = None,
        jobs: Optional[int] = None, cache: bool = True, progress: bool = True,
        **settings: Any) -> FitResult:
    """The largest value of one setting that fits, for every combination of
    the others, by compiling the program with XLA.

        def build(batch):       # what jax.jit needs, for one setting
            return train_step, (params, opt_state, batch_spec(batch)), dict(donate_argnums=(0, 1))
        r = hlomem.fit(build, batch=(1, 4096), device="tpu-v5e:2x2")
        r.largest

    build: called with every setting as a keyword argument; returns
      (function, args) or (function, args, jit_kwargs); args may be
      jax.ShapeDtypeStruct. Or "file.py:name".
    settings: one range to search, batch=(1, 4096) or "1:4096", and any
      number of lists of choices, remat=["none", "dots"].
    device: a TPU topology or chip ("tpu-v5e:2x2"), a GPU preset
      ("h100-80gb"), or None for the local devices with `usable` bytes; a
      list of them is one more choice of the grid ("device=v5e-16gb" in
      the frontier), each judged against its own memory.
    usable: the memory to fit in (default: the device's; required on the
      local CPU).
    executor: any concurrent.futures.Executor (a process pool by default,
      one process per core, per two on TPU, whose compiles take two each;
      Dask's or Ray's for large grids).
    cache: keep each probe's result by its lowered program, target and
      versions (default_cache_dir()), so that a rerun costs no compile.
    """
    from ._report import parse_bytes
    name, bounds, grid = _split_settings(settings)
    usable_bytes = parse_bytes(usable, "usable") if usable is not None else None
    from ._probe import resolve_device
    devices = list(device) if isinstance(device, (list, tuple)) else [device]
    chips_vary = isinstance(device, (list, tuple))
    if chips_vary:
        if not devices:
            raise Error("device: no chips given")
        if "device" in grid:
            raise Error("device= lists chips, and a setting is named 'device' too; rename the setting")
        grid["device"] = devices
    kinds = set()
    for chip in devices:
        try:
            target = resolve_device(chip, usable_bytes=usable_bytes)
        except ValueError as e:
            raise Error(str(e)) from None
        if target.get("usable_bytes") is None and target["kind"] != "tpu":
            raise Error("fit on the local devices needs usable= (the memory to fit in, e.g. '16GiB'), "
                        "or device= naming a chip ('v5e-16gb', 'tpu-v5e:2x2', 'h100-80gb')")
        kinds.add(target["kind"])
    combos = max(1, math.prod(len(v) for v in grid.values()))
    cores = os.cpu_count() or 1
    jobs = max(1, jobs or (cores // 2 if "tpu" in kinds else cores))
    cache_dir = default_cache_dir() if cache else None
    owned = None
    if executor is None:
        if _picklable(build):
            owned = concurrent.futures.ProcessPoolExecutor(
                max_workers=min(jobs, combos * 2), mp_context=multiprocessing.get_context("spawn"))
            executor = owned
        else:
            executor = _InProcessExecutor()
            jobs = 1
    start = time.monotonic()

    def submit(settings: Dict[str, Any]) -> concurrent.futures.Future:
        settings = dict(settings)
        chip = settings.pop("device") if chips_vary else device  # a choice of the grid, not the build's
        return executor.submit(run_probe, build, settings, chip, usable_bytes, cache_dir)
    try:
        frontier = search(submit, name, bounds, grid, jobs,
                          _print_progress(combos * max_compiles(bounds)) if progress else None)
        best = max(frontier, key=lambda p: -1 if p.largest is None else p.largest)

        def compile_at(value: int) -> Probe:
            settings = {**best.choices, name: value}
            return Probe.from_result(settings, value, submit(settings).result())
        breakdown = what_grows(best, name, compile_at)
    finally:
        if owned is not None:
            owned.shutdown()
    return FitResult(name, bounds, device, frontier, time.monotonic() - start, breakdown)


def _parse_set(text: str) -> Tuple[str, Any]:
    """'batch=1:4096' -> ('batch', '1:4096'); 'remat=none,dots' -> ('remat', ['none', 'dots'])."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise Error(f"--set {text}: expected NAME=LO:HI or NAME=A,B,...")
    name, value = name.strip(), value.strip()
    if ":" in value:
        _parse_range(name, value)
        return name, value

    def scalar(x: str) -> Any:
        x = x.strip()
        for kind in (int, float):
            try:
                return kind(x)
            except ValueError:
                pass
        return x
    return name, [scalar(x) for x in value.split(",")]


def main(argv: Sequence[str]) -> int:
    """`hlomem fit FILE.py:build --set batch=1:4096 [--set remat=none,dots] [--device D]`:
    0 when a value fits, 1 when nothing fits, 2 on bad input or a build or
    compile error (the user's, never taken for a memory verdict)."""
    import argparse
    parser = argparse.ArgumentParser(
        prog="hlomem fit", description="The largest setting that fits a chip, by XLA's own compiles.")
    parser.add_argument("build", help="FILE.py:FUNCTION returning (fn, args[, jit_kwargs]) for settings")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="NAME=VALUES",
                        help="batch=1:4096 to search, remat=none,dots for choices (repeatable)")
    parser.add_argument("--device", help="tpu-v5e:2x2, v5e-16gb, h100-80gb, ... (default: local devices); "
                                         "several, comma-separated, are one more choice of the grid")
    parser.add_argument("--usable", help="Usable memory, e.g. 16GiB (default: the device's)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="Probes side by side (default: one per core, per two cores on TPU)")
    parser.add_argument("--no-cache", action="store_true",
                        help="Compile every probe even when an earlier run kept its result")
    parser.add_argument("--format", "-f", default="text", choices=["text", "json", "html", "markdown"])
    parser.add_argument("-o", "--output", help="Write to FILE (atomically) instead of stdout")
    parser.add_argument("--plot", help="Write the chart to FILE (.png, or .svg)")
    parser.add_argument("--at-least", type=int, default=None, metavar="N",
                        help="Exit 1 when the largest fitting value is below N (a CI gate)")
    parser.add_argument("--baseline", metavar="FIT.json",
                        help="A committed `hlomem fit --format json`: exit 1 when the largest value of "
                             "any combination fell below its figure there")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        settings = dict(_parse_set(s) for s in args.settings)
        if args.jobs is not None and args.jobs < 1:
            raise Error(f"--jobs: must be at least 1, not {args.jobs}")
        build = args.build
        _load_build(build)  # a file that does not import is reported before any probe
        chips = args.device.split(",") if args.device and "," in args.device else args.device
        result = fit(build, device=chips, usable=args.usable, jobs=args.jobs,
                     cache=not args.no_cache, **settings)
    except Error as e:
        print(f"error: {e}" if not str(e).startswith(("error:", "/")) and ": error:" not in str(e)
              else str(e), file=sys.stderr)
        return 2
    except Exception as e:  # importing the user's file failed
        print(f"error: {args.build}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    text = {"text": lambda: str(result) + "\n", "json": lambda: result.to_json() + "\n",
            "html": result.to_html, "markdown": result.to_markdown}[args.format]()
    if args.output and args.output != "-":
        write_atomically(args.output, text)
    else:
        sys.stdout.write(text)
    if args.plot:
        result.plot(args.plot)
    for point in result.errors:
        print(f"error: {', '.join(f'{k}={v}' for k, v in point.choices.items()) or result.setting}: "
              f"{point.error}", file=sys.stderr)
    if result.errors:
        return 2
    if result.largest is None:
        return 1
    if args.at_least is not None and result.largest < args.at_least:
        print(f"FAIL  the largest {result.setting} that fits is {result.largest}, below --at-least "
              f"{args.at_least}", file=sys.stderr)
        return 1
    if args.baseline:
        try:
            falls = fallen_below(result, args.baseline)
        except Error as e:
            print(str(e), file=sys.stderr)
            return 2
        for line in falls:
            print(f"FAIL  {line}", file=sys.stderr)
        if falls:
            return 1
    return 0


def fallen_below(result: FitResult, baseline_path: str) -> List[str]:
    """The combinations whose largest fitting value fell below a committed
    fit result's: one line each ("remat=none: batch 68 -> 64 (baseline)")."""
    try:
        with open(baseline_path, encoding="utf-8") as f:
            baseline = json.load(f)
        before = {json.dumps(p["choices"], sort_keys=True): p["largest"] for p in baseline["frontier"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise Error(f"{baseline_path}: error: not a `hlomem fit --format json` result ({e})") from None
    if baseline.get("setting") != result.setting:
        raise Error(f"{baseline_path}: error: it searched {baseline.get('setting')!r}, "
                    f"this run {result.setting!r}")
    out = []
    for point in result.frontier:
        label = ", ".join(f"{k}={v}" for k, v in point.choices.items()) or result.setting
        was = before.get(json.dumps(point.choices, sort_keys=True))
        if was is not None and (point.largest is None or point.largest < was):
            out.append(f"{label}: the largest {result.setting} that fits fell from {was} (baseline) "
                       f"to {point.largest}")
    return out
