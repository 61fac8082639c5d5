"""Searching for residual-free stacks that equal a residual stack as a whole (MATH.md §9).

``explore(stack)`` answers about the ``affine`` class (biases allowed in g),
``explore(stack, target_class="bias-free")`` about blocks with no bias
inside σ:

1. block by block (:func:`indexset.solver.solve`): if every block absorbs,
   the stack of their witnesses is the answer, and the exact region
   enumeration (:func:`indexset.exact.pwl.compare`) confirms it;
2. on R (d = 1, ReLU, L ≥ 2) the decision of MATH.md §9.5
   (:mod:`indexset.theory.line_stacks`): a witness stack, checked by the
   exact region enumeration, or ``not_absorbable`` by Theorem 9.6 (the
   composite strictly monotone), Theorem 9.12 (two blocks) or Corollary 9.8
   (width one); on R^d, for
   stacks of blocks (φ_l(x_1), x_2, …, x_d), a lifted witness of the line
   (Proposition 9.10), checked the same way;
3. the necessary conditions of MATH.md §9.2-9.3 (:mod:`indexset.theory.deep`):
   ``not_absorbable`` only when one of its theorems applies;
4. seeded numerical fitting of residual-free stacks of the same widths
   from many starts (the block-wise pieces among them), plain Adam on
   sample points in float64; the best fits are turned into small rationals
   (per-unit scaling, ``Fraction.limit_denominator``, and an exact least
   squares refit of the last projection) and checked exactly. Only an
   exactly equal stack is a witness;
5. otherwise ``unknown``, with the best relative error found.

In the bias-free class, step 1 solves each block in that class, step 2 on R
is Theorem 9.15 (a strictly monotone composite, or two blocks), steps 2-3 carry every
affine-class ``not_absorbable`` over (a bias-free block is an affine one),
and step 4 fits with every bias inside σ held at zero.

Floats only propose: no answer rests on them.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np

from indexset.budget import Budget
from indexset.classes import AFFINE, BIAS_FREE, check_class
from indexset.errors import InputError
from indexset.exact import pwl
from indexset.exact.witness import block_instance, encode_block, witness_stack
from indexset.model.forward import forward_exact, forward_float, random_points
from indexset.model.instance import Instance, exact_value
from indexset.model.stack import Stack
from indexset.result import ABSORBABLE, NOT_ABSORBABLE, UNKNOWN, Result, theorem_certificate
from indexset.theory import deep, line_bias_free, line_stacks

DENOMINATORS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64)
"""Largest denominators tried when a fitted stack is rounded to rationals."""

EXACT_ENOUGH = 1e-24
"""A start this close in float64 is as good as it gets: fitting stops."""

PROMISING = 1e-6
"""Fits with a relative mean squared error below this are rounded and checked exactly."""


@dataclass
class Fit:
    """One fitted residual-free stack (float64).

    Attributes
    ----------
    start : str
        Where it started (``blockwise``, ``blockwise+noise``, ``random``).
    loss : float
        Relative mean squared error on the sample points:
        mean ‖G(x) − F(x)‖² / mean ‖F(x) − mean F‖².
    layers : list of dict
        ``W_up`` (n, d), ``b_up`` (n,), ``W_down`` (d, n), ``b_down`` (d,) per block.
    """

    start: str
    loss: float
    layers: list


def check_stack(stack) -> Stack:
    """The stack ``explore`` works on (a single block is a stack of one), or InputError.

    Raises
    ------
    InputError
        A residual-free stack, or an activation other than ReLU / leaky ReLU.
    """
    if isinstance(stack, Instance):
        stack = Stack([stack], source=stack.source)
    if not isinstance(stack, Stack):
        raise InputError("stack", f"expected a Stack or an Instance, got {type(stack).__name__}")
    if stack.residual_free:
        raise InputError(stack.source, "the stack is residual-free (block = residual_free): there is no skip to absorb")
    pwl.slope(stack, stack.source)
    return stack


def explore(stack, *, target_class: str = AFFINE, seed: int = 0, starts: int = 16, iterations: int = 3000,
            time_limit: float | None = None, stop: threading.Event | None = None, progress=None) -> Result:
    """Decide, or search for, a residual-free stack of the same widths equal to ``stack``.

    Parameters
    ----------
    stack : Stack or Instance
        A ReLU or leaky-ReLU residual stack with exact weights.
    target_class : {"affine", "bias-free"}
        Which residual-free blocks count (:mod:`indexset.classes`).
    seed : int
        Seed of every random choice (sample points, starts, probe points).
    starts : int
        Fitting starts (≥ 1); the first ones are the block-wise pieces.
    iterations : int
        Adam steps per start at most.
    time_limit : float, optional
        Seconds for the whole call; past it the answer is ``unknown`` with
        what is known.
    stop : threading.Event, optional
        Set it to stop and report what is known.
    progress : callable, optional
        Called with a dict of counters from time to time.

    Returns
    -------
    Result
        ``absorbable`` with an exactly checked witness stack in
        ``certificate["witness"]``; ``not_absorbable`` with a theorem of
        MATH.md §9; else ``unknown`` with the best relative error in
        ``stages["fit"]``; ``target_class`` as asked.
    """
    from indexset.solver import solve

    stack = check_stack(stack)
    target_class = check_class(target_class)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError("seed", f"must be an integer ≥ 0, got {seed!r}")
    if not isinstance(starts, (int, np.integer)) or isinstance(starts, bool) or starts < 1:
        raise InputError("starts", f"must be an integer ≥ 1, got {starts!r}")
    if not isinstance(iterations, (int, np.integer)) or isinstance(iterations, bool) or iterations < 1:
        raise InputError("iterations", f"must be an integer ≥ 1, got {iterations!r}")
    if time_limit is not None and not time_limit > 0:
        raise InputError("time_limit", f"must be a positive number of seconds, got {time_limit}")
    stop = stop or threading.Event()
    clock = Budget.of(time_limit, stop)
    stages: dict = {"layers": stack.L, "n": stack.n, "d": stack.d, "activation": stack.activation, "class": target_class}
    call = _Call(stages, clock, target_class)

    # 1. block by block
    blockwise = solve(stack, target_class=target_class, time_limit=clock.share(0.2), seed=int(seed), stop=stop)
    stages["blockwise"] = {"status": blockwise.status, "blocks": blockwise.stages.get("blocks")}
    if blockwise.status == ABSORBABLE:
        candidate = witness_stack(stack, blockwise.certificate)
        _check_class(candidate, target_class)
        comparison = pwl.compare(stack, candidate, seed=int(seed), time_limit=clock.remaining(), stop=stop)
        if comparison.equal is False:
            raise AssertionError(f"bug: the block-wise witness stack differs from the stack: {comparison.describe()}")
        stages["comparison"] = comparison.to_json()
        reason = (f"every block absorbs its skip on its own, so the stack of their witnesses equals the stack "
                  f"(block-wise, MATH.md §4); region enumeration: {comparison.describe()}")
        return call.result(ABSORBABLE, reason, _witness_certificate(candidate, "blockwise", comparison), extension=blockwise.extension)

    if stack.L == 1 and blockwise.status == NOT_ABSORBABLE:
        # One block: its own proof is the stack's (no composition involved).
        return call.result(NOT_ABSORBABLE, blockwise.reason, blockwise.certificate, extension=blockwise.extension,
                           complete=blockwise.complete)

    # 2. on the line: Theorems 9.6, 9.12 and 9.15 decide, Propositions 9.7, 9.9 and 9.10 find witnesses
    if line_stacks.applies(stack) or line_stacks.line_part(stack) is not None:
        decided = _on_the_line(stack, call, int(seed))
        if decided is not None:
            return decided

    # 3. the theorems of MATH.md §9.2-9.3 (about affine blocks, so about bias-free ones too)
    verdict = deep.decide(stack, seed=int(seed), time_limit=clock.share(0.3), stop=stop)
    stages["theory"] = verdict.to_json()
    if verdict.proven:
        inside = "" if target_class == AFFINE else " (about residual-free blocks with biases, so about bias-free ones too)"
        return call.result(NOT_ABSORBABLE, verdict.reason + inside, dict(theorem_certificate(verdict.theorem), facts=verdict.facts),
                           extension=True, complete=True)

    # 4. fitting, rounding, exact checks
    fits = fit(stack, starts=int(starts), iterations=int(iterations), seed=int(seed), clock=clock, progress=progress,
               bias_free=target_class == BIAS_FREE)
    best = min(fits, key=lambda f: f.loss) if fits else None
    stages["fit"] = {"starts": len(fits), "best_loss": None if best is None else best.loss,
                     "best_start": None if best is None else best.start}
    checked = 0
    for candidate_fit in sorted(fits, key=lambda f: f.loss)[:3]:
        if candidate_fit.loss > PROMISING or clock.expired():
            break
        for candidate in rationalised(stack, candidate_fit, seed=int(seed)):
            if clock.expired():
                break
            checked += 1
            _check_class(candidate, target_class)
            comparison = pwl.compare(stack, candidate, seed=int(seed), time_limit=clock.remaining(), stop=stop)
            if comparison.equal:
                stages["fit"]["exact_checks"] = checked
                stages["comparison"] = comparison.to_json()
                reason = (f"a residual-free stack of {stack.L} blocks of width {stack.n} found by fitting "
                          f"(start: {candidate_fit.start}) and rounded to rationals equals the stack exactly: {comparison.describe()}"
                          + ("" if blockwise.stages.get("blocks") is None else
                             f"; block by block: {blockwise.stages.get('blocks')}"))
                return call.result(ABSORBABLE, reason, _witness_certificate(candidate, "fitted", comparison), extension=True)
    stages["fit"]["exact_checks"] = checked
    why = clock.halt_reason() or "no theorem of MATH.md §9 applies and no fitted stack rounds to an exact witness"
    reason = (f"unknown: not every block absorbs on its own ({blockwise.stages.get('blocks')}); {verdict.reason}; "
              f"fitting: best relative mean squared error {_loss_text(best)} over {len(fits)} starts, {checked} exact checks; {why}")
    return call.result(UNKNOWN, reason, None)


def _check_class(candidate: Stack, target_class: str) -> None:
    """A bias-free answer's witness has no bias inside σ (a bug otherwise, not an answer)."""
    if target_class == BIAS_FREE and any(block.b_up is not None and np.any(np.asarray(block.b_up) != 0) for block in candidate.blocks):
        raise AssertionError("bug: a bias-free witness with a bias inside σ")


