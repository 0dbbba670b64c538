"""Claim frames, the same-question gate, findings-based opposition and the frames annotator's boundary
rules, on sentences written for these tests (none is copied from the data)."""

from __future__ import annotations

import pytest
from hand_pairs import label_with

from biodivergence_dataset import ontology
from builder.annotators.frame_annotator import FramesAnnotator
from builder.framealign import align, findings_disagree
from builder.frames import extract_frame, extract_frames

F = FramesAnnotator()
INCREASE, DECREASE, NO_EFFECT, ASSOCIATION, NO_ASSOCIATION, DIFFERENCE, NO_DIFFERENCE = ontology.FINDING_DIRECTIONS


def label(a: str, b: str, **kw):
    return label_with(F, a, b, **kw)


@pytest.mark.parametrize(("sentence", "exposure", "outcome", "direction"), [
    ("Daily folate supplementation reduced neural tube defects in rural mothers.",
     "Daily folate supplementation", "neural tube defects", DECREASE),
    ("Daily folate supplementation did not reduce neural tube defects.",
     "Daily folate supplementation", "neural tube defects", NO_EFFECT),
    ("Serum ferritin was not associated with fatigue scores among blood donors.",
     "Serum ferritin", "fatigue scores", NO_ASSOCIATION),
    ("Higher serum ferritin was associated with longer hospital stay.",
     "Higher serum ferritin", "longer hospital stay", ASSOCIATION),
    ("Wound infection rates were similar in both arms.", "both arms", "Wound infection rates", NO_DIFFERENCE),
    ("Caffeine intake increases heart rate variability.", "Caffeine intake", "heart rate variability", INCREASE),
    ("Knee pain was reduced by weekly hydrotherapy.", "weekly hydrotherapy", "Knee pain", DECREASE),
    ("There was no significant difference in relapse rates between the two regimens.",
     "the two regimens", "relapse rates", NO_DIFFERENCE),
    ("There was also no effect of oral zinc on diarrhoea duration in toddlers.",
     "oral zinc", "diarrhoea duration", NO_EFFECT),
    ("We found no association of night-shift work with migraine frequency.",
     "night-shift work", "migraine frequency", NO_ASSOCIATION),
    # a raising verb is not part of the subject
    ("Oral ribavirin was also found to be effective (OR 0.4, 95% CI 0.2-0.8).", "Oral ribavirin", "effective",
     ASSOCIATION),
    # "showed" after a measurement has a subject of its own; after "our analysis" it only reports
    ("Serum sodium showed no correlation with delirium severity.", "Serum sodium", "delirium severity",
     NO_ASSOCIATION),
    ("Our cohort analysis showed no correlation between snoring and gout.", "snoring", "gout", NO_ASSOCIATION),
    # "we found a marked decrease in Y": Y changed, nothing in the sentence says what changed it
    ("In this trial we found a marked decrease in the incidence of pressure ulcers.", None,
     "the incidence of pressure ulcers", DECREASE),
    ("Arms did not differ significantly in the rate of wound dehiscence.", None, "the rate of wound dehiscence",
     NO_DIFFERENCE),
    # a causative verb takes the direction of the change it brings about; what changed is the outcome
    ("Nightly melatonin resulted in a marked decrease in sleep latency among shift workers.", "Nightly melatonin",
     "sleep latency", DECREASE),
    ("Weekly iron infusions did not lead to a reduction in transfusion needs.", "Weekly iron infusions",
     "transfusion needs", NO_EFFECT),
    ("Prone positioning led to improved oxygenation.", "Prone positioning", "oxygenation", INCREASE),
])
def test_frame_extraction(sentence, exposure, outcome, direction):
    frame = extract_frame(sentence)
    assert frame.finding.direction == direction
    assert (frame.exposure.text if frame.exposure else None) == exposure
    assert (frame.outcome.text if frame.outcome else None) == outcome
    for span in (frame.exposure, frame.outcome, frame.finding.span):
        if span is not None:
            assert sentence[span.start:span.end] == span.text


