"""``wrap()``: calls, results, streams and drop-ins; ``normalized``; cassettes and how a replay
calls each SDK."""
