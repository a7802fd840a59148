"""The provider tables the docs print are the ones the adapters use, and they say true things."""

from __future__ import annotations

import pytest

from normalize_errors import CODES, check, class_for_code, diagnose
from normalize_errors._reading._rules import StopRow
from normalize_errors.providers import NAMES
from normalize_errors.providers._routing import adapter

ROWS = [(name, row) for name in NAMES for row in getattr(adapter(name), "STOP_REASONS", ())]


@pytest.mark.parametrize(("provider", "row"), ROWS, ids=[f"{p}:{r.code}" for p, r in ROWS])
def test_every_documented_stop_reason_does_what_the_docs_say(provider: str, row: StopRow) -> None:
    """Each row's example, as plain JSON, gives the row's code, and check() raises it."""
    err = diagnose(row.example, provider=provider, tools=row.tools)
    assert err is not None
    assert err.code == row.code
    with pytest.raises(class_for_code(row.code)):
        check(row.example, provider=provider, tools=row.tools)
    assert diagnose(row.example, tools=row.tools) is not None  # the shape alone names the vendor


@pytest.mark.parametrize("name", NAMES)
def test_tables_name_only_registered_codes(name: str) -> None:
    """Every code a table can give is in the registry."""
    module = adapter(name)
    codes = {row.code for row in module.TABLE}
    codes |= {fixed[0] for fixed in getattr(module, "CLASSES", {}).values() if fixed}
    codes |= {row.code for row in getattr(module, "STOP_REASONS", ())}
    assert codes <= set(CODES), codes - set(CODES)
    for row in module.TABLE:
        assert row.when, row
