"""Credentials never survive scrubbing: whole, partly echoed, or under a configured name."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deflectbench.secrets import REDACTED, scrub, watch_env

KEY = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
ENV = {"OPENAI_API_KEY": KEY, "HOME": "/root"}


def test_whole_key_is_scrubbed():
    assert scrub(f"Incorrect API key provided: {KEY}.", ENV) == (
        f"Incorrect API key provided: {REDACTED}."
    )


def test_a_partial_echo_of_the_key_is_scrubbed():
    # a server that echoes the key truncated, or masked in the middle
    for leak in (KEY[:20], KEY[-12:], KEY[:10] + "****" + KEY[-9:]):
        out = scrub(f"401: key {leak} is invalid", ENV)
        assert "Ab3dEf6h" not in out and KEY[-8:] not in out and REDACTED in out


def test_short_runs_and_ordinary_text_are_left_alone():
    text = "sk-proj is a prefix; the claim is about the economy."
    assert scrub(text, ENV) == text


def test_a_configured_key_variable_with_an_ordinary_name_is_scrubbed():
    env = {"MY_CLUSTER_CREDENTIAL": "zz-9f8e7d6c5b4a3210"}
    assert scrub("echo zz-9f8e7d6c5b4a3210", env) == "echo zz-9f8e7d6c5b4a3210"
    watch_env(["MY_CLUSTER_CREDENTIAL"])
    assert scrub("echo zz-9f8e7d6c5b4a3210", env) == f"echo {REDACTED}"


@given(st.text(max_size=60), st.integers(0, len(KEY) - 8), st.integers(8, len(KEY)))
def test_no_run_of_8_key_characters_survives(prefix, start, length):
    leak = KEY[start : start + length]
    out = scrub(prefix + leak + prefix, ENV)
    assert not any(KEY[i : i + 8] in out for i in range(len(KEY) - 7))


def test_the_process_environment_is_read_again_when_it_changes(monkeypatch):
    """``scrub`` without ``env`` reads ``os.environ`` again only when it changed (issue 37: a
    decode of every variable per scrub was a quarter of a run's client CPU): a key set, changed
    or removed between two scrubs is honoured at once."""
    other = "sk-ant-Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2c"
    monkeypatch.delenv("DFB_TEST_API_KEY", raising=False)
    assert scrub(f"echo {KEY}") == f"echo {KEY}"  # read once: no such key yet
    monkeypatch.setenv("DFB_TEST_API_KEY", KEY)
    assert scrub(f"echo {KEY}") == f"echo {REDACTED}"
    monkeypatch.setenv("DFB_TEST_API_KEY", other)
    assert scrub(f"echo {other}") == f"echo {REDACTED}"
    monkeypatch.delenv("DFB_TEST_API_KEY")
    assert scrub(f"echo {other}") == f"echo {other}"
    watch_env(["DFB_TEST_PLAIN_NAME"])  # a configured name: watched from now on
    monkeypatch.setenv("DFB_TEST_PLAIN_NAME", other)
    assert scrub(f"echo {other}") == f"echo {REDACTED}"
