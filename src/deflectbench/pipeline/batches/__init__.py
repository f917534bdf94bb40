"""Batch mode: the same pipeline reaching a provider through its batch API (half the price,
its own limits, up to 24 hours), resumable across processes through the store. The batch API
is the model's own (:meth:`~deflectbench.models.base.Model.batch_api`); what ``status`` does
with what comes back (collect, resend, judge, say what turn 2 awaits) is :mod:`.follow`."""

from deflectbench.models.batch_api import ANTHROPIC_LIMITS, OPENAI_LIMITS, Limits
from deflectbench.pipeline.batches.collect import CANCELLED_BY_USER
from deflectbench.pipeline.batches.jobs import cell_id
from deflectbench.pipeline.batches.mode import MAX_ATTEMPTS, BatchMode
from deflectbench.pipeline.batches.submit import BatchSummary, batch_api

__all__ = [
    "ANTHROPIC_LIMITS",
    "CANCELLED_BY_USER",
    "MAX_ATTEMPTS",
    "OPENAI_LIMITS",
    "BatchMode",
    "BatchSummary",
    "Limits",
    "batch_api",
    "cell_id",
]