def _on_the_line(stack: Stack, call: _Call, seed: int) -> Result | None:
    """§9.5 on a ReLU stack on R (either class), or Proposition 9.10 on one lifted from R (affine only): a checked witness, a proof, or None."""
    stages, clock, target_class, stop = call.stages, call.clock, call.target_class, call.clock.stop
    if stack.d == 1:
        decide = line_stacks.decide if target_class == AFFINE else line_bias_free.decide
        verdict = decide(stack, time_limit=clock.share(0.5), stop=stop)
    elif target_class != AFFINE:
        return None
    else:
        verdict = line_stacks.decide_lifted(stack, time_limit=clock.share(0.5), stop=stop)
        if verdict is None:
            return None
    stages["line"] = verdict.to_json()
    if verdict.status == NOT_ABSORBABLE:
        return call.result(NOT_ABSORBABLE, f"{verdict.theorem}: {verdict.reason}", dict(theorem_certificate(verdict.theorem), facts=verdict.facts),
                           extension=True, complete=True)
    if verdict.status != ABSORBABLE:
        return None
    candidate = Stack([block_instance(block, values, "line") for block, values in zip(stack.blocks, verdict.witness)],
                      {"witness_of": np.array(stack.source)}, f"witness of {stack.source}")
    _check_class(candidate, target_class)
    comparison = pwl.compare(stack, candidate, seed=seed, time_limit=clock.remaining(), stop=stop)
    if comparison.equal is False:
        raise AssertionError(f"bug: the witness stack of Theorem 9.6 differs from the stack: {comparison.describe()}")
    stages["comparison"] = comparison.to_json()
    if comparison.equal is None:
        stages["line"]["unchecked"] = comparison.describe()
        return None
    reason = f"{verdict.reason}; region enumeration: {comparison.describe()}"
    return call.result(ABSORBABLE, reason, _witness_certificate(candidate, "line", comparison), extension=True)


