"""Gathering a question's abstracts from a local corpus, the cohen2006 source, collect --questions."""

from __future__ import annotations

import os

import pytest
from question_packs import write_pack
from repo_paths import REPO, SHARED_DATA

from biodivergence_dataset import io, ontology
from biodivergence_dataset.records import Abstract
from builder import gather, questionpacks
from builder.sources import RawRecord, SourceSpec

os.environ.setdefault("HF_HUB_OFFLINE", "1")


COHEN = SHARED_DATA / "cohen2006_drug_class_reviews"


def test_cohen2006_reader_reads_every_row_of_the_real_csvs():
    records = [r for r in SourceSpec.parse(f"cohen2006:{COHEN}").items() if isinstance(r, RawRecord)]
    assert len(records) == 15268  # SOURCE.md: rows
    with_text = [r for r in records if r.sections]
    assert len(with_text) == 13730 and len(records) - len(with_text) == 1538  # SOURCE.md: with abstract / empty
    assert all(r.pmid and r.pmid.isdigit() for r in records)
    assert len({r.pmid for r in records}) == 13938  # SOURCE.md: distinct PMIDs
    years = [r.year for r in with_text if r.year]
    assert min(years) >= 1991 and max(years) <= 2003
    assert any("\n" in text for r in with_text for _, text in r.sections) or all(r.title for r in with_text)


def test_a_table_source_reads_only_the_rows_its_where_option_names(tmp_path):
    """``where=COLUMN:VALUE``: a review's included studies (SOURCE.md: 761 of 15,268 rows), each at its own row
    number in its file; a column that is not there is an error naming it."""
    included = [r for r in SourceSpec.parse(f"cohen2006[where=label_included:1]:{COHEN}").items()
                if isinstance(r, RawRecord)]
    assert len(included) == 761
    everything = {(r.path, r.position): r.pmid for r in SourceSpec.parse(f"cohen2006:{COHEN}").items()
                  if isinstance(r, RawRecord)}
    assert all(everything[r.path, r.position] == r.pmid for r in included)
    by_number = SourceSpec.parse(f"cohen2006[where=7:1]:{COHEN}/Triptans.csv").items()  # label_included: column 7
    assert sum(isinstance(r, RawRecord) for r in by_number) == 24  # SOURCE.md: Triptans included
    with pytest.raises(ValueError, match=r"ACEInhibitors\.csv: cohen2006 option where='label_inclded:1'"):
        list(SourceSpec.parse(f"cohen2006[where=label_inclded:1]:{COHEN}").items())
    with pytest.raises(ValueError, match="COLUMN:VALUE"):
        list(SourceSpec.parse(f"cohen2006[where=label_included]:{COHEN}").items())


def test_gather_keeps_each_questions_best_abstracts_and_records_who_retrieved_them(tmp_path):
    texts = {
        "pmid:1": "Omeprazole healed erosive esophagitis in 80% of patients at 8 weeks.",
        "pmid:2": "Lansoprazole and omeprazole gave similar healing rates of erosive esophagitis.",
        "pmid:3": "Sumatriptan relieved migraine pain at 2 hours more often than placebo.",
        "pmid:4": "Rizatriptan gave faster pain relief than sumatriptan in migraine attacks.",
        "pmid:5": "Hip fractures were common in nursing homes.",
    }
    abstracts = [Abstract(article_uid=uid, text=t, domain="clinical_trials_epidemiology") for uid, t in texts.items()]
    io.write_records(tmp_path / "abstracts", abstracts, io.StageStats("ingest"))
    pack = write_pack(tmp_path / "p.yaml", """
questions:
  - {id: ppi, text: "Do proton pump inhibitors differ in healing rates of erosive esophagitis?"}
  - {id: trp, text: "Is rizatriptan more effective than sumatriptan for pain relief at 2 hours?"}
""")
    stats = gather.run_stage(tmp_path / "abstracts", tmp_path / "gathered", gather.GatherConfig(pack=str(pack), top_n=2))
    kept = {a.article_uid for a in io.read_records(tmp_path / "gathered", Abstract)}
    assert kept == {"pmid:1", "pmid:2", "pmid:3", "pmid:4"}
    assert stats["dropped_not_retrieved"] == 1 and stats["abstracts_per_question"] == {"ppi": 2, "trp": 2}
    rows = list(io.read_jsonl(tmp_path / "gathered" / gather.RETRIEVED_FILE))
    assert {(r["question_id"], r["article_uid"]) for r in rows} == {
        ("ppi", "pmid:1"), ("ppi", "pmid:2"), ("trp", "pmid:3"), ("trp", "pmid:4")}
    assert [r["rank"] for r in rows if r["question_id"] == "trp"] == [1, 2]
    # the class in the question is searched by its member drugs
    assert "omeprazole" in gather.query_tokens(questionpacks.load_questions(pack)[0])


