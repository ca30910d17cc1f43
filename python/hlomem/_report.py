"""The typed report: the JSON contract of `hlomem report --format json`
(lib/report/report.schema.json) as Python objects. Field names are the
JSON keys; nothing here computes what the engine did not."""
from __future__ import annotations

import dataclasses
import functools
import html
import json
import os
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _core

Bytes = Union[int, str]  # 80 * 2**30, or "80GiB", "1.5e9"


# Bad input: HLO that does not parse, an unknown target, a bad size. A
# ValueError; the message reads "path:line:col: error: ..." where it can.
Error = _core.Error


class CheckFailed(AssertionError):
    """A budget, baseline or detector gate of Report.check() failed.

    `violations` lists what failed, each with the buffers and source lines
    that contribute most; str() is the same text `hlomem check` prints."""

    def __init__(self, message: str, violations: List["Violation"], result: "CheckResult"):
        super().__init__(message)
        self.violations = violations
        self.result = result


@dataclasses.dataclass(frozen=True)
class Source:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


def _source(obj: Optional[Dict[str, Any]]) -> Optional[Source]:
    if not obj or not obj.get("file"):
        return None
    return Source(obj["file"], int(obj.get("line") or 0))


@dataclasses.dataclass(frozen=True)
class Numbers:
    """A module's totals, hlomem's or XLA's (the same fields as
    compiled.memory_analysis() plus the total of all allocations)."""
    total_bytes: int
    argument_bytes: int
    output_bytes: int
    alias_bytes: int
    temp_bytes: int
    constant_bytes: int = 0
    thread_local_bytes: int = 0
    host_argument_bytes: int = 0
    host_output_bytes: int = 0
    host_alias_bytes: int = 0
    host_temp_bytes: int = 0
    peak_live_bytes: Optional[int] = None
    fragmentation_bytes: Optional[int] = None
    peak_memory_bytes: Optional[int] = None
    exact: Optional[bool] = None
    estimate_reason: Optional[str] = None

    @classmethod
    def from_json(cls, obj: Optional[Dict[str, Any]]) -> Optional["Numbers"]:
        if obj is None:
            return None
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in obj.items() if k in names})


@dataclasses.dataclass(frozen=True)
class Buffer:
    """One logical buffer: what holds it, how big, when it is live, and the
    source line that made it."""
    instruction: str
    shape_index: List[int]
    opcode: str
    shape: str
    bytes: int
    kind: str  # "parameter", "output", "temp", "constant", ...
    allocation: int
    memory_space: str
    offset: int
    start: int  # live range, in schedule steps; -1 when never live
    end: int
    op_name: str
    op_type: str
    source: Optional[Source]  # the user's innermost frame (library frames skipped)
    stack_frame: int = 0  # its Python stack: an id into Module.stack_frames, 0 if none

    @property
    def label(self) -> str:
        return self.op_name or self.instruction

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "Buffer":
        live = obj.get("live_range") or {}
        return cls(obj["instruction"], list(obj.get("shape_index") or []), obj.get("opcode", ""),
                   obj.get("shape", ""), int(obj["bytes"]), obj.get("kind", ""),
                   int(obj.get("allocation", -1)), obj.get("memory_space", ""),
                   int(obj.get("offset", -1)), int(live.get("start", -1)), int(live.get("end", -1)),
                   obj.get("op_name", ""), obj.get("op_type", ""), _source(obj.get("source")),
                   int(obj.get("stack_frame") or 0))


@dataclasses.dataclass(frozen=True)
class StackFrame:
    """One frame of a Python stack, as XLA's StackFrames tables give it."""
    file: str
    function: str
    line: int
    parent: int  # the caller's frame id, 0 at the root
    library: bool  # jax, flax, optax, site-packages: not the user's code

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.function}"


@dataclasses.dataclass(frozen=True)
class MemorySpace:
    """One memory space (allocation colour): HBM, VMEM, SMEM, host..."""
    color: int
    name: str
    is_device: bool
    is_host: bool
    computed_bytes: Optional[int]
    xla_bytes: Optional[int]

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "MemorySpace":
        return cls(int(obj["color"]), obj.get("name", ""), bool(obj.get("is_device")),
                   bool(obj.get("is_host")), obj.get("computed_bytes"), obj.get("xla_bytes"))


