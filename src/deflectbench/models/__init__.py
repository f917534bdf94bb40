"""Talking to models: one small async interface (:mod:`deflectbench.models.base`, where every
module and plugin imports it from), one module per wire protocol, a registry."""
