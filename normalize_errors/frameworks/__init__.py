"""Integrations with frameworks. Each module imports its framework only when it is used."""

__all__: list[str] = []
