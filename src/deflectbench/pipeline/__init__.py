"""The paper's stages, and one pipeline that runs them all at once.

Generate (missing cells -> prompts -> engine -> store) and judge (answers -> blind judge
requests -> engine -> parsed verdicts -> store). The one place that knows both the benchmark
and the engine. A whole run is one stream (:func:`run_stream`): every model generates at once
and each answer goes to every judge as soon as it is stored; the single stages
(:func:`generate`, :func:`judge_with_model`, :func:`judge_lexical`) are the same pipeline with
one lane. Every result is written the moment it arrives, so a run can be stopped at any point
and resumed by running it again. What every stage of one run shares (the store, the pack, the
run, the budget, the cache and retry policy, the stop check, the board) is one
:class:`RunContext`.
"""

from deflectbench.pipeline.board import Board, ProviderLine, Row
from deflectbench.pipeline.context import RunContext
from deflectbench.pipeline.requests import (
    JUDGE_OUTPUT_TOKENS,
    TYPICAL_OUTPUT_TOKENS,
    Requests,
    TokenEstimate,
    answer_from_cache,
    cell_seed,
    condition_settings,
    generation_params,
)
from deflectbench.pipeline.results import (
    Advance,
    StageResult,
    StopCheck,
    StoreWriteError,
    store_errors_stop_the_run,
)
from deflectbench.pipeline.stages import (
    build_judges,
    generate,
    judge_lexical,
    judge_pending,
    judge_with_model,
    pending_for_judge,
)
from deflectbench.pipeline.stream import GenerationTask, JudgeTask, StreamResult, run_stream

__all__ = [
    "JUDGE_OUTPUT_TOKENS",
    "TYPICAL_OUTPUT_TOKENS",
    "Advance",
    "Board",
    "GenerationTask",
    "JudgeTask",
    "ProviderLine",
    "Requests",
    "Row",
    "RunContext",
    "StageResult",
    "StopCheck",
    "StoreWriteError",
    "StreamResult",
    "TokenEstimate",
    "answer_from_cache",
    "build_judges",
    "cell_seed",
    "condition_settings",
    "generate",
    "generation_params",
    "judge_lexical",
    "judge_pending",
    "judge_with_model",
    "pending_for_judge",
    "run_stream",
    "store_errors_stop_the_run",
]