@dataclasses.dataclass(frozen=True)
class Finding:
    """Waste a detector found, with the bytes at stake and a fix to try."""
    detector: str
    severity: str
    bytes: int
    message: str
    suggestion: str
    instructions: List[str]
    source: Optional[Source]
    op_name: str
    summary: str = ""  # one line, the bytes first; `message` has the details

    @classmethod
    def from_json(cls, obj: Dict[str, Any]) -> "Finding":
        return cls(obj["detector"], obj.get("severity", ""), int(obj.get("bytes", 0)),
                   obj.get("message", ""), obj.get("suggestion", ""),
                   list(obj.get("instructions") or []), _source(obj.get("source")),
                   obj.get("op_name", ""), obj.get("summary", ""))


@dataclasses.dataclass(frozen=True)
class Rollup:
    """Bytes live at the peak under one source line or op_name."""
    key: str
    bytes: int
    buffers: int


@dataclasses.dataclass(frozen=True)
class PeakInstruction:
    """The instruction the schedule runs when memory is highest."""
    instruction: str
    opcode: str
    op_name: str
    source: Optional[Source]

    @classmethod
    def from_json(cls, obj: Optional[Dict[str, Any]]) -> Optional["PeakInstruction"]:
        if not obj:
            return None
        return cls(obj.get("instruction", ""), obj.get("opcode", ""), obj.get("op_name", ""),
                   _source(obj.get("source")))


@dataclasses.dataclass(frozen=True)
class Module:
    """The report of one HLO module (one compiled program)."""
    name: str
    files: List[str]
    backend: str
    target: str
    stage: str
    scheduled: bool
    computed: Optional[Numbers]
    xla: Optional[Numbers]
    memory_spaces: List[MemorySpace]
    mismatches: List[Dict[str, Any]]
    peak_step: Optional[int]
    schedule_length: int
    findings: List[Finding]
    warnings: List[str]
    target_device: Optional[Dict[str, Any]]
    device_fit: Optional[Dict[str, Any]]
    oom_error: Optional[Dict[str, Any]]
    peak_instruction: Optional[PeakInstruction] = None
    # The module's full JSON object, read on first use of the per-buffer
    # parts below: a 64 MB module has hundreds of thousands of buffers, and
    # a budget check or a total needs none of them.
    _details: Any = dataclasses.field(default=None, repr=False, compare=False)

    @functools.cached_property
    def buffers(self) -> List[Buffer]:
        return [Buffer.from_json(b) for b in self._details().get("buffers") or []]

    @functools.cached_property
    def live_at_peak(self) -> List[int]:
        """Indices into buffers of those live at the peak, largest first."""
        return list(self._details().get("live_at_peak") or [])

    @functools.cached_property
    def timeline(self) -> List[int]:
        """Bytes live at each schedule step."""
        return list(self._details().get("timeline") or [])

    @functools.cached_property
    def stack_frames(self) -> List[StackFrame]:
        return [StackFrame(f.get("file", ""), f.get("function", ""), int(f.get("line") or 0),
                           int(f.get("parent") or 0), bool(f.get("library")))
                for f in self._details().get("stack_frames") or []]

    def stack_of(self, buffer: Buffer) -> List[StackFrame]:
        """The buffer's Python stack, innermost frame first."""
        stack, frame = [], buffer.stack_frame
        while 0 < frame <= len(self.stack_frames):
            stack.append(self.stack_frames[frame - 1])
            parent = self.stack_frames[frame - 1].parent
            frame = parent if parent < frame else 0
        return stack

    @classmethod
    def from_json(cls, obj: Dict[str, Any], details: Any = None) -> "Module":
        """`obj` may lack the per-buffer parts; `details()` then returns the
        full object (by default, `obj` itself)."""
        return cls(obj["name"], list(obj.get("files") or []), obj.get("backend", ""),
                   obj.get("target", ""), obj.get("stage", ""), bool(obj.get("scheduled")),
                   Numbers.from_json(obj.get("computed")), Numbers.from_json(obj.get("xla")),
                   [MemorySpace.from_json(s) for s in obj.get("memory_spaces") or []],
                   list(obj.get("mismatches") or []), obj.get("peak_step"),
                   int(obj.get("schedule_length") or 0),
                   [Finding.from_json(f) for f in obj.get("findings") or []],
                   list(obj.get("warnings") or []), obj.get("target_device"),
                   obj.get("device_fit"), obj.get("oom_error"),
                   PeakInstruction.from_json(obj.get("peak_instruction")),
                   details if details is not None else (lambda: obj))

    # The figures XLA's own buffer assignment gives when the dump has it,
    # else hlomem's: the same choice `hlomem check` makes.
    @property
    def numbers(self) -> Numbers:
        numbers = self.xla or self.computed
        if numbers is None:
            raise Error(f"module {self.name} has no numbers (no HLO and no buffer assignment)")
        return numbers

    @property
    def total_bytes(self) -> int:
        return self.numbers.total_bytes

    @property
    def temp_bytes(self) -> int:
        return self.numbers.temp_bytes

    @property
    def argument_bytes(self) -> int:
        return self.numbers.argument_bytes

    @property
    def output_bytes(self) -> int:
        return self.numbers.output_bytes

    @property
    def alias_bytes(self) -> int:
        return self.numbers.alias_bytes

    @property
    def peak_bytes(self) -> Optional[int]:
        """Bytes live at the peak of the schedule (hlomem's simulation)."""
        return self.computed.peak_live_bytes if self.computed else None

    @property
    def exact(self) -> bool:
        """Whether hlomem's numbers reproduce XLA's byte for byte."""
        return bool(self.computed and self.computed.exact)

    def peak_buffers(self, top: Optional[int] = None) -> List[Buffer]:
        """The buffers live at the peak, largest first."""
        rows = sorted((self.buffers[i] for i in self.live_at_peak), key=lambda b: -b.bytes)
        return rows if top is None else rows[:top]

    def _rollup(self, key_of) -> List[Rollup]:
        sums: Dict[str, List[int]] = {}
        for b in self.peak_buffers():
            entry = sums.setdefault(key_of(b), [0, 0])
            entry[0] += b.bytes
            entry[1] += 1
        rows = [Rollup(k, v[0], v[1]) for k, v in sums.items()]
        return sorted(rows, key=lambda r: (-r.bytes, r.key))

    @property
    def by_line(self) -> List[Rollup]:
        """Bytes live at the peak per source line ("file:line"), largest first."""
        return self._rollup(lambda b: str(b.source) if b.source else "")

    @property
    def by_op(self) -> List[Rollup]:
        """Bytes live at the peak per op_name, largest first."""
        return self._rollup(lambda b: b.op_name)


