"""The public Python API: one synchronous function per command, each returning a typed result.

    import deflectbench as db

    result = db.run(models=["openai-compatible/my-model"], claims=["L1_US_01"], db="x.db")
    summary = db.analyze("x.db")            # a typed result; .to_json() is `analyze --json`
    summary.rates                           # the tables as pandas DataFrames

The command line parses its flags into the same arguments, calls these functions and renders
what they return with :mod:`deflectbench.views`; the report, the web pages and the Inspect task
render the same objects. Modules: ``run`` (run, run_async, judge, status), ``results`` (analyze,
report, audit, import_, export, merge, spec), ``labels`` (validate, calibrate), ``compare``
(compare, leaderboard), ``plan`` (plan). Names are re-exported from :mod:`deflectbench`
itself, loaded on first use; what is public is what ``deflectbench.__all__`` lists
(docs/python-api.md, stability).
"""
