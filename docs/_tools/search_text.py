"""Plain text for the site's search: the search index keeps each section's text for its
previews, and the formulas in it are LaTeX (``\\(a_t^2 = 1 + 2\\log(t/\\tau + 1)\\)``), which
a preview shows raw. :func:`plain_math` rewrites every ``\\( … \\)`` and ``\\[ … \\]`` span of a
text as plain Unicode (``a_t^2 = 1 + 2 log(t/τ + 1)``); :func:`rewrite_index` applies it to
the built site's ``search/search_index.json`` and to the ``search_index.js`` the offline plugin
writes beside it (``var __index = {…}``), from the build hook's ``on_post_build``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

__all__ = ["plain_math", "rewrite_index"]

SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν",
    "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ",
    "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
    "Lambda": "Λ", "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
    "sum": "Σ", "prod": "Π", "int": "∫", "infty": "∞", "partial": "∂", "nabla": "∇",
    "cdot": "·", "times": "×", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠",
    "neq": "≠", "approx": "≈", "sim": "~", "simeq": "≃", "asymp": "≍", "propto": "∝",
    "to": "→", "rightarrow": "→", "mapsto": "↦", "in": "∈", "langle": "⟨", "rangle": "⟩",
    "pm": "±", "mp": "∓", "ll": "≪", "gg": "≫", "equiv": "≡", "dots": "…", "ldots": "…",
    "cdots": "⋯", "quad": " ", "qquad": " ", "mid": "|", "lvert": "|", "rvert": "|",
    "lVert": "‖", "rVert": "‖", "|": "‖",
}
"""LaTeX commands written as one character (or a space)."""
DROPPED = ("left", "right", "big", "Big", "bigg", "Bigg", "displaystyle", "textstyle",
           "nonumber", "limits", "!", ",", ";", ":", " ", "begin{aligned}", "end{aligned}")
"""Commands that only space or size: removed."""
NAMED = ("log", "exp", "ln", "sin", "cos", "max", "min", "sup", "inf", "lim", "arg", "det",
         "Pr", "E", "Var")
"""Operator names written as themselves."""

_SPAN = re.compile(r"\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)
_WRAPPER = re.compile(r"\\(?:text|mathrm|mathbf|mathit|mathsf|mathcal|operatorname|boldsymbol)"
                      r"\s*\{([^{}]*)\}")
_BLACKBOARD = re.compile(r"\\mathbb\s*\{?\s*([A-Za-z])\s*\}?")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_SQRT = re.compile(r"\\sqrt\s*\{([^{}]*)\}")
_SCRIPT = re.compile(r"([\^_])\{([^{}]*)\}")
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")


def _group(text: str) -> str:
    """``text`` as one term: in parentheses unless it is a single word or number."""
    text = text.strip()
    return text if re.fullmatch(r"[\w.′']+", text) else f"({text})"


def _formula(tex: str) -> str:
    """One formula's LaTeX as plain Unicode (module docstring)."""
    out = tex.replace("&amp;", "").replace("&", "").replace("\\\\", "; ")
    out = re.sub(r"\\([A-Za-z]+)(?![A-Za-z])", lambda m: SYMBOLS.get(m[1], m[0]), out)
    for _ in range(6):  # nested groups, innermost first
        out = _WRAPPER.sub(lambda m: m[1], out)
        out = _BLACKBOARD.sub(lambda m: m[1], out)
        out = _SCRIPT.sub(lambda m: m[1] + _group(m[2]), out)
        out = _FRAC.sub(lambda m: f"{_group(m[1])}/{_group(m[2])}", out)
        out = _SQRT.sub(lambda m: f"√{_group(m[1])}", out)
    for name in DROPPED:
        out = out.replace("\\" + name, " " if name in (",", ";", ":", " ", "quad") else "")

    def command(m):
        name = m[1]
        if name in SYMBOLS:
            return SYMBOLS[name]
        if name in NAMED:
            return f" {name} " if name not in ("E", "Pr", "Var") else name
        return name if len(name) > 1 else ""  # an unknown command: its name; \{ \} etc.: drop

    out = _COMMAND.sub(command, out)
    out = out.replace("{", "").replace("}", "")
    out = re.sub(r"\s+", " ", out)
    return re.sub(r"([(\[]) | ([)\]])", lambda m: m[1] or m[2], out).strip()


def plain_math(text: str) -> str:
    """``text`` with each ``\\( … \\)`` and ``\\[ … \\]`` formula written as plain Unicode.

    Examples
    --------
    >>> plain_math(r"logit \\(L_t = a_t S_t + m_t\\), with \\(a_t^2 = 1 + 2\\log(t/\\tau + 1)\\)")
    'logit L_t = a_t S_t + m_t, with a_t^2 = 1 + 2 log (t/τ + 1)'
    >>> plain_math(r"\\[ \\mathbb E[e^{L_t}] = \\frac{\\alpha}{t/\\tau + 1} \\]")
    'E[e^L_t] = α/(t/τ + 1)'
    """
    return _SPAN.sub(lambda m: _formula(m[1] if m[1] is not None else m[2]), text)


def rewrite_index(site: Path) -> int:
    """Rewrite the search index of the built ``site`` with :func:`plain_math` (its JSON, and the
    offline plugin's JS copy if present); returns the number of entries changed."""
    path = Path(site) / "search" / "search_index.json"
    if not path.is_file():
        return 0
    index = json.loads(path.read_text())
    changed = 0
    for doc in index.get("docs", []):
        for field in ("text", "title"):
            if field in doc:
                plain = plain_math(doc[field])
                changed += plain != doc[field]
                doc[field] = plain
    text = json.dumps(index, ensure_ascii=False, separators=(",", ":"))
    path.write_text(text)
    script = path.with_name("search_index.js")
    if script.is_file():
        script.write_text(f"var __index = {text}")
    return changed