@dataclasses.dataclass(frozen=True)
class Violation:
    """One failed gate of a check, as `hlomem check` reports it."""
    module: str
    rule: str  # "max-total", "max-temp", "baseline-total", "device-fit", a detector...
    value: int
    limit: int
    message: str
    contributors: List[Dict[str, Any]]
    source: Optional[Source]


@dataclasses.dataclass
class CheckResult:
    passed: bool
    violations: List[Violation]
    passes: List[str]
    notes: List[str]
    text: str  # what `hlomem check` prints
    markdown: str  # the job summary `hlomem check --github` writes
    _handle: Any = dataclasses.field(repr=False, default=None)

    def github_annotations(self, source_root: str = "") -> str:
        """`::error file=...,line=...::` workflow commands, one per violation."""
        return self._handle.github_annotations(source_root)

    def sarif(self, source_root: str = "") -> str:
        """SARIF 2.1.0 for GitHub code scanning."""
        from . import __version__
        return self._handle.sarif(source_root, __version__)


def parse_bytes(value: Optional[Bytes], what: str) -> Optional[int]:
    """80 * 2**30, "80GiB", "1.5e9" -> bytes, read as the CLI reads sizes."""
    if value is None or isinstance(value, int):
        return value
    try:
        return _core.parse_bytes(str(value))
    except Error as e:
        raise Error(f"{what}: {e}") from None


def parse_percent(value: Union[float, str], what: str) -> float:
    """5, 2.5, "5%", "5 %" -> percent, read as the CLI reads percentages."""
    bad = Error(f"{what}: expected a percentage such as 5 or 5%, not {value!r}")
    if isinstance(value, bool):
        raise bad
    if not isinstance(value, (int, float, str)):
        try:
            value = float(value)  # numpy scalars, Decimal, Fraction
        except (TypeError, ValueError):
            raise bad from None
    try:
        return _core.parse_percent(str(value))
    except Error as e:
        raise Error(f"{what}: {e}") from None


def _fail_on_names(fail_on: Union[str, Sequence[str], None]) -> List[str]:
    """fail_on as a list: one name ("missed-donation") or a sequence of them.
    The names themselves are checked against the C++ registry by the check."""
    if fail_on is None:
        return []
    if isinstance(fail_on, str):
        return [fail_on]
    names = list(fail_on)
    for name in names:
        if not isinstance(name, str):
            raise Error(f"fail_on: expected detector names, not {name!r}")
    return names


