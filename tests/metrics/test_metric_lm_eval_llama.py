"""The ``biodivergence`` lm-evaluation-harness tasks end to end against a real llama.cpp server
(xllamacpp, serving SmolLM2-135M-Instruct on 127.0.0.1) through lm-eval's
OpenAI-compatible ``local-chat-completions`` model, on a small local release: the harness's numbers
must be the metric's on the answers the server generated. Answer quality is not checked.

Only the generation tasks (axes, confounder) run here. The multiple-choice conflict-type task needs
prompt loglikelihoods from ``local-completions`` (``echo`` + ``logprobs``) and an HF tokenizer matching
the GGUF's to count context tokens, and none is available offline. Use a vLLM server (or the ``hf``
model, tests/metrics/test_metric_lm_eval.py) for that task.
"""

from __future__ import annotations

import json

import pytest
from llm_server import chat_requests_served
from lm_eval_tasks import TASKS_DIR, scored, utils
from release_factory import write_small_release

pytestmark = pytest.mark.slow
TASKS = ["biodivergence_axes", "biodivergence_confounder"]
LIMIT = 3  # the small release's whole test split


@pytest.fixture(scope="module")
def served(tmp_path_factory, llama):
    import lm_eval
    from lm_eval.tasks import TaskManager

    root = tmp_path_factory.mktemp("lm_eval_llama")
    release = write_small_release(root / "release")
    tasks = TaskManager(include_path=str(TASKS_DIR), metadata={"dataset_path": str(release)})
    url, log = llama
    before = chat_requests_served(log)
    # tokenizer_backend=None: the server tokenizes, lm-eval downloads no tokenizer (offline)
    model_args = (f"model=smollm2,base_url={url}/chat/completions,tokenizer_backend=None,"
                  "tokenized_requests=False,num_concurrent=1,max_retries=1,timeout=120")
    run = lm_eval.simple_evaluate(model="local-chat-completions", model_args=model_args, tasks=TASKS,
                                  task_manager=tasks, apply_chat_template=True, limit=LIMIT, log_samples=True)
    return run, chat_requests_served(log) - before


def test_harness_reports_the_metric_numbers_on_the_served_answers(served):
    run, requests = served
    results = run["results"]
    assert results["biodivergence_axes"]["sample_len"] == 3
    assert results["biodivergence_confounder"]["sample_len"] == 2  # test rows whose reference names a confounder
    assert requests == 3 + 2  # every answer came from the llama.cpp server
    answers = [s["filtered_resps"][0] for t in TASKS for s in run["samples"][t]]
    assert all(isinstance(a, str) for a in answers) and any(a.strip() for a in answers)
    axes = scored(run, "biodivergence_axes", "divergence_axes", lambda s: utils.parse_axes(s["filtered_resps"][0]))
    for key in ("micro_f1", "macro_f1", "exact_match"):
        assert results["biodivergence_axes"][f"{key},none"] == pytest.approx(axes[f"axes/{key}"])
    confounder = scored(run, "biodivergence_confounder", "dominant_confounder",
                        lambda s: utils.parse_confounder(s["filtered_resps"][0]))
    assert results["biodivergence_confounder"]["accuracy,none"] == pytest.approx(confounder["confounder/accuracy"])


def test_requests_are_chat_messages_with_the_task_prompt(served):
    run, _ = served
    for task, prompt in (("biodivergence_axes", utils.axes_prompt), ("biodivergence_confounder", utils.confounder_prompt)):
        for sample in run["samples"][task]:
            (chat,), _gen_kwargs = sample["arguments"][0]  # the chat history lm-eval sent, as JSON
            assert json.loads(chat) == [{"role": "user", "content": prompt(sample["doc"])}]
