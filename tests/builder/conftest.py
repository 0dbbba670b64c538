"""Fixtures shared by the builder's test modules."""

from __future__ import annotations

import pytest
from question_packs import compiled_pack


@pytest.fixture(scope="module")
def comparisons(tmp_path_factory):
    return compiled_pack(tmp_path_factory.mktemp("cmp") / "p.yaml", """
questions:
  - {id: vs_placebo, text: "After myocardial infarction, do ACE inhibitors reduce mortality compared with placebo?"}
  - {id: no_comparator, text: "In heart failure, do beta blockers reduce mortality?"}
  - {id: head_to_head, text: "Does tolterodine cause less dry mouth than oxybutynin?"}
  - {id: vs_others, text: "Do calcium channel blockers increase cardiovascular events compared with other antihypertensive drugs?"}
  - {id: met_vs_su, text: "Is metformin more effective than sulfonylureas for glycemic control?"}
""")
