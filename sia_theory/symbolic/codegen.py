"""Generate :mod:`sia_theory.symbolic.generated` from the sympy derivations (run once, commit).

The numeric closed forms of the SI transform are *printed* from the expressions that
:mod:`sia_theory.symbolic.si` derives (SI eq. 15 solved for ``a_t², m_t``, the validity
condition of eq. 16, the lognormal moments of App. B, the digamma range sums and their
``t → ∞`` limits of App. E), so sympy stays the single source of truth while the run-time path
imports numpy only and pays no solving cost::

    python -m sia_theory.symbolic.codegen           # rewrite sia_theory/symbolic/generated.py
    python -m sia_theory.symbolic.codegen --check   # exit 1 if the committed file is stale

``tests/symbolic/test_codegen.py`` re-derives everything and fails if the committed module
differs from :func:`render`'s output.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import sympy as sp
from sympy.printing.numpy import SciPyPrinter

from . import si

__all__ = ["GENERATED_PATH", "GeneratedFunction", "functions", "constants", "render", "main"]

GENERATED_PATH = Path(__file__).with_name("generated.py")
"""The committed generated module, ``sia_theory/symbolic/generated.py``."""


class _Printer(SciPyPrinter):
    """SciPy/numpy printer that spells ``polygamma(0, x)`` as ``scipy.special.digamma(x)``."""

    def _print_polygamma(self, expr):
        order, arg = expr.args
        if order == 0:
            return f"{self._module_format('scipy.special.digamma')}({self._print(arg)})"
        return super()._print_polygamma(expr)


@dataclass(frozen=True)
class GeneratedFunction:
    """One generated numpy function ``name(*args) = expr`` with a one-line docstring."""

    name: str
    args: tuple
    expr: object
    doc: str

    def source(self) -> str:
        """The function's Python source as the generator prints it."""
        printer = _Printer()
        body = printer.doprint(self.expr)
        lazy = sorted(m for m in printer.module_imports if m != "numpy")
        lines = [f"def {self.name}({', '.join(str(a) for a in self.args)}):",
                 f'    """{self.doc}', "", f"    ``{sp.sstr(self.expr)}``", '    """']
        # scipy costs ~0.25 s to import: load it only when a function that needs it is called.
        lines += [f"    import {module}" for module in lazy]
        lines.append(f"    return {body}")
        return "\n".join(lines) + "\n"


def _validity():
    """``(beta_min(alpha), condition)`` from :func:`si.validity_condition`, checked to be of the
    form ``beta >= f(alpha)``."""
    condition = si.validity_condition()
    if not (isinstance(condition, sp.GreaterThan) and condition.lhs == si.beta
            and si.beta not in condition.rhs.free_symbols):
        raise RuntimeError(f"unexpected form of the SI validity condition: {condition}")
    return condition.rhs, condition