class Report:
    """What hlomem found in one or more compiled modules.

    `modules` holds one Module per HLO module; the attributes of the Report
    itself (total_bytes, temp_bytes, buffers, findings...) are those of its
    main module: the one with the most bytes."""

    def __init__(self, handle: "_core.ReportHandle", memory_analysis: Optional[Dict[str, int]] = None):
        self._handle = handle
        self._json: Optional[str] = None
        self._data: Optional[Dict[str, Any]] = None
        self._summary: Optional[Dict[str, Any]] = None  # the JSON without buffers
        self._modules: Optional[List[Module]] = None
        # XLA's compiled.memory_analysis() when the report was made from a
        # jax.stages.Compiled, to compare with.
        self.memory_analysis = memory_analysis

    # --- the JSON contract ---------------------------------------------
    def to_json(self, indent: Optional[int] = 2) -> str:
        """`hlomem report --format json`: the versioned contract."""
        if indent == 2:
            if self._json is None:
                self._json = self._handle.write("json")
            return self._json
        data = self.to_dict()
        return json.dumps(data, indent=indent)

    def to_dict(self) -> Dict[str, Any]:
        if self._data is None:
            self._data = json.loads(self.to_json())
        return self._data

    def _summary_dict(self) -> Dict[str, Any]:
        # The summary without buffers and timelines first; the full JSON
        # only when a module's buffers are asked for.
        if self._summary is None:
            self._summary = json.loads(self._handle.write("json", buffers=False, timeline=False))
        return self._summary

    @property
    def schema_version(self) -> int:
        return int(self._summary_dict()["schema_version"])

    @property
    def warnings(self) -> List[str]:
        return list(self._summary_dict().get("warnings") or [])

    @property
    def modules(self) -> List[Module]:
        if self._modules is None:
            self._modules = [Module.from_json(m, details=lambda k=k: self.to_dict()["modules"][k])
                             for k, m in enumerate(self._summary_dict()["modules"])]
        return self._modules

    @property
    def module(self) -> Module:
        """The main module: the one with the most bytes (first on a tie)."""
        mods = self.modules
        best = mods[0]
        for m in mods[1:]:
            if _size(m) > _size(best):
                best = m
        return best

    # --- rendering -------------------------------------------------------
    def write(self, format: str = "text", top: int = 10, width: int = 100,
              all: bool = False) -> str:
        """The report in a CLI format: text, json, markdown, csv or html.

        The text shows the modules largest first, as the CLI does, with the
        small helper modules JAX compiles around a step (jit__normal,
        jit_true_divide, ...) summarized on one line; ``all=True`` shows
        every module in full."""
        return self._handle.write(format, top, width, all_modules=all)

    def __str__(self) -> str:
        return self.write("text")

    def __repr__(self) -> str:
        m = self.module
        extra = f", {len(self.modules)} modules" if len(self.modules) > 1 else ""
        return (f"<hlomem.Report {m.name} [{m.target}]: total {_human(m.total_bytes)}, "
                f"temp {_human(m.temp_bytes)}{extra}>")

    def _repr_html_(self) -> str:
        return _inline_html(self.write("html"))

    def save(self, path: Union[str, os.PathLike], format: Optional[str] = None) -> None:
        """Writes the report atomically; the format follows the extension
        (.json, .html, .md, .csv, else text) unless given."""
        path = os.fspath(path)
        if format is None:
            ext = os.path.splitext(path)[1].lower()
            format = {".json": "json", ".html": "html", ".md": "markdown", ".csv": "csv"}.get(ext, "text")
        write_atomically(path, self.to_json() if format == "json" else self.write(format))

    # --- comparison and gates ---------------------------------------------
    def diff(self, other: "Report", top: int = 10) -> "Diff":
        """What changed from this report (A) to `other` (B)."""
        return Diff(self, other, top)

    def check(self, *, max_total: Optional[Bytes] = None, max_temp: Optional[Bytes] = None,
              max_peak: Optional[Bytes] = None, baseline: Union["Report", str, os.PathLike, None] = None,
              tolerance: Union[float, str, None] = None,
              fail_on: Union[str, Sequence[str], None] = (), raise_on_failure: bool = True,
              allow_new: bool = False) -> CheckResult:
        """The CI gate of `hlomem check`. Raises CheckFailed, naming the
        over-budget buffers and source lines, unless raise_on_failure=False.

        tolerance: growth over `baseline` allowed, in percent: 2, 2.5, "5%";
        only with a baseline. fail_on: a detector's name ("missed-donation"),
        a sequence of them, or "all" (`hlomem detectors` lists them); an
        unknown name raises Error. Modules pair with the baseline's by name
        and program; one without a counterpart raises Error unless
        allow_new=True, which checks the others and notes it."""
        percent = parse_percent(tolerance, "tolerance") if tolerance is not None else None
        names = _fail_on_names(fail_on)
        base = read_report(baseline) if isinstance(baseline, (str, os.PathLike)) else baseline
        if percent is not None and base is None:
            raise Error("tolerance applies to growth over a baseline, and no baseline is given")
        if not any(x is not None for x in (max_total, max_temp, max_peak, base)) and not names:
            raise Error("check needs a gate: max_total, max_temp, max_peak, baseline or fail_on")
        handle = _core.check(self._handle, parse_bytes(max_total, "max_total"),
                             parse_bytes(max_temp, "max_temp"), parse_bytes(max_peak, "max_peak"),
                             base._handle if base is not None else None, percent or 0.0, names,
                             allow_new)
        violations = [Violation(v["module"], v["rule"], v["value"], v["limit"], v["message"],
                                v["contributors"],
                                Source(v["source_file"], v["source_line"]) if v["source_file"] else None)
                      for v in handle.violations]
        result = CheckResult(handle.passed, violations, list(handle.passes), list(handle.notes),
                             handle.text(), handle.markdown(), handle)
        if not result.passed and raise_on_failure:
            message = result.text
            if base is not None:
                where = f" {os.fspath(baseline)}" if isinstance(baseline, (str, os.PathLike)) else ""
                message += "\n" + Diff(base, self, top=5,
                                       labels=(f"the baseline{where}", "this run")).text
            raise CheckFailed(message, violations, result)
        return result