def test_significance_and_context_slots_with_offsets():
    s = "In children, zinc significantly shortened diarrhoea (p < 0.01), but not in adults (p = 0.40)."
    frame = extract_frame(s)
    assert frame.finding.significance == "not_significant"  # an explicit non-significant result is stated
    assert extract_frame("Zinc significantly shortened diarrhoea.").finding.significance == "significant"
    slots = {(c.axis, c.span.text) for c in frame.context}
    assert ("population_cohort", "children") in slots and ("population_cohort", "adults") in slots
    assert all(s[c.span.start:c.span.end] == c.span.text for c in frame.context)


def test_abbreviations_defined_in_the_abstract_make_slots_match():
    a = extract_frame("CRT lowered readmissions.", "Cardiac resynchronization therapy (CRT) was given.")
    b = extract_frame("Cardiac resynchronization therapy did not lower readmissions.")
    assert align(a, b).comparable


def test_same_question_gate_needs_shared_exposure_and_outcome():
    base = extract_frame("Metformin reduced hepatic glucose output.")
    other_exposure = extract_frame("Exercise training did not reduce hepatic glucose output.")
    other_outcome = extract_frame("Metformin did not reduce body weight.")
    same = extract_frame("Metformin did not reduce hepatic glucose output.")
    assert align(base, other_exposure).reason == "different_exposure"
    assert align(base, other_outcome).reason == "different_outcome"
    assert align(base, same).comparable and align(base, same).reason == "same_question"
    no_finding = extract_frame("Metformin and hepatic glucose output.")
    assert no_finding.finding.direction == ASSOCIATION and no_finding.finding.generic
    negated = extract_frame("No metformin and no hepatic glucose output.")
    assert negated.finding.generic and align(no_finding, negated).reason == "finding_unstated"


def test_findings_disagree_on_direction_null_and_significance_only():
    up, down = extract_frame("Drug X increases bone density."), extract_frame("Drug X decreases bone density.")
    null = extract_frame("Drug X does not change bone density.")
    assert findings_disagree(up.finding, down.finding) == "opposite_direction"
    assert findings_disagree(up.finding, null.finding) == "null_vs_effect"
    assert findings_disagree(up.finding, up.finding) is None
    sig = extract_frame("Drug X significantly increased bone density.")
    ns = extract_frame("Drug X increased bone density, but not significantly.")
    assert findings_disagree(sig.finding, ns.finding) == "significance"


def test_a_caused_change_is_compared_by_its_direction():
    up = "Ketamine infusion resulted in an increase in pain thresholds."
    assert label(up, "Ketamine infusion resulted in a decrease in pain thresholds.").conflict_type != ontology.NO_CONFLICT
    assert label(up, "Ketamine infusion led to higher pain thresholds.").conflict_type == ontology.NO_CONFLICT


def test_a_negation_word_alone_never_makes_a_conflict():
    labels = label("Probiotics reduce antibiotic-associated diarrhoea in outpatients.",
                   "No patient in the cohort received probiotics for eczema.")
    assert labels.conflict_type == ontology.NO_CONFLICT and not labels.comparable
    assert labels.comparability in ontology.COMPARABILITY


def test_differing_context_is_contextual_with_condition_and_finding_spans():
    a = "Vitamin A supplementation reduced mortality in children under five."
    b = "Vitamin A supplementation did not reduce mortality in adults over 60."
    labels = label(a, b)
    assert labels.conflict_type == ontology.CONTEXTUAL
    assert labels.dominant_confounder == "population_cohort" and "population_cohort" in labels.divergence_axes
    texts = {(s.role, s.text) for s in labels.evidence_spans}
    assert ("claim_a", "children") in texts and ("claim_b", "adults") in texts
    assert ("claim_a", "reduced mortality") in texts and ("claim_b", "not reduce mortality") in texts
    for s in labels.evidence_spans:
        assert (a if s.role == "claim_a" else b)[s.start:s.end] == s.text
    assert "children" in labels.reconciliation and "adults" in labels.reconciliation