def _loss_text(best: Fit | None) -> str:
    return "n/a" if best is None else f"{best.loss:.3g} (start {best.start})"


@dataclass
class _Call:
    """One explore call's shared state: the stages recorded so far, the budget, the class asked about."""

    stages: dict
    clock: Budget
    target_class: str

    def result(self, status, reason, certificate, extension=False, complete=False) -> Result:
        """The Result, with the time spent and why the call halted (if it did)."""
        result = Result(status, reason, stages=self.stages, engine="explore", certificate=certificate, extension=extension,
                        complete=complete, verified=status == ABSORBABLE)
        result.time_s = self.clock.elapsed()
        result.target_class = self.target_class
        return result.note_halt(self.clock.halt_reason())


def _witness_certificate(candidate: Stack, kind: str, comparison) -> dict:
    return {"kind": kind, "witness": [encode_block({key: exact_value(block, key) for key in ("W_up", "b_up", "W_down", "b_down")})
                                      for block in candidate.blocks], "comparison": comparison.to_json()}


def witness_from_certificate(stack: Stack, certificate: dict) -> Stack:
    """The residual-free witness stack stored in an ``absorbable`` explore result."""
    from indexset.exact.witness import decode_block

    return Stack([block_instance(block, decode_block(values), certificate.get("kind", "explore"))
                  for block, values in zip(stack.blocks, certificate["witness"])],
                 {"witness_of": np.array(stack.source)}, f"witness of {stack.source}")


