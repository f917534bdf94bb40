"""Analysis: pure statistics over stored judgments, and the paper's tables."""
