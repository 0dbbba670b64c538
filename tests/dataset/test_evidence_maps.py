"""The evidence maps in a release: written beside the configs, declared by the card, read back with
``load_dataset``, checked by ``validate`` and printed by ``biodivergence map``."""

from __future__ import annotations

import pytest
from datasets import get_dataset_config_names, load_dataset
from release_factory import write_small_release

from biodivergence_cli.main import main
from biodivergence_dataset import card, evidence_maps, ontology
from biodivergence_dataset.features import rounded
from biodivergence_dataset.records import EvidenceMap, MapClaim, MapCondition, MapConflict, MapStudy
from biodivergence_dataset.validate import validate_release


def study(article: str, direction: str, agrees: bool | None, group: str, conflicts: list[str]) -> MapStudy:
    text = f"Falls in {group} were {direction.replace('_', ' ')} with resistance exercise than with usual care."
    return MapStudy(article_uid=article, pub_year=2011, direction=direction, significance="significant",
                    agrees=agrees, group=group,
                    claims=[MapClaim(claim_id=f"c{article[-1]}", text=text, finding=direction, confidence=0.8125)],
                    conditions=[MapCondition(axis="population_cohort", text=group)], conflict_pair_ids=conflicts)


def falls_map() -> EvidenceMap:
    conflict = MapConflict(pair_id="p13", article_uid_a="pmid:1", article_uid_b="pmid:3", claim_a_id="c1",
                           claim_b_id="c3", conflict_type=ontology.CONTEXTUAL, divergence_axes=["population_cohort"],
                           dominant_confounder="population_cohort", split="test")
    return EvidenceMap(
        question_id="falls/exercise", question="In older adults, does resistance exercise reduce falls?",
        intervention="resistance exercise", outcome="falls", pooled_direction="decrease", n_studies=3, n_agree=2,
        n_disagree=1, n_unread=0, grouping_axis="population_cohort",
        studies=[study("pmid:1", "decrease", True, "community-dwelling women", ["p13"]),
                 study("pmid:2", "decrease", True, "community-dwelling men", []),
                 study("pmid:3", "no_difference", False, "nursing home residents", ["p13"])],
        conflicts=[conflict])


@pytest.fixture(scope="module")
def mapped_release(tmp_path_factory):
    root = write_small_release(tmp_path_factory.mktemp("release"))
    empty = EvidenceMap(question_id="falls_vitamin_d", question="Does vitamin D reduce falls?",
                        pooled_direction="not_reported", n_studies=1, n_agree=0, n_disagree=0, n_unread=1,
                        studies=[study("pmid:9", "not_reported", None, "", [])])
    drawn = []
    evidence_maps.write_maps(root, [falls_map(), empty], lambda m, path: drawn.append(path) or path.write_bytes(b"x"))
    card.write_card(root)
    return root, drawn


def test_maps_read_back_with_load_dataset(mapped_release):
    root, _ = mapped_release
    assert ontology.EVIDENCE_MAP_CONFIG in get_dataset_config_names(str(root))
    ds = load_dataset(str(root), ontology.EVIDENCE_MAP_CONFIG)
    assert list(ds) == [ontology.EVIDENCE_MAP_SPLIT]
    rows = ds[ontology.EVIDENCE_MAP_SPLIT]
    assert rows.num_rows == 2
    assert EvidenceMap.parse(rounded(rows[0])) == falls_map()
    assert rows[0]["studies"][2]["agrees"] is False and rows[1]["studies"][0]["agrees"] is None
    # the benchmark's configs are untouched
    assert set(load_dataset(str(root), ontology.DEFAULT_CONFIG)) == {"train", "validation", "test"}


def test_release_with_maps_validates_and_files_are_owned(mapped_release):
    root, drawn = mapped_release
    report = validate_release(root)
    assert report.ok, report.problems
    assert report.rows[ontology.EVIDENCE_MAP_CONFIG] == {ontology.EVIDENCE_MAP_SPLIT: 2}
    assert [p.name for p in drawn] == ["falls_exercise.png", "falls_vitamin_d.png"]
    assert (root / "evidence_map" / "falls_exercise.md").is_file()


def test_card_links_the_maps_and_counts_agreement(mapped_release):
    root, _ = mapped_release
    text = (root / "README.md").read_text(encoding="utf-8")
    assert "## Evidence maps" in text
    line = next(x for x in text.splitlines() if x.startswith("| `falls/exercise`"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1:7] == ["3", "2", "1", "0", "1", "lower"]
    assert "[table](evidence_map/falls_exercise.md)" in line and "[plot](evidence_map/falls_exercise.png)" in line


def test_map_command_prints_the_question_table(mapped_release, capsys):
    root, _ = mapped_release
    assert main(["map", "--release", str(root), "--question", "falls/exercise"]) == 0
    out = capsys.readouterr().out
    assert "Pooled direction **lower**" in out and "2 agree, 1 disagree" in out
    rows = [x for x in out.splitlines() if x.startswith("| pmid:")]
    assert [r.split("|")[1].strip() for r in rows] == ["pmid:1", "pmid:2", "pmid:3"]
    assert "| nursing home residents | no difference | significant | **no** |" in rows[2]
    assert "| `p13` | pmid:1 | pmid:3 | contextual_contradiction | population_cohort | test |" in out


def test_map_command_names_the_questions_it_has(mapped_release, capsys):
    root, _ = mapped_release
    assert main(["map", "--release", str(root), "--question", "nope"]) == 1
    assert "questions with a map: falls/exercise, falls_vitamin_d" in capsys.readouterr().err
    assert main(["map", "--release", str(root)]) == 0
    assert "| falls_vitamin_d | 1 | 0 | 0 | 1 | 0 | not reported |" in capsys.readouterr().out
