"""The check rules; importing this package registers every rule with the walker."""
from __future__ import annotations

from . import arch, copy, fragment_constant_index, fragment_owners, gemm, indexing, reduce, structure  # noqa: F401
from . import coverage, cross_block_reads, init, kloop, overflow, params, races  # noqa: F401  (data-flow, per launch)