def test_most_specific_differing_slot_is_the_confounder():
    labels = label("Vancomycin cleared MRSA infections in patients from Kenya.",
                   "Vancomycin did not clear VRE infections in patients from India.")
    assert labels.conflict_type == ontology.CONTEXTUAL
    assert labels.dominant_confounder == "organism_strain_lineage"
    assert set(labels.divergence_axes) >= {"organism_strain_lineage", "geography"}


def test_matched_conditions_are_direct_and_one_sided_context_is_underspecified():
    direct = label("Lithium reduces suicide attempts.", "Lithium does not reduce suicide attempts.")
    assert direct.conflict_type == ontology.CONFLICT_TYPE_NAMES[1] and direct.divergence_axes == []
    under = label("Lithium reduces suicide attempts in adolescents.", "Lithium does not reduce suicide attempts.")
    assert under.conflict_type == "underspecified_apparent_contradiction"
    assert under.divergence_axes == ["population_cohort"]


def test_weak_evidence_and_controversy_cues_take_precedence():
    weak = label("A pilot study found that yoga reduces migraine frequency.",
                 "Yoga does not reduce migraine frequency.")
    assert weak.conflict_type == "evidence_insufficiency"
    disputed = label("Whether salt restriction lowers stroke risk remains controversial; salt restriction lowers "
                     "stroke risk.", "Salt restriction does not lower stroke risk.")
    assert disputed.conflict_type == "unresolved_scientific_controversy"


def test_agreeing_findings_are_no_conflict():
    labels = label("Aspirin lowers the risk of colorectal cancer.", "Aspirin lowers colorectal cancer risk.")
    assert labels.conflict_type == ontology.NO_CONFLICT and labels.comparable
    assert labels.evidence_spans == []


def test_passages_are_compared_sentence_by_sentence():
    a = "Patients were followed for two years. Statins lowered LDL cholesterol."
    b = "Statins did not lower LDL cholesterol. Adherence was high."
    frames = extract_frames(a)
    assert len(frames) == 2 and a[frames[1].finding.span.start:frames[1].finding.span.end] == "lowered LDL cholesterol"
    labels = label(a, b)
    assert labels.conflict_type != ontology.NO_CONFLICT
    assert all((a if s.role == "claim_a" else b)[s.start:s.end] == s.text for s in labels.evidence_spans)


def test_a_negated_noun_does_not_negate_the_finding():
    assert extract_frame("Absence of ferritin may contribute to anaemia.").finding.direction == ASSOCIATION
    assert extract_frame("Smokers with no counselling were more likely to relapse.").finding.direction == INCREASE
    assert extract_frame("There was a lack of association between diet and relapse.").finding.direction == NO_ASSOCIATION
    assert extract_frame("Independent mutations were found in 20 families.").finding.generic  # adjective, no finding


def test_mining_proposes_same_question_claims_from_their_frames():
    import numpy as np

    from builder.mine import frame_candidates

    texts = ["Metformin reduced hepatic glucose output.", "Metformin did not reduce hepatic glucose output.",
             "Metformin reduced body weight.", "Exercise reduced hepatic glucose output.",
             "Metformin lowered hepatic glucose output in mice."]
    frames = [extract_frames(t) for t in texts]
    groups = np.array([0, 1, 2, 3, 0])  # claims 0 and 4 share an article: never paired
    lo, hi = frame_candidates(frames, groups, max_df=10)
    assert sorted(zip(lo.tolist(), hi.tolist())) == [(0, 1), (1, 4)]
    lo, hi = frame_candidates(frames, groups, max_df=2)  # "metformin" is in 4 claims: too common to block on
    assert len(lo) == 0


def test_a_change_without_an_object_has_no_exposure_and_reporting_clauses_are_not_exposures():
    trend = extract_frame("The prevalence of anaemia rose from 12% to 30%.")
    assert trend.exposure is None and trend.outcome.text == "The prevalence of anaemia"
    reported = extract_frame("The analysis revealed higher relapse rates in smokers.")
    assert reported.exposure is None or "revealed" not in reported.exposure.text
    opener = extract_frame("Since obesity is associated with asthma, weight loss may help.")
    assert opener.exposure.text == "obesity"


