"""All Ray work: connecting to a cluster, the drivers of `verify --ray` / `autotune --ray`, and the task functions
workers run."""
