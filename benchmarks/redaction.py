"""Redaction on the worst inputs found, at 10 KB, 100 KB and 1 MB, so growth shows in one run.

    python benchmarks/redaction.py

Each row times one entry point on one hostile text (the best of three runs). Redaction is
linear and reads at most ``MAX_REDACT + MARGIN`` characters of a text (or ``limit +
MARGIN`` inside ``upstream``), so the figures stay flat from 100 KB on; only the cut of the
input itself grows with its size.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from normalize_errors import HarnessError, redact
from normalize_errors._base._safe_copy import sanitize

WORST = {
    "JWT heads (eyJ-)": "eyJ-",
    "escaped JWT heads (\\neyJ-)": "\\neyJ-",
    "Authorization lines": "authorization: x\n",
    "URL user information (://a:b/@)": "://a:b/@",
    "token fields (a_token=)": "a_token=",
    "wrapped key heads (sk-proj-a\\n)": "sk-proj-a\n",
    "Bearer words": "Bearer ",
    'quoted values ("password": ")': '"password": "',
    'names of no secret (pageToken=")': 'pageToken="',
    "PEM BEGIN lines": "-----BEGIN PRIVATE KEY-----x-----END ",
    "clean text": "lorem ipsum ",
}
SIZES = (10_000, 100_000, 1_000_000)
ENTRIES: dict[str, Callable[[str], Any]] = {
    "redact": redact,
    "error detail": lambda text: HarnessError.from_code("upstream.invalid_request", text),
    "upstream (64 strings)": lambda text: sanitize({"texts": [text] * 64}),
}


def best(func: Callable[[], Any], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    header = f"{'input':34} {'entry point':22}" + "".join(f"{n // 1000:>9} KB" for n in SIZES)
    print(header)
    print("-" * len(header))
    for label, unit in WORST.items():
        for entry, func in ENTRIES.items():
            cells = []
            for size in SIZES:
                text = (unit * (size // len(unit) + 1))[:size]
                seconds = best(lambda func=func, text=text: func(text))  # type: ignore[misc]
                cells.append(f"{seconds * 1000:9.2f} ms")
            print(f"{label:34} {entry:22}" + " ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