def test_the_frames_a_row_shows_are_the_clauses_the_gate_compared():
    from builder.annotators.frame_annotator import compared_frames
    from builder.goldsources import make_claim, make_pair

    a = "Statins did not change triglycerides in the trial, whereas statins lowered LDL cholesterol."
    b = "Statins did not lower LDL cholesterol."
    domain = ontology.DOMAIN_NAMES[0]
    pair = make_pair(make_claim("doc:a", a, domain, "t"), make_claim("doc:b", b, domain, "t"))
    fa, _, alignment = compared_frames(pair)
    assert alignment.comparable and fa.outcome.text == "LDL cholesterol" and fa.finding.direction == DECREASE
    assert a[fa.finding.span.start:fa.finding.span.end] == fa.finding.span.text


def test_bracketed_statistics_are_not_slot_words():
    frame = extract_frame("Only ritonavir (adjusted odds ratio [AOR], 8.6; 95% CI, 3.0-24.6) was associated with "
                          "severe hepatotoxicity.")
    assert frame.exposure_terms == {"ritonavir"}


@pytest.mark.parametrize(("a", "b", "reason"), [
    # different names in the slot: two genes, not one question
    ("High IL-6 expression predicted poor survival.", "High IL-8 expression did not predict poor survival.",
     "different_exposure"),
    # one shared modifier of a two-word slot is not the same slot
    ("Platelet count was associated with fever.", "Neutrophil count was not associated with fever.",
     "different_exposure"),
    # "this regimen" points back into its own abstract: nothing to match
    ("This regimen reduced relapse.", "Weekly methotrexate did not reduce relapse.", "slots_unstated"),
    # the same one-word outcome is shared, whatever context follows it
    ("Vitamin A supplementation reduced mortality in children under five.",
     "Vitamin A supplementation did not reduce mortality in adults over 60.", "same_question"),
])
def test_the_gate_needs_the_same_named_slots(a, b, reason):
    assert align(extract_frame(a), extract_frame(b)).reason == reason


def test_a_finding_phrase_ends_at_a_word_end():
    s = ("Folate may serve as a regulator of mammary epithelial cell growth whose function is compromised in "
         "breast cancer.")
    span = extract_frame(s).finding.span
    assert span is not None and s[span.start:span.end] == span.text
    assert span.end == len(s) - 1 or not s[span.end].isalnum()
    assert span.text.split()[-1] in s.split()


def test_a_claim_the_gate_cannot_read_is_not_called_a_different_question():
    unread = label("Metformin and hepatic glucose output.", "Metformin did not reduce hepatic glucose output.")
    different = label("Metformin reduced hepatic glucose output.", "Exercise training did not reduce body weight.")
    assert unread.conflict_type == different.conflict_type == ontology.NO_CONFLICT
    assert "different questions" not in unread.reconciliation and "no finding" in unread.reconciliation
    assert different.reconciliation.startswith("The claims answer different questions")


def test_prefix_antonyms_match_their_definition():
    """``prefix_negates`` (a cached reverse lookup) says what building every prefixed form would say: a word of
    one side is a word of four letters or more of the other side with a negating prefix."""
    from hypothesis import given
    from hypothesis import strategies as st

    from biodivergence_text.cues import NEGATING_PREFIXES, opposite_words, prefix_negates

    def by_definition(a: frozenset[str], b: frozenset[str]) -> bool:
        return any(p + w in other for side, other in ((a, b), (b, a)) for w in side if len(w) >= 4
                   for p in NEGATING_PREFIXES)

    stems = ["able", "effective", "use", "toxic", "-effective", "reversible", "safe"]
    vocabulary = stems + [p + s for p in NEGATING_PREFIXES for s in stems]
    sets = st.frozensets(st.sampled_from(vocabulary), max_size=5)

    @given(sets, sets)
    def agrees(a, b):
        assert prefix_negates(a, b) == by_definition(a, b)

    agrees()
    assert prefix_negates(frozenset({"effective"}), frozenset({"ineffective"}))
    assert not prefix_negates(frozenset({"use"}), frozenset({"unuse"}))  # under four letters
    assert opposite_words(frozenset({"enhances"}), frozenset({"suppresses"}))
