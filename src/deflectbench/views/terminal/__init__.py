"""The terminal's views: rich tables and lines rendered from typed results (model text escaped:
it is untrusted). The command line prints what these return; it builds no table itself."""
