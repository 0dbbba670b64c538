"""Domain packs: endpoint, site and setting distinctions read from YAML and merged onto the general lexicon, tested
on questions and claims written here in fields outside the demo's drug classes (bone health, respiratory
infection, asthma, psychiatry)."""

from __future__ import annotations

from pathlib import Path

import pytest

from builder import questionpacks
from builder.build import BuildConfig, wire
from builder.questions import QuestionsConfig
from builder.questions.compiled import CompiledQuestion, compile_questions
from builder.questions.lexicon import COHEN_PACK, LEXICON, alternatives, load_lexicon
from builder.questions.match import answers
from builder.questions.questions_stage import data_files as questions_data_files

PACK = """
distinctions:
  - {name: fracture site, kind: site, pattern: '\\b(hip|vertebral|wrist|osteoporotic)\\s+fractures?',
     covers: {osteoporotic: [hip, vertebral, wrist]}}
  - {name: hospital-acquired, kind: setting, pattern: '\\b(?:hospital-acquired|nosocomial|ventilator-associated)\\b'}
  - {name: peak flow variability, kind: endpoint, pattern: '\\bpeak (?:expiratory )?flow variability\\b',
     unless_outcome_outside: true}
"""

QUESTIONS = """
questions:
  - {id: hip, text: "Does zoledronic acid reduce hip fracture incidence compared with placebo?"}
  - {id: cap, text: "In adults with community-acquired pneumonia, does levofloxacin improve clinical cure compared with ceftriaxone?"}
  - {id: pef, text: "Does budesonide improve peak expiratory flow compared with placebo?"}
  - {id: dep, text: "Does lithium reduce depressive symptoms compared with placebo?"}
"""


def compiled(tmp_path: Path, packs: tuple[str, ...] = ()) -> list[CompiledQuestion]:
    questions = questionpacks.load_questions(_write(tmp_path / "questions.yaml", QUESTIONS))
    return compile_questions(questions, load_lexicon(LEXICON, packs))


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def answered(questions: list[CompiledQuestion], sentence: str) -> set[str]:
    found = answers(sentence, "", [0.5] * len(questions), questions, QuestionsConfig())
    return {q.question.question_id for q, _ in found}


@pytest.mark.parametrize("sentence, without, with_pack", [
    # a fracture of another site is another endpoint; "osteoporotic" spans the hip
    ("Zoledronic acid reduced vertebral fracture incidence compared with placebo (P = 0.02).", {"hip"}, set()),
    ("Zoledronic acid reduced wrist fracture incidence compared with placebo (P = 0.03).", {"hip"}, set()),
    ("Zoledronic acid reduced the incidence of hip fractures compared with placebo (P = 0.02).", {"hip"}, {"hip"}),
    ("Zoledronic acid reduced osteoporotic fracture incidence compared with placebo (P < 0.01).", {"hip"}, {"hip"}),
    # a hospital setting answers no question asked in a community population
    ("In hospital-acquired pneumonia, levofloxacin improved clinical cure compared with ceftriaxone (P = 0.02).",
     {"cap"}, set()),
    # a measure's variability is not its level, unless the level is named too
    ("Budesonide reduced peak expiratory flow variability compared with placebo (P < 0.01).", {"pef"}, set()),
    ("Budesonide improved peak expiratory flow and reduced peak expiratory flow variability compared with placebo.",
     {"pef"}, {"pef"}),
])
def test_a_domain_pack_sets_endpoints_sites_and_settings_apart(tmp_path, sentence, without, with_pack):
    pack = _write(tmp_path / "bone_and_lung.yaml", PACK)
    assert answered(compiled(tmp_path), sentence) == without
    assert answered(compiled(tmp_path, (str(pack),)), sentence) == with_pack


def test_relapse_is_another_endpoint_in_the_general_lexicon(tmp_path):
    """Preventing relapse is not treating the episode, in any field: the general lexicon says so, no pack needed."""
    questions = compiled(tmp_path)
    assert answered(questions, "Lithium reduced depressive symptoms compared with placebo (P = 0.01).") == {"dep"}
    assert answered(questions, "Lithium reduced relapse of depressive symptoms compared with placebo (P < 0.01).") \
        == set()


def test_the_demo_pack_adds_distinctions_and_pooled_outcomes_and_keeps_the_lexicon(tmp_path):
    general, demo = load_lexicon(LEXICON), load_lexicon(LEXICON, (str(COHEN_PACK),))
    assert demo.classes == general.classes
    assert demo.synonyms[:len(general.synonyms)] == general.synonyms and len(demo.synonyms) > len(general.synonyms)
    assert {d.name for d in general.distinctions} == {"recurrence"}
    assert {d.name for d in demo.distinctions} - {d.name for d in general.distinctions} == {
        "ulcer site", "rhythm", "surgery"}
    extra = _write(tmp_path / "extra.yaml", "drug_classes:\n  - {names: [bisphosphonates], members: [zoledronic acid]}\n"
                                            "synonyms:\n  - [hip fracture, femoral neck fracture]\n")
    merged = load_lexicon(LEXICON, (str(extra),))
    assert merged.classes[-1] == (("bisphosphonates",), ("zoledronic acid",))
    assert merged.synonyms[-1] == ("hip fracture", "femoral neck fracture")


