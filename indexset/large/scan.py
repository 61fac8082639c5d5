"""Scan a transformer checkpoint: decide every MLP block, one layer at a time.

The checkpoint (a path, a cached Hugging Face model id, a state dict or an
``nn.Module``: :mod:`indexset.large.checkpoint`) is read one layer at a
time. Each layer becomes an :class:`~indexset.model.instance.Instance`
(float64 weights converted exactly from float32/float16/bfloat16, biases
included, identity skip) and is decided by
:func:`indexset.large.gram.gram_decide`. Gated layers (LLaMA) are decided
by theorem: against bias-free blocks from their shapes and biases alone
(the paper); against blocks with biases by Theorem C of MATH.md §8, which
reads the gate rows to check its hypotheses.

Each row names the layer by the checkpoint's own tensor names and carries
the certified distance interval of the Gram path and the index set S of
its upper bound (the best S found).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

import indexset.model.activations as activations
import indexset.theory.affine as affine
from indexset.budget import TIME_LIMIT, Budget
from indexset.classes import AFFINE, BIAS_FREE, check_class
from indexset.errors import InputError
from indexset.large.checkpoint import POST_LN, PRE_LN, Checkpoint, Layout, detect_layout, open_checkpoint
from indexset.large.gram import gram_decide
from indexset.model.instance import Instance
from indexset.text import ranges
from indexset.theory.theorems import theorem_verdict

MEANING = {
    POST_LN: (
        "post-LN block x ↦ LayerNorm(x + MLP(x)): the residual sum x + MLP(x) is exactly "
        "the paper's question, so the verdict is about this model's block"
    ),
    PRE_LN: (
        "pre-LN block x ↦ x + MLP(LN(x)): the verdict is about y ↦ y + MLP(y) on the "
        "normalised stream y = LN(x), not about the block as a map of x"
    ),
}

LAYER_MARGIN = 2
"""A layer starts under a time limit only with this many times the longest layer so far left:
layers of one model take the same work, but their times vary on a shared machine."""

CONFIG_KEYS = ("hidden_act", "activation_function", "hidden_activation")
"""Where Hugging Face configs name the MLP's activation."""


# ----------------------------------------------------------- the plan
@dataclass
class ScanPlan:
    """What will be scanned: layout, layers, activation and its meaning."""

    source: str
    model: str
    layout: Layout
    prefix: str
    layers: list
    activation: str
    activation_source: str
    norm: str
    notes: list = field(default_factory=list)

    @property
    def meaning(self) -> str:
        """What the verdict means for this norm placement."""
        return MEANING[self.norm]

    def modules(self, layer: int) -> dict[str, str]:
        """The checkpoint's module names of one layer by role (``gate``, ``up``, ``down``)."""
        return self.layout.modules(self.prefix, layer)


def resolve_activation(layout: Layout, config: dict, override: str | None, source: str) -> tuple[str, str]:
    """The indexset activation name and where it came from.

    Names are read through :mod:`indexset.model.activations`' one alias
    table, so configs' spellings (``gelu_new``, ``swish``, ...) work, and
    a gated layout takes the gated form (``silu`` → ``swiglu``).

    Raises
    ------
    InputError
        For an activation the registry does not know (parameter
        ``activation``, or the config file).
    """
    gated = layout.gate is not None
    if override is not None:
        return activations.for_block(override, gated, "activation").name, "override"
    for key in CONFIG_KEYS:
        raw = config.get(key)
        if isinstance(raw, str):
            try:
                name = activations.for_block(raw, gated, source).name
            except InputError:
                raise InputError(source, f"config {key} = {raw!r} is not supported; pass --activation NAME") from None
            return name, f"config {key} = {raw!r}"
    return activations.for_block(layout.default_activation, gated).name, f"{layout.name} default (no activation in the config)"


def _norm(layout: Layout, config: dict) -> tuple[str, list]:
    notes = []
    norm = layout.norm
    if layout.name == "opt" and config.get("do_layer_norm_before") is False:
        norm = POST_LN
        notes.append("config do_layer_norm_before = false: post-LN (as OPT-350m)")
    if layout.name == "gpt_neox" and config.get("use_parallel_residual", True):
        notes.append("parallel residual: x + attn(LN1(x)) + MLP(LN2(x)); the MLP part is judged as y ↦ y + MLP(y)")
    return norm, notes


def parse_layers(text: str, source: str = "layers") -> list[int]:
    """``"0,3,5-7"`` as ``[0, 3, 5, 6, 7]`` (sorted, without repeats).

    Raises
    ------
    InputError
        Anything but comma-separated numbers and ranges ``a-b`` with a ≤ b.
    """
    chosen = set()
    for part in str(text).split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        if not low.strip().isdigit() or (dash and not high.strip().isdigit()):
            raise InputError(source, f"{text!r} is not a list of layers such as 0,3,5-7")
        first, last = int(low), int(high) if dash else int(low)
        if last < first:
            raise InputError(source, f"range {part} runs backwards")
        chosen.update(range(first, last + 1))
    return sorted(chosen)


