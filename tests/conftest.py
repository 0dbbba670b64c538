"""Session-wide fixtures, the things that are expensive to make and the same for every test that reads them
(a model loaded from the package), and the llama.cpp server of the modules that talk to one. A test that changes
one makes its own instead. Also the fixtures that several test modules of one folder share (``comparisons``,
``metric``): a second ``conftest.py`` in a folder would clash with this one under ``--doctest-modules``.

The shared helpers these fixtures use live in ``tests/support`` (on ``sys.path`` through pytest's ``pythonpath``).
"""

from __future__ import annotations

import pytest

#: Fixtures that train a model or start a real server: a test that uses one is slow (``make test`` leaves it out).
SLOW_FIXTURES = frozenset({"llama", "trained", "suite_run", "judge_dir"})


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A llama.cpp server (SmolLM2-135M-Instruct) for the module: its ``/v1`` URL and its log, from which a test
    counts the completions it asked for (``chat_requests_served`` before and after). One per module, not per
    session: the clean-interrupt tests stop and count every process the test process started, a server included."""
    from llm_server import llama_server

    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama_server(log) as url:
        yield url, log


@pytest.fixture(scope="session")
def reader():
    """The shipped finding reader, loaded once (it caches its readings; they depend on the input alone)."""
    from builder.reader import load_reader

    return load_reader()


@pytest.fixture(scope="session")
def answerer():
    """The shipped question answerer, loaded once."""
    from builder.reader.answerer import load_answerer

    return load_answerer()


@pytest.fixture(scope="session")
def reader_annotator():
    """The reader annotator with the shipped reader, answerer and lexicon; it loads its models on first use."""
    from builder.annotators.reader_annotator import ReaderAnnotator

    return ReaderAnnotator()


@pytest.fixture(scope="module")
def comparisons(tmp_path_factory):
    """Five clinical questions, compiled, one per kind of comparison (the question modules of tests/builder)."""
    from question_packs import compiled_pack

    return compiled_pack(tmp_path_factory.mktemp("cmp") / "p.yaml", """
questions:
  - {id: vs_placebo, text: "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?"}
  - {id: no_comparator, text: "In heart failure, do beta blockers reduce mortality?"}
  - {id: head_to_head, text: "Does tolterodine cause less dry mouth than oxybutynin?"}
  - {id: vs_others, text: "Do calcium channel blockers increase cardiovascular events compared with other antihypertensive drugs?"}
  - {id: met_vs_su, text: "Is metformin more effective than sulfonylureas for glycemic control?"}
""")


@pytest.fixture(scope="module")
def metric():
    """The metric's evaluate module, loaded offline from its folder (the metric modules of tests/metrics)."""
    from metric_records import METRIC_DIR

    from trainer.metric import load_metric

    return load_metric(METRIC_DIR)