@pytest.mark.parametrize("phrase, other", [
    ("rheumatoid arthritis", "osteoarthritis"),
    ("angioedema", "cough"),
    ("bleeding", "gastrointestinal bleeding"),
    ("psychotic symptoms", "schizophrenia"),
])
def test_the_general_lexicon_keeps_different_conditions_apart_and_a_review_pack_may_pool_them(phrase, other):
    """A synonym group of the general lexicon names one thing; pooling two conditions into one endpoint is a
    review's choice, made in its pack (the demo's pools these as its drug-class reviews do)."""
    def names(lexicon) -> set[str]:
        return {alt.label.split(" (=")[0] for alt in alternatives(phrase, lexicon)}

    assert other not in names(load_lexicon(LEXICON))
    assert other in names(load_lexicon(LEXICON, (str(COHEN_PACK),)))


@pytest.mark.parametrize("text, message", [
    ("distinctions:\n  - {name: x, kind: endpoint, pattern: '(unclosed'}\n",
     r"distinctions entry 1, pattern: .*not a regular expression"),
    ("distinctions:\n  - {name: x, kind: region, pattern: 'a'}\n", r"distinctions entry 1, kind"),
    ("synonyms:\n  - [alone]\n", r"synonyms: .*entry 1: a list of at least two phrases"),
    ("drug_classes:\n  - {members: [a]}\n", r"drug_classes entry 1, names"),
    ("- just a list\n", r"a lexicon is a mapping"),
    ("distinctions: [\n", r"not a readable YAML lexicon"),
])
def test_a_bad_domain_pack_names_its_file_and_entry(tmp_path, text, message):
    pack = _write(tmp_path / "bad.yaml", text)
    with pytest.raises(ValueError, match=message) as error:
        load_lexicon(LEXICON, (str(pack),))
    assert str(error.value).startswith(str(pack))


def test_a_build_hands_the_questions_lexicon_and_packs_to_gather(tmp_path):
    config = BuildConfig(sources=[], questions={"pack": "p.yaml", "domain_packs": [str(COHEN_PACK)]})
    section = wire("gather", {"top_n": 5}, config, tmp_path)
    assert section["domain_packs"] == [str(COHEN_PACK)] and section["pack"] == "p.yaml"
    assert Path(str(COHEN_PACK)) in questions_data_files(QuestionsConfig(pack="p.yaml", domain_packs=[str(COHEN_PACK)]))


ONCOLOGY_PACK = """
drug_classes:
  - {names: [EGFR tyrosine kinase inhibitors, EGFR inhibitors, EGFR-TKIs], members: [gefitinib, erlotinib, osimertinib]}
"""


def test_the_reader_annotator_reads_a_question_with_the_builds_domain_packs(tmp_path):
    """A pack's drug class names the arms for the annotator as for the questions stage: asked about "EGFR
    inhibitors", a claim naming gefitinib is read in its own arm names only when the annotator has the pack, and
    a build hands the annotate step the questions section's packs."""
    from biodivergence_dataset.records import Question
    from builder.annotate_config import AnnotateConfig
    from builder.annotators import make_local
    from builder.questions.arms import claim_arms

    pack = str(_write(tmp_path / "oncology.yaml", ONCOLOGY_PACK))
    question = questionpacks.question_from({"id": "egfr", "text": "In non-small cell lung cancer, do EGFR "
                                            "inhibitors prolong progression-free survival compared with chemotherapy?"})
    assert isinstance(question, Question)
    sentence = "Gefitinib prolonged progression-free survival compared with carboplatin-paclitaxel chemotherapy."
    plain = make_local("reader")
    with_pack = make_local("reader", lexicon=AnnotateConfig(domain_packs=[pack]).read_lexicon())
    assert claim_arms(sentence, plain.compiled(question)) is None
    arms = claim_arms(sentence, with_pack.compiled(question))
    assert arms is not None and arms[0].lower() == "gefitinib"
    config = BuildConfig(sources=["jsonl:x.jsonl"], questions={"pack": "p.yaml", "domain_packs": [pack]})
    assert wire("annotate", {}, config, tmp_path)["domain_packs"] == [pack]
    assert wire("annotate", {"domain_packs": []}, config, tmp_path)["domain_packs"] == []
    assert Path(pack) in AnnotateConfig(domain_packs=[pack]).data_files()
    assert AnnotateConfig(annotator="heuristic", domain_packs=[pack]).data_files() == []  # a panel that reads no question