def functions() -> list[GeneratedFunction]:
    """Every generated function, in file order, each from its sympy derivation."""
    coefficients = si.solve_coefficients()
    beta_min, condition = _validity()
    mean_weight, mean_negentropy = si.lognormal_moments()
    limit_z, limit_n = si.range_sum_limits()
    args_si = (si.t, si.tau, si.alpha, si.beta)
    return [
        GeneratedFunction("si_a2", args_si, coefficients[si.a2],
                          "SI eq. 16 variance a_t^2, solved from eq. 15 (si.solve_coefficients)."),
        GeneratedFunction("si_m", args_si, coefficients[si.m],
                          "SI eq. 16 mean m_t, solved from eq. 15 (si.solve_coefficients)."),
        GeneratedFunction("si_log_weight_mean", args_si,
                          sp.expand_log(sp.simplify(coefficients[si.a2] / 2 + coefficients[si.m]),
                                        force=True),
                          "log E[e^L_t] = m_t + a_t^2/2 simplified (no cancellation; SI eq. 15a)."),
        GeneratedFunction("si_tilted_logit_mean", args_si,
                          sp.simplify(coefficients[si.a2] + coefficients[si.m]),
                          "E[L_t e^L_t]/E[e^L_t] = m_t + a_t^2 simplified (SI eq. 15b / 15a)."),
        GeneratedFunction("si_beta_min", (si.alpha,), beta_min,
                          "Smallest beta with a_t^2 >= 0 for all t >= 0 (si.validity_condition)."),
        GeneratedFunction("si_is_valid", (si.alpha, si.beta), condition,
                          "SI eq. 16 validity condition on (alpha, beta) (si.validity_condition)."),
        GeneratedFunction("lognormal_weight_mean", (si.a2, si.m), mean_weight,
                          "E[e^L] for L ~ N(m, a2) (si.lognormal_moments, SI App. B)."),
        GeneratedFunction("lognormal_negentropy_mean", (si.a2, si.m), mean_negentropy,
                          "E[L e^L] for L ~ N(m, a2) (si.lognormal_moments, SI App. B)."),
        GeneratedFunction("lognormal_log_weight_mean", (si.a2, si.m),
                          sp.expand_log(sp.log(mean_weight), force=True),
                          "log E[e^L] for L ~ N(m, a2) (si.lognormal_moments; log space)."),
        GeneratedFunction("lognormal_tilted_mean", (si.a2, si.m),
                          sp.simplify(mean_negentropy / mean_weight),
                          "E[L e^L]/E[e^L] for L ~ N(m, a2) (si.lognormal_moments)."),
        GeneratedFunction("si_range_sum", (si.t1, si.t2, si.tau), si.exact_range_sum(),
                          "Sum_{s=t1}^{t2-1} 1/(s/tau+1) by digamma telescoping "
                          "(si.exact_range_sum)."),
        GeneratedFunction("si_total_attention_limit", (si.alpha, si.tau, si.Delta), limit_z,
                          "lim_{t->oo} E[Z_t^{t Delta}] (si.range_sum_limits, SI Lemma 3.2)."),
        GeneratedFunction("si_negentropy_limit", (si.beta, si.tau, si.Delta), limit_n,
                          "lim_{t->oo} E[N_t^{t Delta}] (si.range_sum_limits, SI Lemma 3.2')."),
    ]


def constants() -> list[tuple[str, object, str]]:
    """``(name, sympy value, comment)`` of the generated constants."""
    hyper = si.boundary_hyperparameters()
    _, condition = _validity()
    return [("SI_BOUNDARY_ALPHA", hyper[si.alpha], "alpha of a_0 = 1, m_0 = 0 (SI §3.3)"),
            ("SI_BOUNDARY_BETA", hyper[si.beta], "beta of a_0 = 1, m_0 = 0 (SI §3.3)"),
            ("SI_VALIDITY_CONDITION", condition, "SI eq. 16 validity, as text")]


HEADER = '''"""Numeric closed forms printed from :mod:`sia_theory.symbolic.si` (sympy derivations).

DO NOT EDIT: regenerate with ``python -m sia_theory.symbolic.codegen``.
``tests/symbolic/test_codegen.py`` re-derives every expression and fails if this file differs
from the generator's output. Numpy
only at import (scipy is imported inside the one function that needs it); no sympy.
"""

import numpy

'''


def _constant_source(name, value, comment) -> str:
    if isinstance(value, sp.Rel):
        return f'{name} = {sp.sstr(value)!r}\n"""{comment}."""\n'
    number = float(sp.N(value, 30))
    return f'{name} = {number!r}\n"""{comment}: {sp.sstr(value)}."""\n'


def render() -> str:
    """The full text of ``generated.py`` as the generator produces it now."""
    parts = [HEADER]
    parts += [_constant_source(*c) for c in constants()]
    parts += ["\n\n" + f.source() for f in functions()]
    return "".join(parts)


def main(argv=None) -> int:
    """``python -m sia_theory.symbolic.codegen [--check]``: write ``generated.py`` (or, with
    ``--check``, exit 1 if it differs from what the generator prints now)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv not in ([], ["--check"]):
        print("usage: python -m sia_theory.symbolic.codegen [--check]", file=sys.stderr)
        return 2
    text = render()
    if argv == ["--check"]:
        current = GENERATED_PATH.read_text() if GENERATED_PATH.exists() else ""
        if current != text:
            print(f"{GENERATED_PATH} is stale: run python -m sia_theory.symbolic.codegen",
                  file=sys.stderr)
            return 1
        print(f"{GENERATED_PATH} is up to date")
        return 0
    GENERATED_PATH.write_text(text)
    print(f"wrote {GENERATED_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
