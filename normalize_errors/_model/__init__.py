"""The error model: the registry of codes, the error classes and their constructor, the problem
object, pickling, drop-ins and exception groups."""