# The Report's own attributes are its main module's.
_MODULE_ATTRIBUTES = ("name", "target", "backend", "computed", "xla", "numbers", "memory_spaces",
                      "buffers", "live_at_peak", "timeline", "findings", "device_fit", "oom_error", "peak_instruction", "stack_frames", "stack_of",
                      "total_bytes", "temp_bytes", "argument_bytes", "output_bytes", "alias_bytes",
                      "peak_bytes", "exact", "by_line", "by_op", "peak_buffers")
for _name in _MODULE_ATTRIBUTES:
    setattr(Report, _name, property(lambda self, _n=_name: getattr(self.module, _n),
                                    doc=f"The main module's {_name} (see Module)."))


class Diff:
    """What changed between two reports; str() is `hlomem diff`'s text."""

    def __init__(self, a: Report, b: Report, top: int = 10,
                 labels: Optional[Tuple[str, str]] = None):
        """labels: what to call A and B ("baseline", "current") instead of
        their files, which for a compiled program say nothing."""
        self.a, self.b, self._top = a, b, top
        self._labels = labels or ("", "")
        self.text = self.write("text")

    def write(self, format: str = "text") -> str:
        return _core.diff(self.a._handle, self.b._handle, format, self._top, *self._labels)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.write("json"))

    def __str__(self) -> str:
        return self.text

    def _repr_html_(self) -> str:
        return _inline_html(self.write("html"))


def _inline_html(page: str) -> str:
    """A notebook cell's HTML: the self-contained report page in an iframe,
    so that its script runs and its styles stay inside it (Jupyter, VS Code
    and Colab all insert cell HTML into their own page)."""
    return ('<iframe srcdoc="' + html.escape(page, quote=True) +
            f'" style="width:100%;height:{_page_height(page)}px;border:1px solid #ddd" '
            'sandbox="allow-scripts allow-same-origin" '
            # Fits the content where the notebook runs handlers; the height
            # estimated from the sections stands where it does not.
            'onload="try{this.style.height=(this.contentDocument.documentElement.scrollHeight+24)'
            '+\'px\'}catch(e){}"></iframe>')


def _page_height(page: str) -> int:
    """A generous height for the report page, in pixels, from what it
    holds: table rows, findings, headings and each module's two charts (the
    lifetimes chart has up to 40 bars)."""
    modules = page.count("class=timeline")
    return (80 + 26 * page.count("<tr") + 90 * page.count("<li") + 44 * page.count("<h3")
            + 56 * page.count("<h2") + modules * (380 + 40 * 14 + 110))


def _size(m: Module) -> int:
    try:
        return m.total_bytes
    except Error:
        return -1


def _human(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.2f}{unit}"
    return f"{n}B"


def read_report(path: Union[str, os.PathLike]) -> Report:
    """A report saved with Report.save(...json) or `hlomem report --format json`."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return Report(_core.read_json(text, path))


def write_atomically(path: str, text: str) -> None:
    """Writes `text` to `path` through a temp file and a rename, so a reader
    never sees half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".hlomem-", dir=directory)
    try:
        os.fchmod(fd, 0o644)  # as the CLI writes (mkstemp makes 0600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
