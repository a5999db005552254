"""``sia-theory sweep STUDY --help``: every settings flag's help says what the field means (read
off the settings dataclass's docstring, the one place it is written), not only its default."""

import re

import pytest

from sia_theory.cli.sweep import field_meanings, settings_parser
from sia_theory.studies import SWEEPABLE, get_study


def _settings_actions(parser):
    return [a for a in parser._actions if a.dest.startswith("field_")]


@pytest.mark.parametrize("name", SWEEPABLE)
def test_every_settings_flag_help_has_a_meaning_besides_the_default(name):
    study = get_study(name)
    parser = settings_parser(study, f"sia-theory sweep {name}")
    text = parser.format_help()  # argparse formats every help (a bare % would raise here)
    assert "settings fields" in text or not _settings_actions(parser)  # train_grid: none
    for action in _settings_actions(parser):
        meaning = re.sub(r"\s*\(default .*\)$", "", action.help, flags=re.S)
        words = re.findall(r"[^\W\d_]{2,}", meaning)
        assert len(words) >= 3 and "default" not in meaning.split()[:1], (name, action.dest,
                                                                          action.help)
        assert action.help.endswith(")") and "(default " in action.help


def test_meanings_from_the_parameters_and_attributes_sections_and_from_the_prose():
    class Settings:
        """``n`` draws on a grid of ``size`` points (10/50/90 % levels; one per ``(d, ρ)``
        row). ``tau``: the temperature of the transform.

        Attributes
        ----------
        n : int
            Tokens per draw,
            the context length.
        d : tuple of int
            The :func:`~pkg.dims` of ``x``.

        Notes
        -----
        size : int
            Not an attribute entry (another section).
        """

    assert field_meanings(Settings) == {
        "n": "Tokens per draw, the context length.",
        "d": "The pkg.dims of x.",
        "size": "n draws on a grid of size points (10/50/90 % levels; one per (d, ρ) row)",
        "tau": "the temperature of the transform",
    }

    class Both:
        """``tau`` is read from here only when no section lists it.

        Parameters
        ----------
        n, m : int
            Tokens per draw.
        d : int
            From Parameters.

        Attributes
        ----------
        d : int
            From Attributes (Parameters wins).
        k : int
            Only in Attributes.
        """

    # Parameters is read first and wins; a combined entry gives each name its meaning;
    # Attributes fills a field Parameters lacks; the prose what neither section lists
    assert field_meanings(Both) == {"n": "Tokens per draw.", "m": "Tokens per draw.",
                                    "d": "From Parameters.", "k": "Only in Attributes.",
                                    "tau": "tau is read from here only when no section lists it"}

    class Bare:
        pass

    assert field_meanings(Bare) == {}


def test_a_percent_sign_in_a_meaning_is_shown_as_it_is():
    study = get_study("cas_fig1_phase_diagram")
    text = " ".join(settings_parser(study, "p").format_help().split())
    assert "10/50/90 % crossings" in text
