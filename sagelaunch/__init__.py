"""sagelaunch, the application: the `sagelaunch` command and the glue that joins the libraries.

The libraries (`estimators`, `profiler_config`, `launcher`, `profiler`, `modelparallel`, over the
neutral `jobspec`) never import this package; it may import all of them.
"""
