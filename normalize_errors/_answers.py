"""The old name of ``_not_answers``, kept only for ``_wrap``'s import until ``_wrap.py`` is free
to change (another change to it is under way): once ``_wrap`` imports ``_not_answers``, delete
this file (issue 23, item 2)."""

from __future__ import annotations

from ._not_answers import not_an_answer, provider_of

__all__ = ["not_an_answer", "provider_of"]
