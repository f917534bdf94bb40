"""Test support: the planted-data fixture generator, local wire-format servers, fake models."""