def test_gather_on_a_corpus_without_a_word_it_reads_keeps_nothing_and_says_so(tmp_path):
    """Abstracts in a script the tokenizer does not read give empty documents: nothing is retrieved (BM25 over
    documents of no length would divide by zero)."""
    texts = {"pmid:1": "オメプラゾールは食道炎を治癒した。", "pmid:2": "Омепразол 20 мг."}
    io.write_records(tmp_path / "abstracts", [Abstract(article_uid=uid, text=t, domain="clinical_trials_epidemiology")
                                             for uid, t in texts.items()], io.StageStats("ingest"))
    pack = write_pack(tmp_path / "p.yaml", "questions:\n  - {id: ppi, text: \"Does omeprazole heal esophagitis?\"}\n")
    stats = gather.run_stage(tmp_path / "abstracts", tmp_path / "gathered", gather.GatherConfig(pack=str(pack)))
    assert stats["kept"] == 0 and stats["dropped_not_retrieved"] == 2 and stats["abstracts_per_question"] == {"ppi": 0}


def test_build_runs_gather_and_questions_only_with_a_pack(tmp_path):
    from builder import build

    plain = build.BuildConfig(sources=["jsonl:x.jsonl"])
    assert [s.name for s in build.active_steps(plain)] == [s.name for s in build.STEPS if not s.needs]
    claims_step = next(s for s in build.STEPS if s.name == "claims")
    assert build.step_input(claims_step, plain) == "abstracts"
    asked = build.BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": "p.yaml"}, gather={"top_n": 5})
    assert [s.name for s in build.active_steps(asked)][:5] == ["ingest", "gather", "claims", "questions", "mine"]
    assert build.step_input(claims_step, asked) == "gathered"
    mine_step = next(s for s in build.STEPS if s.name == "mine")
    assert mine_step.config_section(asked, tmp_path)["questions_dir"] == str(tmp_path / "questions")
    q_step = next(s for s in build.STEPS if s.name == "questions")
    assert q_step.config_section(asked, tmp_path)["cache_dir"] == str(tmp_path / "embedding_cache")
    assert mine_step.config_section(asked, tmp_path)["cache_dir"] == str(tmp_path / "embedding_cache")
    # ingest keeps a record no query pack places in the questions' one domain (a question naming none is clinical)
    ingest_step = next(s for s in build.STEPS if s.name == "ingest")
    pack = write_pack(tmp_path / "p.yaml", 'questions:\n  - {id: q1, text: "Do statins reduce blood pressure?"}\n')
    with_pack = build.BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": str(pack)})
    assert ingest_step.config_section(with_pack, tmp_path)["fallback_domain"] == ontology.QUESTION_DOMAIN
    assert "fallback_domain" not in ingest_step.config_section(plain, tmp_path)
    two = write_pack(tmp_path / "two.yaml", 'questions:\n  - {id: q1, text: "Do statins reduce blood pressure?"}\n'
                                            '  - {id: q2, text: "Does BRCA1 raise breast cancer risk?", domain: genomics}\n')
    mixed = build.BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": str(two)})
    assert ingest_step.config_section(mixed, tmp_path)["fallback_domain"] is None


def test_collect_builds_one_query_per_question(tmp_path):
    from builder.collect import CollectConfig, planned_queries, question_queries

    pack = write_pack(tmp_path / "p.yaml", """
questions:
  - {id: a, text: "Do statins reduce blood pressure?", domain: clinical_trials_epidemiology}
  - {id: b, text: "Is olanzapine as safe as risperidone?", query: "olanzapine AND risperidone"}
""")
    config = CollectConfig(questions=str(pack), query_domain="oncology")
    assert question_queries(config) == [
        ("a", "clinical_trials_epidemiology", '"statins"[tiab] AND "blood pressure"[tiab]'),
        ("b", "oncology", "olanzapine AND risperidone")]
    assert planned_queries([], config) == [(d, q) for _, d, q in question_queries(config)]


def test_question_demo_config_builds_from_the_cohen_corpus_with_its_pack():
    from builder import build

    repo = REPO
    config = build.load_config(repo / "builder" / "configs" / "demo.yaml")
    sources = build.resolve_sources(config, repo)
    assert [SourceSpec.parse(s).format for s in sources] == ["cohen2006"]
    assert len(SourceSpec.parse(sources[0]).files()) == 14
    assert [s.name for s in build.active_steps(config)][:5] == ["ingest", "gather", "claims", "questions", "mine"]
    for step in build.active_steps(config):
        step.make_config(step.config_section(config))
    assert len(questionpacks.load_questions(repo / config.questions["pack"])) >= 40
    assert config.annotate["annotator"] == "reader" and config.mine["slot_similarity"] is False
