"""Carrying harness errors over protocols: each module turns a ``HarnessError`` into a wire
form and back. Bindings know the core only, never a provider."""

__all__: list[str] = []
