"""Claim extraction: sentence splitting, cue scanning, claim rules and the `claims` stage on real abstracts."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from repo_paths import SHARED_DATA

from biodivergence_cli import main as cli
from biodivergence_dataset import io, ontology
from biodivergence_dataset.records import Abstract, Claim, Section, claim_id_for
from biodivergence_text import cues
from builder import checks, claim_analysis, claims, sentences

PUBMEDQA = SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json"
SCIFACT = SHARED_DATA / "scifact"
CLINICAL = "clinical_trials_epidemiology"


@pytest.fixture(scope="module")
def pubmedqa() -> list[Abstract]:
    return checks.pubmedqa_abstracts(PUBMEDQA, CLINICAL)


@pytest.fixture(scope="module")
def abstracts_dir(tmp_path_factory, pubmedqa) -> Path:
    out = tmp_path_factory.mktemp("abstracts")
    io.write_records(out, pubmedqa[:200], io.StageStats("ingest"))
    return out


# --- sentence splitting -------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ("Smith et al. reported higher rates vs. controls (p < 0.05). The effect was 2.5-fold.",
     ["Smith et al. reported higher rates vs. controls (p < 0.05).", "The effect was 2.5-fold."]),
    ("E. coli isolates were resistant, i.e. 45.2% of them. mRNA levels rose.",
     ["E. coli isolates were resistant, i.e. 45.2% of them.", "mRNA levels rose."]),
    ("Results are shown in Fig. 2 and No. 3 of the series. p53 was lower (OR 0.5, p=.03).",
     ["Results are shown in Fig. 2 and No. 3 of the series.", "p53 was lower (OR 0.5, p=.03)."]),
    ("Levels of vitamin D. Patients improved! Did they? Yes, e.g. in BRCA1 carriers.",
     ["Levels of vitamin D.", "Patients improved!", "Did they?", "Yes, e.g. in BRCA1 carriers."]),
    ("The odds ratio was 0. 5 (CI 0. 3 to 0. 8) and 1. 09% carried it. In 2005. 25 patients died.",
     ["The odds ratio was 0. 5 (CI 0. 3 to 0. 8) and 1. 09% carried it.", "In 2005.", "25 patients died."]),
])
def test_splitter_survives_biomedical_text(text, expected):
    assert sentences.split(text) == expected


@given(st.lists(st.sampled_from(["The rate was 4.5% (p < 0.01).", "E. coli grew.", "Smith et al. agreed.",
                                 "No change vs. baseline was seen.", "IL-6 rose 2-fold in mice."]),
                min_size=1, max_size=8))
@settings(max_examples=60, deadline=None)
def test_split_spans_are_ordered_trimmed_offsets(parts):
    text = " ".join(parts)
    spans = sentences.split_spans(text)
    assert [text[s:e] for s, e in spans] == parts
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


@pytest.mark.parametrize("text, heading", [
    ("RESULTS: The rate fell.", "RESULTS"), ("Methods: We enrolled 20.", "METHODS"),
    ("PATIENTS AND METHODS Two hundred were seen.", "PATIENTS AND METHODS"),
    ("HIV infection is common.", None), ("Overall, we did.", None),
])
def test_inline_headings(text, heading):
    found, start = sentences.strip_heading(text, 0, len(text), claims._is_section_heading)
    assert found == heading
    assert (start > 0) == (heading is not None)


def test_section_labels_map_to_nlm_categories():
    assert claims.section_category("MAIN OUTCOME MEASURES") == claims.METHODS
    assert claims.section_category("CONCLUSIONS AND RELEVANCE") == claims.CONCLUSIONS
    assert claims.section_category("PRINCIPAL FINDINGS") == claims.RESULTS
    assert claims.section_category("BACKGROUND AND AIMS") == claims.OBJECTIVE
    assert claims.section_category("INTRODUCTION") == claims.BACKGROUND
    assert claims.section_category("UNLABELLED") is None


# --- one-pass cue scanning ----------------------------------------------------------------------------
def test_scanner_equals_finditer_and_single_cue_functions_on_real_sentences(pubmedqa):
    sents = [s for a in pubmedqa[:60] for s in sentences.split(a.text)]
    sents += ["ſtrain İstanbul 1٣5 mg， p\u2009<\u20090.05 in KPC ß-lactam", "HR 0.5 hr 2 aOR 1.2",
              "ﬂuconazole 12\u00a0% p < .01 OR 2.1 or 3"]
    scanner = claim_analysis.SCANNER
    for s in sents:
        found = scanner.scan(s)
        for name, rx in scanner.regexes.items():
            assert [m.span() for m in found.get(name, [])] == [m.span() for m in rx.finditer(s)], (name, s)
        r = cues.scan(s)
        assert (r.negated, r.hedged, r.speculative, r.direction, r.polarity, list(r.axis_hits)) == (
            cues.has_negation(s), cues.has_hedge(s), cues.is_speculative(s), cues.direction(s), cues.polarity(s),
            cues.axis_cues(s))


def test_literal_prefixes_cover_every_match():
    pattern = r"[A-Z]{1,2}\d{2,4}[A-Z]|p\s*<\s*0?\.\d+|(?:19[5-9]\d|20[0-3]\d)|in vitro"
    prefixes = cues.literal_prefixes(pattern)
    for text in ("V600E", "KRAS G12D", "p < .05", "P<0.001", "in 1998", "In Vitro"):
        for m in cues.bounded_regex(pattern).finditer(text):
            assert any(cues.canonical(m.group(0)).startswith(p) for p in prefixes), m.group(0)


# --- claim rules --------------------------------------------------------------------------------------
def _abstract(parts: list[tuple[str | None, str]], uid: str = "pmid:1") -> Abstract:
    text, sections = "", []
    for label, body in parts:
        text += (" " if text else "")
        if label:
            sections.append(Section(label=label, start=len(text), end=len(text) + len(body)))
        text += body
    return Abstract(article_uid=uid, text=text, domain="amr", year=2020, sections=sections)


def _extract(abstract: Abstract, config: claims.ClaimsConfig | None = None) -> tuple[list[Claim], io.StageStats]:
    stats = io.StageStats("claims")
    return claims.extract_claims(abstract, abstract.domain, config or claims.ClaimsConfig(), stats), stats


def test_paper_table25_accepted_and_filtered_sentences():
    accepted = [
        "The intervention significantly improved survival in the treatment arm.",
        "The isolate was resistant to colistin in the surveillance cohort.",
        "No significant difference in mortality was observed between groups.",
        "Overall adverse events were not different between the groups.",
        "The prevalence of resistance was 18% in the exposed group.",
    ]
    filtered = {
        "Background: We summarize prior work on the pathway.": "filtered_section",
        "Methods: We retrospectively reviewed 120 records.": "filtered_section",
        "Further studies are needed to confirm the mechanism.": "speculative",
        "This paper presents the study design and setting.": "low_score",
    }
    found, stats = _extract(_abstract([("RESULTS", " ".join(accepted))]))
    assert [c.sentence for c in found] == accepted
    for sentence, reason in filtered.items():
        found, stats = _extract(_abstract([(None, sentence)]))
        assert found == [] and stats.dropped == {reason: 1}, sentence


def test_a_heading_inside_a_declared_section_starts_the_section_it_names():
    methods = ("Thirty-two healthy men were allocated to prednisolone 7.5 mg or placebo for 2 weeks in Amsterdam "
               "RESULTS: Prednisolone significantly increased fasting plasma glucose compared with placebo (p < 0.01). "
               "Peripheral glucose uptake was not reduced by prednisolone 7.5 mg (p = 0.41).")
    abstract = _abstract([("OBJECTIVE", "To assess low-dose glucocorticoids."), ("METHODS", methods)])
    units = [(abstract.text[u.start:u.end], u.section) for u in claims.sentence_units(abstract)]
    assert units[1] == (methods[:methods.index(" RESULTS:")], "METHODS")
    assert [section for _, section in units[2:]] == ["RESULTS", "RESULTS"]
    assert units[2][0].startswith("Prednisolone significantly increased")
    found, _ = _extract(abstract)
    assert [c.sentence[:24] for c in found] == ["Prednisolone significant", "Peripheral glucose uptak"]
    # an upper-case word before a colon that names no section does not cut the sentence
    plain = _abstract([("RESULTS", "Rates fell in the ICU ward NOTE: data were pooled across sites in 2019.")])
    assert len(claims.sentence_units(plain)) == 1


def test_claim_fields_offsets_and_slots():
    results = ("In 212 children with sepsis in Kenya, ceftriaxone reduced 28-day mortality compared with "
               "ampicillin (OR 0.52, 95% CI 0.31-0.87; p = 0.01).")
    abstract = _abstract([("BACKGROUND", "Sepsis is a major cause of death."), ("RESULTS", results),
                          ("CONCLUSIONS", "Ceftriaxone may not be superior in adults.")])
    found, stats = _extract(abstract)
    assert stats.dropped == {"filtered_section": 1}
    first, second = found
    assert abstract.text[first.sentence_start:first.sentence_end] == first.sentence == results
    assert first.claim_id == claim_id_for("pmid:1", first.sentence_start, first.sentence_end)
    assert (first.section, second.section) == (claims.RESULTS, claims.CONCLUSIONS)
    s = first.slots
    assert s.p_value == "p = 0.01" and s.effect_size == "OR 0.52, 95% CI 0.31-0.87"
    assert s.geography == "kenya" and s.direction == "decrease" and s.intervention == "ceftriaxone"
    assert s.population == "212 children" and s.period is None and s.outcome == "28-day mortality"
    assert {"ceftriaxone", "ampicillin", "sepsis"} <= set(first.entities)
    assert first.claim_type in ontology.CLAIM_TYPE_NAMES and first.pub_year == 2020
    assert second.negated and second.hedged and 0 < second.confidence < first.confidence <= 1


def test_claim_types_follow_ontology_cues():
    def type_of(sentence):
        return claim_analysis.claim_type_of(claim_analysis.SCANNER.scan(sentence))
    assert type_of("Treatment with drug X improved response rates.") == "efficacy"
    assert type_of("High TP53 expression predicted poor overall survival.") == "prognostic"
    assert type_of("Smoking was associated with lung function decline.") == "correlational"
    assert type_of("The prevalence of MRSA was 12% and 40% in two wards.") == "prevalence"
    assert type_of("Clinicians should consider screening all adults.") == "recommendation"
    assert type_of("Blue or green tubes were used.") == ontology.DEFAULT_CLAIM_TYPE  # "or" is not the odds ratio


def test_per_abstract_cap_keeps_best_claims_in_text_order():
    body = " ".join(f"Drug {i} significantly reduced mortality by {10 + i}% (p < 0.0{i + 1})." for i in range(6))
    body = "Drug X was well tolerated. " + body
    found, stats = _extract(_abstract([("RESULTS", body)]), claims.ClaimsConfig(max_claims_per_abstract=3))
    assert len(found) == 3 and stats.dropped["over_abstract_cap"] == 4
    assert [c.sentence_start for c in found] == sorted(c.sentence_start for c in found)


# --- the stage ----------------------------------------------------------------------------------------
def test_stage_on_pubmedqa_writes_claims_manifest_and_figures(abstracts_dir, tmp_path):
    out = tmp_path / "claims"
    stats = claims.run_stage(abstracts_dir, out)
    assert io.is_done(out) and io.read_stats(out) == stats
    manifest = io.read_manifest(out)
    assert manifest["inputs"] == [str(abstracts_dir.resolve())] and manifest["stage"] == "claims"
    found = list(io.read_records(out, Claim))
    texts = {a.article_uid: a.text for a in io.read_records(abstracts_dir, Abstract)}
    assert len(found) == stats["kept"] > 400
    assert all(texts[c.article_uid][c.sentence_start:c.sentence_end] == c.sentence for c in found)
    assert len({c.claim_id for c in found}) == len(found)
    assert stats["abstracts"] == 200 and 0.9 < stats["abstract_yield"] <= 1
    assert stats["claims_per_abstract"] == pytest.approx(len(found) / 200, abs=1e-3)
    assert sum(stats["claims_by_type"].values()) == len(found)
    assert set(stats["claim_type_share"]) == set(ontology.CLAIM_TYPE_NAMES)
    assert stats["seen"] == stats["kept"] + stats["dropped_total"]
    # PubMedQA's LONG_ANSWER is the CONCLUSIONS section: a real but minority share of claims lies there
    assert 0.15 < stats["share_in_conclusions"] < 0.5
    assert not any(c.section in (claims.BACKGROUND, claims.METHODS, claims.OBJECTIVE) for c in found)


def test_stage_is_resumable_and_reruns_when_config_changes(abstracts_dir, tmp_path):
    out = tmp_path / "claims"
    first = claims.run_stage(abstracts_dir, out)
    shard = io.shard_paths(out)[0]
    mtime = shard.stat().st_mtime_ns
    assert claims.run_stage(abstracts_dir, out) == first and shard.stat().st_mtime_ns == mtime
    stricter = claims.run_stage(abstracts_dir, out, claims.ClaimsConfig(min_score=4.0))
    assert stricter["kept"] < first["kept"]
    assert json.loads((out / io.STATS_FILE).read_text())["kept"] == stricter["kept"]
    assert len(list(io.read_records(out, Claim))) == stricter["kept"]


def test_bad_inputs_give_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        claims.run_stage(tmp_path / "missing", tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="is empty"):
        claims.run_stage(tmp_path / "empty", tmp_path / "out")
    io.write_records(tmp_path / "unfinished", [_abstract([(None, "A sentence that is long enough here.")])])
    (tmp_path / "unfinished" / io.SUCCESS_MARKER).unlink()
    with pytest.raises(ValueError, match="not a finished stage"):
        claims.run_stage(tmp_path / "unfinished", tmp_path / "out")
    io.write_records(tmp_path / "none", [], io.StageStats("ingest"))
    stats = claims.run_stage(tmp_path / "none", tmp_path / "out")
    assert stats["kept"] == 0 and stats["abstracts"] == 0 and io.is_done(tmp_path / "out")


def test_abstracts_without_domain_are_dropped_or_given_the_default(tmp_path):
    no_domain = _abstract([("RESULTS", "The drug significantly reduced mortality (p < 0.01).")]).model_copy(
        update={"domain": None})
    io.write_records(tmp_path / "abs", [no_domain], io.StageStats("ingest"))
    dropped = claims.run_stage(tmp_path / "abs", tmp_path / "a")
    assert io.dropped_counts(dropped) == {"abstract_without_domain": 1}  # its one sentence: the stage counts sentences
    assert dropped["unit"] == "sentences" and dropped["abstracts_without_domain"] == 1
    stats = claims.run_stage(tmp_path / "abs", tmp_path / "b", claims.ClaimsConfig(default_domain="oncology"))
    assert stats["by_domain"] == {"oncology": 1}


def test_cli_claims(abstracts_dir, tmp_path, capsys):
    assert cli.main(["claims", str(abstracts_dir), "--out", str(tmp_path / "c"), "--min-score", "3"]) == 0
    assert re.search(r"claims: \d+ claims from \d+ of 200 abstracts", capsys.readouterr().out)
    assert cli.main(["claims", str(tmp_path / "nope"), "--out", str(tmp_path / "d")]) == 1
    assert "does not exist" in capsys.readouterr().err


# --- real annotations ---------------------------------------------------------------------------------
def test_scifact_evidence_recall_is_measured_on_expert_sentences():
    docs = checks.scifact_corpus(SCIFACT, "genomics")
    evidence = checks.scifact_evidence_sentences(SCIFACT)
    wanted = sorted({d for d, _ in evidence})[:120]
    stats = io.StageStats("claims")
    found = list(claims.iter_claims((docs[d].abstract for d in wanted), claims.ClaimsConfig(), stats))
    result = checks.evidence_recall({d: docs[d] for d in wanted}, {e for e in evidence if e[0] in wanted}, found)
    assert result["evidence_sentences"] > 150
    assert 0.3 < result["recall"] <= 1.0  # full corpus: see benchmarks/results/claims.json


def test_stage_runs_on_real_ingest_output(tmp_path):
    from builder import ingest

    ingest.run_stage([f"pubmedqa:{PUBMEDQA}"], tmp_path / "abstracts", ingest.IngestConfig(domain=CLINICAL))
    stats = claims.run_stage(tmp_path / "abstracts", tmp_path / "claims")
    assert stats["abstracts"] > 900 and stats["abstract_yield"] > 0.9 and stats["claims_by_section"]["CONCLUSIONS"] > 0
