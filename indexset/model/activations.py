"""Registry of activations: odd-part coefficient, impossibility class, forward.

MATH.md §2 lists the *odd-linear* activations, those with
``σ(z) − σ(−z) = c·z``; for them absorption reduces to the index-set
condition (★). MATH.md §4 lists the classes for which absorption is
impossible for every weight. Everything else is refused as unknown input,
except the sigmoid-gated GLU, which is recognised but not covered by any
theorem (its verdict is always "unknown").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import flint
import numpy as np

from indexset.errors import InputError
from indexset.rational import parse_fraction

ODD_LINEAR = "odd_linear"
HOMOGENEOUS = "homogeneous"
GATED = "gated"
UNCOVERED = "uncovered"


@dataclass(frozen=True)
class Activation:
    """What indexset knows about one activation.

    Attributes
    ----------
    name : str
        Canonical name as written in instance files (``leaky_relu:1/3``).
    kind : str
        One of ``odd_linear``, ``homogeneous``, ``gated``, ``uncovered``.
    c : Fraction or None
        Odd-part coefficient for odd-linear activations.
    extension : bool
        True when the result used for this activation goes beyond the paper
        (MATH.md marks it "(extension)").
    exact_forward : bool
        True when σ (or the gate) maps rationals to rationals (ReLU, leaky
        ReLU, ReLU², ReGLU), so the witness forward check can be done exactly.
    reason : str
        The theorem or argument behind every verdict for this class.
    forward : callable
        ``forward(z)`` for ungated activations; ``forward(gate, value)`` for
        gated ones. numpy in, numpy out.
    gate : callable or None
        The gate function g of a gated block.
    degree : int or None
        Degree of positive homogeneity (for the homogeneous class).
    """

    name: str
    kind: str
    c: Fraction | None = None
    extension: bool = False
    exact_forward: bool = False
    reason: str = ""
    forward: Callable = field(default=None, repr=False, compare=False)
    gate: Callable | None = field(default=None, repr=False, compare=False)
    degree: int | None = None
    rational: Callable | None = field(default=None, repr=False, compare=False)
    """σ (the gate, for gated activations) on exact rationals, where it maps rationals to rationals."""
    linear: bool = False
    """σ(z) = z (leaky ReLU with α = 1): (★) is sufficient but far from
    necessary, and "no S" is settled by a rank condition instead."""

    @property
    def gated(self) -> bool:
        """Whether blocks with this activation carry a gate projection."""
        return self.gate is not None

    def exact_relu_like(self, value: Fraction) -> Fraction:
        """Apply σ(v) = max(v, α·v), α = c − 1, exactly (ReLU and leaky ReLU only)."""
        if not self.exact_forward:
            raise ValueError(f"{self.name} has no exact rational forward")
        return max(value, (self.c - 1) * value)


def _relu(z):
    return np.maximum(z, 0.0)


def _relu_rational(v):
    return v if v > 0 else v * 0


def _relu2_rational(v):
    return v * v if v > 0 else v * 0


def _gelu(z):
    from scipy.special import erf  # scipy costs a third of a second to import: only for float forwards

    return 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)))


def _gelu_tanh(z):
    inner = math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)
    return 0.5 * z * (1.0 + np.tanh(inner))


def _silu(z):
    return z * _sigmoid(z)


def _sigmoid(z):
    from scipy.special import expit

    return expit(z)


def _softplus(z):
    return np.logaddexp(0.0, z)


def _relu2(z):
    return np.maximum(z, 0.0) ** 2


def _gated(gate):
    def forward(gate_pre, value_pre):
        return gate(gate_pre) * value_pre

    return forward


_ODD_REASON = (
    "MATH.md §2-3: σ(z) − σ(−z) = c·z, so the block is absorbable iff some "
    "index set S has c·W_down[:,S]·W_up[S,:] = −A (weights nondegenerate)"
)
_EXTENSION_NOTE = " (extension beyond the paper: necessity by the same even/odd argument)"
_HOMOGENEOUS_REASON = (
    "MATH.md §4 degree argument: σ is positively homogeneous of degree {k} ≠ 1, "
    "so scaling x by t gives t·A·x = t^{k}·(B' − B)(x) for all t, impossible for "
    "invertible A; with no bias inside σ, no bias-free residual-free block absorbs the skip"
)
_GATED_REASON = (
    "MATH.md §4 linearisation argument: the gate g is differentiable at 0 with "
    "g(0) = 0, so the gated block is O(|x|²) at 0 and its Jacobian at 0 cannot "
    "cancel the invertible skip; with no bias inside σ, no bias-free residual-free block absorbs it"
)


def _odd(name, c, fn, *, extension=False, rational=None):
    reason = _ODD_REASON + (_EXTENSION_NOTE if extension else "")
    return Activation(name, ODD_LINEAR, Fraction(c), extension, rational is not None, reason, fn, rational=rational)


_FIXED = {
    "relu": _odd("relu", 1, _relu, rational=_relu_rational),
    "gelu": _odd("gelu", 1, _gelu),
    "gelu_tanh": _odd("gelu_tanh", 1, _gelu_tanh),
    "silu": _odd("silu", 1, _silu, extension=True),
    "softplus": _odd("softplus", 1, _softplus, extension=True),
    "relu2": Activation(
        "relu2", HOMOGENEOUS, reason=_HOMOGENEOUS_REASON.format(k=2), forward=_relu2, degree=2,
        exact_forward=True, rational=_relu2_rational,
    ),
    "reglu": Activation(
        "reglu",
        HOMOGENEOUS,
        reason=_HOMOGENEOUS_REASON.format(k=2),
        forward=_gated(_relu),
        gate=_relu,
        degree=2,
        exact_forward=True,
        rational=_relu_rational,
    ),
    "swiglu": Activation(
        "swiglu", GATED, reason=_GATED_REASON.replace("g is", "g = silu is"),
        forward=_gated(_silu), gate=_silu,
    ),
    "geglu": Activation(
        "geglu", GATED, reason=_GATED_REASON.replace("g is", "g = gelu is"),
        forward=_gated(_gelu), gate=_gelu,
    ),
    "glu": Activation(
        "glu",
        UNCOVERED,
        reason=(
            "MATH.md §4: the sigmoid-gated GLU has g(0) = 1/2, which none of the "
            "paper's results covers; the answer is unknown"
        ),
        forward=_gated(_sigmoid),
        gate=_sigmoid,
    ),
}

NAMES = tuple(_FIXED) + ("leaky_relu:ALPHA",)

# The one alias table: activation names as Hugging Face configs (``hidden_act``,
# ``activation_function``) and transformers' ACT2FN spell them → indexset names.
# Only spellings of the same σ are here: gelu_new, gelu_fast, gelu_accurate,
# gelu_pytorch_tanh and gelu_python_tanh are all 0.5·z·(1 + tanh(√(2/π)(z + 0.044715 z³)))
# (constants rounded differently); swish is silu; leaky_relu is torch's default
# slope 0.01. Clipped or rescaled variants (gelu_10, quick_gelu, relu6) are not.
ALIASES = {
    "gelu_new": "gelu_tanh",
    "gelu_fast": "gelu_tanh",
    "gelu_accurate": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu_python_tanh": "gelu_tanh",
    "gelu_python": "gelu",
    "swish": "silu",
    "leaky_relu": "leaky_relu:1/100",
    "squared_relu": "relu2",
    "relu_squared": "relu2",
}

# The gated form of an activation: a block with a gate projection W_gate
# computes g(W_gate x)·(W_up x + b_up), g the activation named in the config
# (LLaMA's hidden_act = "silu" is SwiGLU). The gate of geglu is the exact GELU;
# the theorems for gated blocks (MATH.md §4, §8) read only g(0) = 0 and the
# derivative at 0, which gelu and gelu_tanh share.
GATED_FORMS = {"relu": "reglu", "gelu": "geglu", "gelu_tanh": "geglu", "silu": "swiglu", "sigmoid": "glu"}


def _leaky(alpha: Fraction) -> Activation:
    def forward(z, a=float(alpha)):
        # MATH.md §2: σ(z) = max(z, αz) (for α > 1 this is αz above zero).
        return np.maximum(z, a * z)

    name = f"leaky_relu:{alpha}"
    c = 1 + alpha
    if alpha == 1:
        # σ(z) = z: the flip identity holds (c = 2), but the block is affine,
        # every unit is "free" and the exact criterion is a rank condition.
        reason = _ODD_REASON + (
            "; here σ(z) = z is linear, so with no such S the block is still absorbable iff "
            "rank(A + W_down·W_up) ≤ n (extension beyond the paper)"
        )
        return Activation(name, ODD_LINEAR, c, True, True, reason, forward, linear=True, rational=lambda v: v)
    if c == 0:
        # σ(z) = z·[z>0] − z·[z<0] = |z| is even: it has no odd part at all.
        return Activation(
            name,
            UNCOVERED,
            reason="leaky_relu with α = −1 is |z|, an even function: (★) has c = 0 and no theorem applies",
            forward=forward,
        )
    return _odd(name, c, forward, extension=True, rational=lambda v, a=alpha: max(v, v * flint.fmpq(a.numerator, a.denominator)))


def get(name: str, source: str = "<activation>") -> Activation:
    """Look up an activation by its file name or a Hugging Face spelling.

    Parameters
    ----------
    name : str
        ``relu``, ``gelu``, ``gelu_tanh``, ``silu``, ``softplus``,
        ``leaky_relu:ALPHA``, ``relu2``, ``reglu``, ``swiglu``, ``geglu``
        or ``glu``, or a spelling of :data:`ALIASES` (``gelu_new``,
        ``gelu_pytorch_tanh``, ``swish``, ...), case-insensitive.
    source : str
        File or option named in the error message.

    Raises
    ------
    InputError
        For any other name.
    """
    key = canonical_name(name)
    if key in _FIXED:
        return _FIXED[key]
    if key.startswith("leaky_relu:"):
        return _leaky(parse_fraction(key.split(":", 1)[1], source))
    if key == "sigmoid":
        raise InputError(source, "sigmoid is supported only as the gate of a gated block (glu)")
    raise InputError(source, f"unknown activation {name!r} (known: {', '.join(NAMES)}; also spelled {', '.join(sorted(ALIASES))})")


def canonical_name(name: str) -> str:
    """The indexset spelling of an activation name (aliases resolved, lower case); not validated."""
    key = str(name).strip().lower()
    return ALIASES.get(key, key)


def for_block(name: str, gated: bool, source: str = "<activation>") -> Activation:
    """The activation of a block named as its config names it: ungated names take their gated form on a gated block.

    Parameters
    ----------
    name : str
        As for :func:`get`, or ``sigmoid`` on a gated block.
    gated : bool
        Whether the block has a gate projection.
    source : str
        File or option named in the error message.

    Raises
    ------
    InputError
        An unknown name, an ungated activation with no gated form on a
        gated block, or a gated one on a block without a gate.
    """
    key = canonical_name(name)
    if gated and key in GATED_FORMS:
        return _FIXED[GATED_FORMS[key]]
    act = get(key, source)
    if gated and not act.gated:
        raise InputError(source, f"{act.name} has no gated form (gated forms: {', '.join(f'{k} → {v}' for k, v in GATED_FORMS.items())})")
    if not gated and act.gated:
        raise InputError(source, f"{act.name} is a gated activation: the block needs a gate projection")
    return act