# ====================================================================== fitting
def sample_points(stack: Stack, count: int, rng: np.random.Generator) -> np.ndarray:
    """Points where the stack's kinks are, and far ones (the linear parts at infinity matter too)."""
    first = stack.blocks[0]
    up, bias = first.float_array("W_up"), first.float_array("b_up")
    norms = np.linalg.norm(up, axis=1)
    distances = np.abs(bias[norms > 0]) / norms[norms > 0]
    radius = 2.0 * max(1.0, float(distances.max()) if distances.size else 1.0)
    near = rng.uniform(-radius, radius, size=(count - count // 4, stack.d))
    far = rng.normal(size=(count // 4, stack.d))
    far *= 4.0 * radius / np.linalg.norm(far, axis=1, keepdims=True)
    return np.concatenate([near, far])


def blockwise_pieces(stack: Stack) -> list:
    """For each block, its flip witness for the index set with the smallest (★) residual (float arrays).

    That block equals ``f_i(x) − R_i x`` (MATH.md §2), R_i the residual: the
    natural start for a stack that absorbs only as a whole.
    """
    pieces = []
    for block in stack.blocks:
        up, down = block.float_array("W_up"), block.float_array("W_down")
        b_up, b_down, skip = block.float_array("b_up"), block.float_array("b_down"), block.float_array("skip")
        c = float(block.act.c)
        terms = np.einsum("di,ie->ide", down, up)
        best, best_norm = (), np.inf
        subsets = itertools.chain.from_iterable(itertools.combinations(range(block.n), k) for k in range(block.n + 1)) \
            if block.n <= 12 else [tuple(np.argsort(np.einsum("ide,de->i", terms, -skip))[: block.d])]
        for subset in subsets:
            residual = c * terms[list(subset)].sum(axis=0) + skip
            norm = float(np.abs(residual).sum())
            if norm < best_norm:
                best, best_norm = subset, norm
        flip = np.ones(block.n)
        flip[list(best)] = -1.0
        pieces.append({"W_up": up * flip[:, None], "b_up": b_up * flip, "W_down": down.copy(),
                       "b_down": b_down + c * down[:, list(best)] @ b_up[list(best)]})
    return pieces


def fit(stack: Stack, *, starts: int, iterations: int, seed: int, clock=None, progress=None, points: int = 384,
        bias_free: bool = False) -> list:
    """Fit residual-free stacks of the same widths to the stack by Adam from ``starts`` seeded starts.

    All starts run together (arrays with a leading start axis). The first
    start is the stack of block-wise pieces, the next quarter are those
    pieces with noise, the rest are random. With ``bias_free`` every bias
    inside σ starts at zero and its gradient is dropped, so it stays zero.

    Returns
    -------
    list of Fit
    """
    rng = np.random.default_rng(seed)
    x = sample_points(stack, points, rng)
    target = forward_float(stack, x)
    scale = float(((target - target.mean(axis=0)) ** 2).sum(axis=1).mean()) or 1.0
    slopes = tuple(float(v) for v in pwl.slopes(stack))
    labels, params = _starts(stack, starts, rng)
    if bias_free:
        for layer in params:
            layer["b_up"][...] = 0.0
    # One flat parameter array (and one for the gradient) with a view per weight: Adam is then six vector operations.
    theta, views = _flat(params)
    grad, grad_views = _flat([{k: np.zeros_like(v) for k, v in layer.items()} for layer in params])
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    rate = 0.01 * max(1.0, float(np.abs(stack.blocks[0].float_array("W_up")).max()))
    for step in range(1, iterations + 1):
        if clock is not None and step % 25 == 0 and clock.expired():
            break
        losses = _loss_and_gradients(views, x, target, slopes, scale, grad_views)
        if losses.min() < EXACT_ENOUGH:
            break
        if bias_free:
            for layer in grad_views:
                layer["b_up"][...] = 0.0
        lr = rate * 0.5 * (1 + np.cos(np.pi * step / iterations)) + 1e-5
        m *= 0.9
        m += 0.1 * grad
        v *= 0.999
        v += 0.001 * grad * grad
        theta -= (lr / (1 - 0.9**step)) * m / (np.sqrt(v / (1 - 0.999**step)) + 1e-12)
        if progress is not None and step % 200 == 0:
            progress({"step": step, "best_loss": float(losses.min())})
    losses = _loss_and_gradients(views, x, target, slopes, scale, grad_views)
    return [Fit(labels[s], float(losses[s]), [{k: w[s].copy() for k, w in layer.items()} for layer in views]) for s in range(starts)]


def _flat(params: list) -> tuple[np.ndarray, list]:
    """Copy per-layer arrays (leading start axis) into one (starts, K) array; return it and views shaped like the inputs."""
    starts = params[0]["W_up"].shape[0]
    sizes = [(k, w.shape[1:]) for layer in params for k, w in layer.items()]
    total = sum(int(np.prod(shape)) for _, shape in sizes)
    flat = np.empty((starts, total))
    views, offset = [], 0
    for layer in params:
        view = {}
        for key, w in layer.items():
            size = int(np.prod(w.shape[1:]))
            view[key] = flat[:, offset:offset + size].reshape(w.shape)
            view[key][...] = w
            offset += size
        views.append(view)
    return flat, views


def _starts(stack: Stack, starts: int, rng: np.random.Generator) -> tuple[list, list]:
    pieces = blockwise_pieces(stack)
    n, d = stack.n, stack.d
    weight = max(1.0, float(np.abs(stack.blocks[0].float_array("W_up")).max()))
    labels, layers = [], [{"W_up": [], "b_up": [], "W_down": [], "b_down": []} for _ in range(stack.L)]
    noisy = max(1, starts // 4) if starts > 1 else 0
    for s in range(starts):
        if s == 0:
            label, noise = "blockwise", 0.0
        elif s <= noisy:
            label, noise = "blockwise+noise", 0.1 * weight
        else:
            label, noise = "random", None
        labels.append(label)
        for layer, piece in zip(layers, pieces):
            if noise is None:
                layer["W_up"].append(rng.normal(scale=weight, size=(n, d)))
                layer["b_up"].append(rng.normal(scale=weight, size=n))
                layer["W_down"].append(rng.normal(scale=weight / np.sqrt(n), size=(d, n)))
                layer["b_down"].append(rng.normal(scale=weight, size=d))
            else:
                for key in layer:
                    layer[key].append(piece[key] + noise * rng.normal(size=piece[key].shape))
    return labels, [{k: np.array(v) for k, v in layer.items()} for layer in layers]


def _loss_and_gradients(params: list, x: np.ndarray, target: np.ndarray, slopes: tuple, scale: float, grads: list | None = None) -> np.ndarray:
    """Relative squared errors of every start; their gradients are written into ``grads`` (views) when given.

    ``slopes`` are σ's slopes for z > 0 and z < 0 (:func:`indexset.exact.pwl.slopes`).
    """
    starts = params[0]["W_up"].shape[0]
    a = np.broadcast_to(x, (starts, *x.shape))
    cache = []
    for layer in params:
        h = a @ layer["W_up"].transpose(0, 2, 1) + layer["b_up"][:, None, :]
        slope = np.where(h > 0, slopes[0], slopes[1])
        s = h * slope
        cache.append((a, slope, s))
        a = s @ layer["W_down"].transpose(0, 2, 1) + layer["b_down"][:, None, :]
    error = a - target[None]
    losses = (error**2).sum(axis=2).mean(axis=1) / scale
    if grads is None:
        return losses
    g = 2.0 * error / (x.shape[0] * scale)
    for layer, grad, (a_in, slope, s) in zip(reversed(params), reversed(grads), reversed(cache)):
        grad["W_down"][...] = g.transpose(0, 2, 1) @ s
        grad["b_down"][...] = g.sum(axis=1)
        gh = (g @ layer["W_down"]) * slope
        grad["W_up"][...] = gh.transpose(0, 2, 1) @ a_in
        grad["b_up"][...] = gh.sum(axis=1)
        g = gh @ layer["W_up"]
    return losses


# ====================================================================== rounding
def rationalised(stack: Stack, fitted: Fit, seed: int = 0):
    """Residual-free stacks with small rational weights near a fitted one (a generator, cheapest first).

    Each unit is first scaled so that its largest up-weight or bias is ±1
    (σ is positively homogeneous, so the scale moves into the down
    projection unchanged); then every weight is rounded with
    ``Fraction.limit_denominator(D)``; and, for each D, the last down
    projection and bias are also refitted exactly (least squares in
    rationals on exact sample points, where the stack is evaluated exactly).
    """
    layers = [_normalised(layer) for layer in fitted.layers]
    seen = set()
    for denominator in DENOMINATORS:
        rounded = [{k: _round(v, denominator) for k, v in layer.items()} for layer in layers]
        for candidate in (rounded, _refit_last(stack, rounded, seed)):
            if candidate is None:
                continue
            key = tuple(str(v) for layer in candidate for k in sorted(layer) for v in layer[k].ravel())
            if key in seen:
                continue
            seen.add(key)
            yield _as_stack(stack, candidate)


def _normalised(layer: dict) -> dict:
    up, b_up, down = layer["W_up"].copy(), layer["b_up"].copy(), layer["W_down"].copy()
    size = np.maximum(np.abs(up).max(axis=1), np.abs(b_up))
    size[size == 0] = 1.0
    return {"W_up": up / size[:, None], "b_up": b_up / size, "W_down": down * size[None, :], "b_down": layer["b_down"].copy()}


def _round(values: np.ndarray, denominator: int) -> np.ndarray:
    out = np.empty(values.shape, dtype=object)
    for index, value in np.ndenumerate(values):
        out[index] = Fraction(float(value)).limit_denominator(denominator)
    return out


def _refit_last(stack: Stack, rounded: list, seed: int) -> list | None:
    """The rounded stack with its last down projection and bias solved exactly (None if the system is singular)."""
    xs = random_points(stack.d, 4 * (stack.n + 1), seed + 1)
    inner = _as_stack(stack, rounded[:-1]) if len(rounded) > 1 else None
    ys = forward_exact(inner, xs) if inner is not None else xs
    alpha = pwl.slope(stack)
    last = rounded[-1]
    features = []
    for y in ys:
        pre = [sum(last["W_up"][i, j] * y[j] for j in range(stack.d)) + last["b_up"][i] for i in range(stack.n)]
        features.append([max(v, alpha * v) for v in pre] + [Fraction(1)])
    target = forward_exact(stack, xs)
    phi = flint.fmpq_mat([[flint.fmpq(v.numerator, v.denominator) for v in row] for row in features])
    rhs = flint.fmpq_mat([[flint.fmpq(v.numerator, v.denominator) for v in row] for row in target])
    normal = phi.transpose() * phi
    if normal.rank() < normal.nrows():
        return None
    solution = normal.solve(phi.transpose() * rhs)  # (n + 1) × d
    down = np.empty((stack.d, stack.n), dtype=object)
    bias = np.empty(stack.d, dtype=object)
    for r in range(stack.d):
        for i in range(stack.n):
            down[r, i] = Fraction(int(solution[i, r].p), int(solution[i, r].q))
        bias[r] = Fraction(int(solution[stack.n, r].p), int(solution[stack.n, r].q))
    return rounded[:-1] + [dict(last, W_down=down, b_down=bias)]


def _as_stack(stack: Stack, layers: list) -> Stack:
    blocks = [block_instance(block, layer, "fitted") for block, layer in zip(stack.blocks, layers)]
    return Stack(blocks, {"witness_of": np.array(stack.source)}, f"fitted for {stack.source}")
