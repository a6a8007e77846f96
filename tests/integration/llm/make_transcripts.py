#!/usr/bin/env python3
"""Writes the scripted transcripts of the LLM brain's tests from kernels/*.cpp (run it after
editing a kernel; the JSON files are checked in)."""
import json, pathlib

here = pathlib.Path(__file__).parent
k = lambda name: (here / "kernels" / name).read_text()
code = lambda src, words="Here is the kernel.": f"{words}\n\n```cpp\n{src}```\n"

def plan(strategy, effect="1.5x", analysis="The reference is a scalar loop over each row."):
    return (f"## Analysis\n{analysis}\n## Bottleneck\nOne dependent chain of adds per row.\n"
            f"## Strategy\n{strategy}\n## Expected effect\n{effect}: the adds overlap.\n")

def ex(role, content, **kw):
    return dict(role=role, content=content, **kw)

story = {
    "models": ["coder"],
    "context_length": 32768,
    "exchanges": [
        ex("planner", plan("Hoist one reciprocal square root per row out of the inner loop.")),
        ex("implementer", code(k("i1_no_compile.cpp"))),
        ex("debugger", code(k("d1_fixed.cpp"), "The variable was used before its declaration.")),
        ex("planner", plan("Write the row sum with fewer operations.")),
        ex("implementer", code(k("i2_wrong_mean.cpp"))),
        ex("debugger", "I do not see the bug; the kernel looks right to me."),
        ex("debugger", "Still no idea, sorry."),
        ex("planner", plan("Split the rows in two halves.")),
        ex("implementer", code(k("i3_half_rows.cpp"))),
        ex("debugger", code(k("d3_same_as_i2.cpp"))),
        ex("planner", plan("Eight independent partial sums per row, and one reciprocal.", "2x")),
        ex("implementer", code(k("i4_fast.cpp"))),
        ex("planner", plan("stop", "1x", "The best is close to what this row length allows.")),
    ],
}
(here / "story.json").write_text(json.dumps(story, indent=1) + "\n")

# The story for the kill: the second plan's first request hangs (the test kills kforge while
# it waits, so no answer is ever lost between the server and the store); the resumed run asks
# again and gets the story's second plan.
killed = dict(story, exchanges=story["exchanges"][:3] +
              [dict(role="planner", delay_s=600, content="never delivered")] +
              story["exchanges"][3:])
(here / "story_killed.json").write_text(json.dumps(killed, indent=1) + "\n")

# The mixed team: the LLM plans catalog strategies, the built-in implementer applies them.
mixed = {
    "models": ["coder"],
    "exchanges": [
        ex("planner", plan("vectorize_inner")),
        ex("planner", plan("rfactor_reduction")),
        ex("planner", plan("stop", "1x")),
    ],
}
(here / "mixed.json").write_text(json.dumps(mixed, indent=1) + "\n")

# A cost budget reached mid-run: each reply is priced well over the run's budget of $0.01.
budget = {
    "models": ["coder"],
    "exchanges": [
        ex("planner", plan("Eight independent partial sums per row.", "2x"),
           prompt_tokens=4000, completion_tokens=1000),
        ex("implementer", code(k("i4_fast.cpp")), prompt_tokens=4000, completion_tokens=1000),
        ex("planner", plan("Write the row sum with fewer operations.")),
        ex("implementer", code(k("i2_wrong_mean.cpp"))),
        ex("debugger", "I do not see the bug."),
        ex("debugger", "Still no idea."),
        ex("planner", plan("stop", "1x")),
    ],
}
(here / "budget.json").write_text(json.dumps(budget, indent=1) + "\n")

# Faults of the endpoint and of the model's replies, through `kforge optimize` (the settings
# give each attempt 3 s and one retry): a 429 with Retry-After and a 500 are retried; a body
# that is not JSON and a reply cut short are each asked again once (the second break fails the
# step: not applicable); a reply with no code block is asked again, and the re-ask's first
# attempt hangs past the timeout and is retried; then a 401 stops the run, resumable. The
# resumed run answers from its record and asks the model only for the planner's stop.
faults = {
    "models": ["coder"],
    "exchanges": [
        dict(role="planner", status=429, retry_after="1"),
        ex("planner", plan("Hoist one reciprocal square root per row.")),
        dict(role="implementer", status=500),
        dict(role="implementer", body="{not json"),
        ex("implementer", code(k("i4_fast.cpp")), finish_reason="length"),
        ex("planner", plan("Eight independent partial sums per row, and one reciprocal.", "2x")),
        ex("implementer", "The kernel is the one you asked for, with eight partial sums."),
        dict(role="implementer", delay_s=5, content="late: never read"),
        ex("implementer", code(k("i4_fast.cpp"))),
        dict(role="planner", status=401),
        ex("planner", plan("stop", "1x", "The best is close to what this row length allows.")),
    ],
}
(here / "faults.json").write_text(json.dumps(faults, indent=1) + "\n")

# `kforge chat --brain implementer=llm`: a person's free-text instruction (`apply TEXT`) is the
# implementer's plan; the model answers it with a kernel.
chat = {
    "models": ["coder"],
    "exchanges": [
        ex("implementer", code(k("i4_fast.cpp"), "Eight partial sums per row, as you asked.")),
    ],
}
(here / "chat.json").write_text(json.dumps(chat, indent=1) + "\n")
