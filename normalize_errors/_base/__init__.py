"""The foundation: reading text and headers without raising, bounding and redacting it, the
patterns, the calendar, the provider data files. Nothing here knows the error."""
