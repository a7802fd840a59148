"""Reading a failure: facts, the provider tables and the one reading order (``_rules.classify``),
the families of wording, hints and walls, the stream state machines' interface."""
