"""The plugin's `conversation_diff` and `assert_same_conversation`, used as a user would: a
separate test run that imports them from `dsh_inspect.testing`."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # a pytest run of its own with the plugin's server, no browser: not the browser lane

USER_TESTS = """
from dsh_inspect.testing import assert_same_conversation, conversation_diff


def run(result, answer="Done.", call="call_1"):
    return [
        {"type": "turn/start", "data": {"turn": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 1}},
        {"type": "user/message", "surfaceOp": "append",
         "data": {"id": "{{messageId}}-u", "role": "user", "content": [{"type": "text", "text": "Read a.txt"}],
                  "source": {"kind": "user"}}},
        {"type": "request/header",
         "data": {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}},
        {"type": "assistant/message", "surfaceOp": "append", "sourceEventSeqs": [],
         "data": {"turn": 1, "step": 1, "message": {"id": "{{messageId}}-a", "role": "assistant",
                  "content": [{"type": "tool-call", "id": call, "name": "read", "arguments": "{}"}],
                  "source": {"kind": "model", "provider": "p", "model": "m"}}}},
        {"type": "tool/call", "data": {"turn": 1, "step": 1, "callId": call, "name": "read", "arguments": "{}"}},
        {"type": "tool/result", "surfaceOp": "append", "sourceEventSeqs": [5],
         "data": {"turn": 1, "step": 1, "message": {"id": "{{messageId}}-r", "role": "user",
                  "content": [{"type": "tool-result", "toolCallId": call, "isError": False,
                               "content": [{"type": "text", "text": result}]}],
                  "source": {"kind": "tool", "callId": call}}}},
        {"type": "step/end", "data": {"turn": 1, "step": 1}},
        {"type": "step/start", "data": {"turn": 1, "step": 2}},
        {"type": "assistant/message", "surfaceOp": "append", "sourceEventSeqs": [],
         "data": {"turn": 1, "step": 2, "message": {"id": "{{messageId}}-b", "role": "assistant",
                  "content": [{"type": "text", "text": answer}],
                  "source": {"kind": "model", "provider": "p", "model": "m"}}}},
        {"type": "step/end", "data": {"turn": 1, "step": 2}},
        {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]


def test_the_same_run_twice_is_the_same_conversation(seed_session):
    assert_same_conversation(run("alpha", call="c-1"), run("alpha", call="c-2"))  # ids differ: never compared
    assert_same_conversation(seed_session(run("alpha")), run("alpha"))


def test_the_diff_names_the_result_step_and_the_step_that_read_it():
    diff = conversation_diff(run("alpha"), run("beta", answer="Done differently."))
    assert (diff.first_divergence.a, diff.first_divergence.part) == ("1.1", "result")
    assert diff.request_divergence.a == "1.2" and diff.output_divergence.a == "1.2"
    assert conversation_diff(run("alpha"), run("beta"), ignore=("tool_result:read",)).same


def test_a_typo_in_ignore_is_an_error():
    import pytest
    with pytest.raises(ValueError, match="tool_result:<name>"):
        conversation_diff(run("a"), run("a"), ignore=("tool-results",))


def test_a_different_result_fails_with_the_first_divergence():
    assert_same_conversation(run("alpha"), run("beta"))
"""


def test_the_plugin_compares_conversations(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q")
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    assert "FAILED test_user.py::test_a_different_result_fails_with_the_first_divergence" in out
    # the failure message shows the divergence in a few readable lines
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: the conversations differ",
            "*first divergence: step 1.1 (result of read)",
            "*a: alpha",
            "*b: beta",
            "*request divergence: step 1.2 (messages, from message 3)",
            "*output divergence: none",
        ]
    )