def _select(available: list[int], layers, source: str = "layers") -> list[int]:
    if layers is None:
        return available
    chosen = parse_layers(layers, source) if isinstance(layers, str) else sorted({_layer_number(i, source) for i in layers})
    missing = [i for i in chosen if i not in set(available)]
    if missing:
        raise InputError(source, f"layer {missing[0]} is not in the checkpoint (its layers: {ranges(available)})")
    if not chosen:
        raise InputError(source, "no layer chosen")
    return chosen


def _layer_number(value, source: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(source, f"layer numbers are integers, got {value!r}")
    return int(value)


def plan_scan(checkpoint: Checkpoint, activation: str | None = None, layers=None) -> ScanPlan:
    """Recognise the layout of an open checkpoint and list the layers to scan.

    Raises
    ------
    InputError
        No recognised layout, an unknown activation, or layers the
        checkpoint does not have.
    """
    config = checkpoint.config
    layout, prefix, available = detect_layout(checkpoint.names(), checkpoint.label)
    name, origin = resolve_activation(layout, config, activation, checkpoint.config_source)
    norm, notes = _norm(layout, config)
    chosen = _select(available, layers)
    return ScanPlan(checkpoint.label, checkpoint.model, layout, prefix, chosen, name, origin, norm, notes)


# ----------------------------------------------------------- one layer
def _tensor(checkpoint: Checkpoint, name: str, required: bool = True) -> np.ndarray | None:
    if name not in checkpoint:
        if required:
            raise InputError(checkpoint.label, f"tensor {name} is missing")
        return None
    return checkpoint.array(name)


def layer_instance(checkpoint: Checkpoint, plan: ScanPlan, layer: int) -> Instance:
    """The MLP block of one layer as an Instance (float64, identity skip; gated layouts with ``W_gate``).

    Raises
    ------
    InputError
        Missing tensors, shapes that do not form one block, a nonzero gate bias.
    """
    modules = plan.modules(layer)
    W_up = _tensor(checkpoint, modules["up"] + ".weight")
    W_down = _tensor(checkpoint, modules["down"] + ".weight")
    if plan.layout.transposed:
        W_up, W_down = np.ascontiguousarray(W_up.T), np.ascontiguousarray(W_down.T)
    if W_up.ndim != 2 or W_down.ndim != 2 or W_down.shape != W_up.shape[::-1]:
        raise InputError(checkpoint.label, f"layer {layer}: up weight {W_up.shape} and down weight {W_down.shape} do not form an (n, d) / (d, n) pair")
    W_gate = None
    if "gate" in modules:
        W_gate = _tensor(checkpoint, modules["gate"] + ".weight")
        if W_gate.shape != W_up.shape:
            raise InputError(checkpoint.label, f"layer {layer}: gate {W_gate.shape}, up {W_up.shape} and down {W_down.shape} weights do not fit one block")
        gate_bias = _tensor(checkpoint, modules["gate"] + ".bias", required=False)
        if gate_bias is not None and np.any(gate_bias != 0):
            raise InputError(checkpoint.label, f"layer {layer}: a bias on the gate projection is not supported")
    b_up = _tensor(checkpoint, modules["up"] + ".bias", required=False)
    b_down = _tensor(checkpoint, modules["down"] + ".bias", required=False)
    source = f"{plan.source}:layer {layer}"
    return Instance(W_up, W_down, b_up=b_up, b_down=b_down, W_gate=W_gate, activation=plan.activation, source=source)


def _shape(checkpoint: Checkpoint, plan: ScanPlan, layer: int) -> tuple[int, int]:
    """(d, n) of a layer from its up weight's shape alone."""
    name = plan.modules(layer)["up"] + ".weight"
    if name not in checkpoint:
        raise InputError(checkpoint.label, f"tensor {name} is missing")
    shape = checkpoint.shape(name)
    if len(shape) != 2:
        raise InputError(checkpoint.label, f"tensor {name} has shape {shape}, expected 2 dimensions")
    n, d = shape[::-1] if plan.layout.transposed else shape
    return d, n


def _gated_result(checkpoint: Checkpoint, plan: ScanPlan, layer: int, target_class: str, time_limit: float | None):
    """Verdict of a gated layer: by the paper's theorem from shapes and biases, or by Theorem C (MATH.md §8)."""
    modules = plan.modules(layer)
    for name in modules.values():
        if name + ".weight" not in checkpoint:
            raise InputError(checkpoint.label, f"tensor {name}.weight is missing")
    biased = any(
        name + ".bias" in checkpoint and np.any(checkpoint.array(name + ".bias") != 0)
        for name in (modules["gate"], modules["up"])
    )
    if target_class == BIAS_FREE and not biased:
        return theorem_verdict(activations.get(plan.activation), False, None, BIAS_FREE)
    return affine.decide(layer_instance(checkpoint, plan, layer), target_class, budget=Budget.of(time_limit))


def layer_name(modules: Iterable[str]) -> str:
    """The module names of one layer in one string: ``bert.encoder.layer.0.{intermediate,output}.dense``.

    The common prefix and suffix are cut at ``.`` or ``_`` so that no
    name is split inside a word.
    """
    names = list(modules)
    if len(names) < 2:
        return names[0] if names else ""
    shortest = min(map(len, names))
    start = 0
    for k in range(shortest):
        if len({name[k] for name in names}) > 1:
            break
        if names[0][k] in "._":
            start = k + 1
    stop = 0
    for k in range(1, shortest - start + 1):
        if len({name[-k] for name in names}) > 1:
            break
        if names[0][-k] in "._":
            stop = k
    middles = [name[start:len(name) - stop] for name in names]
    return f"{names[0][:start]}{{{','.join(middles)}}}{names[0][len(names[0]) - stop:]}"


def _row(plan: ScanPlan, layer: int, d: int, n: int, target_class: str) -> dict:
    modules = plan.modules(layer)
    return {
        "layer": layer,
        "name": layer_name(modules.values()),
        "tensors": modules,
        "d": d,
        "n": n,
        "activation": plan.activation,
        "class": target_class,
    }


def scan_layer(checkpoint: Checkpoint, plan: ScanPlan, layer: int, tol=None, target_class: str = AFFINE, time_limit: float | None = None) -> dict:
    """Decide one layer against ``target_class``; return its row for the report.

    The row holds the layer's tensor names (``name``, ``tensors`` by
    role), ``d``, ``n``, the verdict, the certified distance interval of
    the Gram path (absolute and relative to ‖A‖_F; None for layers decided
    by theorem), the index set ``best_set`` of its upper bound and its size.
    """
    start = time.perf_counter()
    if plan.layout.gate is not None:
        d, n = _shape(checkpoint, plan, layer)
        result = _gated_result(checkpoint, plan, layer, target_class, time_limit)
    else:
        instance = layer_instance(checkpoint, plan, layer)
        d, n = instance.d, instance.n
        result = gram_decide(instance, tol=tol, target_class=target_class)
    certificate = result.certificate or {}
    best = certificate.get("rounded_set", result.index_set)
    row = _row(plan, layer, d, n, target_class)
    row.update(
        status=result.status,
        reason=result.reason,
        distance_lower=certificate.get("distance_lower"),
        distance_upper=certificate.get("distance_upper"),
        relative_lower=certificate.get("relative_lower"),
        relative_upper=certificate.get("relative_upper"),
        best_set=None if best is None else [int(i) for i in best],
        best_set_size=None if best is None else len(best),
        extension=bool(result.extension),
        argument=certificate.get("argument"),
        halted=result.halted,
        time_s=round(time.perf_counter() - start, 6),
    )
    return row


def _skipped_row(checkpoint: Checkpoint, plan: ScanPlan, layer: int, target_class: str, why: str) -> dict:
    d, n = _shape(checkpoint, plan, layer)
    row = _row(plan, layer, d, n, target_class)
    row.update(
        status="unknown", reason=f"not scanned: {why}", distance_lower=None, distance_upper=None,
        relative_lower=None, relative_upper=None, best_set=None, best_set_size=None, extension=False, argument=None, halted=TIME_LIMIT, time_s=0.0,
    )
    return row


# ----------------------------------------------------------- the report
@dataclass
class ScanReport:
    """Per-layer verdicts of one checkpoint."""

    model: str
    layout: str
    norm: str
    meaning: str
    activation: str
    activation_source: str
    layers: list
    notes: list = field(default_factory=list)
    tol: str | None = None
    target_class: str = AFFINE
    source: str = ""

    @property
    def exit_code(self) -> int:
        """0: every layer absorbable; 1: every layer decided, one not; 3: otherwise."""
        statuses = {row["status"] for row in self.layers}
        if statuses == {"absorbable"}:
            return 0
        if "unknown" not in statuses:
            return 1
        return 3

    def to_json(self) -> dict:
        """The ``--json`` payload."""
        return {
            "model": self.model,
            "source": self.source,
            "layout": self.layout,
            "norm": self.norm,
            "meaning": self.meaning,
            "activation": self.activation,
            "activation_source": self.activation_source,
            "notes": self.notes,
            "tol": self.tol,
            "class": self.target_class,
            "layers": self.layers,
        }


def iter_scan(checkpoint: Checkpoint, plan: ScanPlan, tol=None, target_class: str = AFFINE, deadline: float | None = None) -> Iterator[dict]:
    """Rows of every planned layer in order, one layer in memory at a time.

    With a ``deadline`` (``time.perf_counter()`` value), a layer starts only
    while the time left exceeds :data:`LAYER_MARGIN` times the longest layer
    so far; the rest are ``unknown`` rows saying so. A layer in progress is
    never interrupted (the Gram path is one dense factorisation).
    """
    longest = 0.0
    for layer in plan.layers:
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and (left <= 0 or LAYER_MARGIN * longest > left):
            why = "the time limit ran out before this layer" if left <= 0 else (
                f"{left:.2g} s of the time limit left, less than {LAYER_MARGIN} × the longest layer so far ({longest:.2g} s)"
            )
            yield _skipped_row(checkpoint, plan, layer, target_class, why)
            continue
        start = time.perf_counter()
        yield scan_layer(checkpoint, plan, layer, tol, target_class, left)
        longest = max(longest, time.perf_counter() - start)


def scan(source, activation: str | None = None, tol=None, progress: Callable | None = None, target_class: str = AFFINE, *,
         layers=None, time_limit: float | None = None, config: dict | None = None, cache_dir=None) -> ScanReport:
    """Decide the MLP block of every layer of a checkpoint.

    Parameters
    ----------
    source : str, PathLike, Mapping or nn.Module
        A ``.safetensors`` file, a sharded index, a checkpoint folder, a
        model id in the local Hugging Face cache, a state dict, or a model
        (its ``state_dict()`` and ``config``).
    activation : str, optional
        Override the activation (an indexset or Hugging Face name).
    tol : Fraction, str or float, optional
        Tolerance τ on the largest residual entry (see :func:`gram_decide`).
    progress : callable, optional
        ``progress(done, total, row)``, called with ``row=None`` before the
        first layer and then after every layer.
    target_class : {"affine", "bias-free"}
        Which residual-free blocks count (:mod:`indexset.classes`).
    layers : str or iterable of int, optional
        The layers to scan (``"0,3,5-7"``); default every layer.
    time_limit : float, optional
        Seconds for the whole scan; layers that do not fit are ``unknown``.
    config : dict, optional
        The model's config, over ``config.json`` or ``model.config`` key by key.
    cache_dir : str or PathLike, optional
        The Hugging Face cache for model ids (default: huggingface_hub's).

    Returns
    -------
    ScanReport

    Raises
    ------
    InputError
        Bad path, pickle checkpoint, unrecognised layout, unsupported
        dtype or activation, inconsistent shapes, unknown layers, a time
        limit that is not a positive number.
    """
    start = time.perf_counter()
    target_class = check_class(target_class)
    if time_limit is not None and not (isinstance(time_limit, (int, float)) and 0 < time_limit < float("inf")):
        raise InputError("time_limit", f"must be a positive number of seconds, got {time_limit!r}")
    deadline = None if time_limit is None else start + time_limit
    with open_checkpoint(source, config=config, cache_dir=cache_dir) as checkpoint:
        plan = plan_scan(checkpoint, activation, layers)
        total = len(plan.layers)
        if progress:
            progress(0, total, None)
        rows = []
        for row in iter_scan(checkpoint, plan, tol, target_class, deadline):
            rows.append(row)
            if progress:
                progress(len(rows), total, row)
    return ScanReport(
        plan.model, plan.layout.name, plan.norm, plan.meaning, plan.activation, plan.activation_source, rows,
        plan.notes, None if tol is None else str(tol), target_class, plan.source,
    )


def extract_layer(source, layer: int, activation: str | None = None, *, config: dict | None = None, cache_dir=None) -> Instance:
    """One layer of a checkpoint as an instance, to save (:meth:`Instance.save`), solve or construct from.

    Parameters
    ----------
    source, activation, config, cache_dir
        As for :func:`scan`.
    layer : int
        The layer number.

    Returns
    -------
    Instance
        The block with float64 weights equal to the tensors, identity
        skip; metadata ``checkpoint`` (JSON: model, source, layer, layout,
        norm, tensor names, where the activation came from).

    Raises
    ------
    InputError
        As for :func:`scan`; a layer the checkpoint does not have (parameter ``layer``).
    """
    with open_checkpoint(source, config=config, cache_dir=cache_dir) as checkpoint:
        plan = plan_scan(checkpoint, activation)
        chosen = _select(plan.layers, [layer], "layer")[0]
        instance = layer_instance(checkpoint, plan, chosen)
    instance.metadata["checkpoint"] = {
        "model": plan.model, "source": plan.source, "layer": chosen, "layout": plan.layout.name, "norm": plan.norm,
        "tensors": plan.modules(chosen), "activation_source": plan.activation_source,
    }
    return instance
