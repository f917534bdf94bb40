"""Talking to models: one small async interface, one module per wire protocol, a registry."""

from deflectbench.models.base import (
    Completion,
    GenerationParams,
    Limits,
    Message,
    Model,
    ModelError,
    Usage,
)

__all__ = ["Completion", "GenerationParams", "Limits", "Message", "Model", "ModelError", "Usage"]
