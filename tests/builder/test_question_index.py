"""The question index: the rule assigner tries only the questions a claim's stems reach, and so leaves out no
question the rules would take, while a claim's cost grows with the questions that share its words, not the pack."""

from __future__ import annotations

from repo_paths import SHARED_DATA

from biodivergence_dataset.records import Question
from builder import questionpacks
from builder.questions import QuestionsConfig
from builder.questions.compiled import compile_questions
from builder.questions.filters import claim_words
from builder.questions.lexicon import load_lexicon
from builder.questions.match import QuestionIndex, answers, claim_may_answer, claim_stems


def _evidence_inference(articles: int):
    """Expert evidence sentences of Evidence Inference training articles with their abstracts, and every prompt
    of these articles put as a pack entry's text (questions from across medicine)."""
    from builder.reader import reader_examples

    folder = SHARED_DATA / "evidence_inference"
    abstracts, chosen = {}, []
    for f in reader_examples.ei_findings(folder):
        if not reader_examples.in_part("evidence_inference", f.prompt.pmcid, "training"):
            continue
        if f.prompt.pmcid not in abstracts and len(abstracts) < articles:
            read = reader_examples.ei_abstract(folder, f.prompt.pmcid)
            abstracts[f.prompt.pmcid] = " ".join(body for _, body in read[1]) if read else ""
        if abstracts.get(f.prompt.pmcid):
            chosen.append(f)
    prompts = {f.prompt.prompt_id: f.prompt for f in chosen}
    pack = [Question(question_id=f"ei{p.prompt_id}", text=f"Is {p.outcome} higher, lower, or the same when "
                     f"comparing {p.intervention} to {p.comparator}?") for p in prompts.values()]
    return chosen, abstracts, compile_questions([questionpacks.question_from(q.model_dump()) for q in pack],
                                                load_lexicon())


def test_the_index_leaves_out_no_question_the_rules_would_take():
    chosen, abstracts, compiled = _evidence_inference(articles=80)
    index, config = QuestionIndex(compiled), QuestionsConfig()
    assert len(compiled) >= 150 and len(chosen) >= 200
    reached = answered = 0
    for f in chosen:
        abstract = abstracts[f.prompt.pmcid]
        words = claim_words(f.text, abstract)
        reach = index.reachable(claim_stems(f.text, abstract, words))
        similarities = [0.5] * len(compiled)  # every question as close: only the rules decide
        every = answers(f.text, abstract, similarities, compiled, config, words)
        assert answers(f.text, abstract, similarities, compiled, config, words, only=reach) == every
        assert (claim_may_answer(f.text, abstract, words, compiled, config)
                == claim_may_answer(f.text, abstract, words, [compiled[k] for k in sorted(reach)], config))
        reached += len(reach)
        answered += bool(every)
    assert answered >= len(chosen) // 10  # the comparison is not between two empty lists
    assert reached < 0.25 * len(chosen) * len(compiled), reached / (len(chosen) * len(compiled))


def test_a_claim_reaches_the_questions_of_its_own_treatment_whatever_the_size_of_the_pack():
    """3,000 questions of made-up antibodies against placebo on one outcome: a claim naming one of them reaches
    that one question, not the thousands that share its placebo, population and outcome."""
    names = [f"{a}{b}{c}umab" for a in ("tra", "vel", "cor", "nex", "pal", "rim") for b in ("zo", "ka", "mi", "lu", "te")
             for c in ("ri", "sa", "no", "de", "fe", "go", "ba", "ti", "qu", "ha", "pi", "xo", "we", "ju", "ly", "ve",
                       "mo", "ci", "du", "ge")]
    names = [f"{n}{i}" if i else n for i in range(5) for n in names][:3000]
    pack = [Question(question_id=f"q{i}", text=f"In adults with severe asthma, does {n} reduce exacerbations "
                     "compared with placebo?") for i, n in enumerate(names)]
    compiled = compile_questions([questionpacks.question_from(q.model_dump()) for q in pack], load_lexicon())
    index = QuestionIndex(compiled)
    sentence = f"{names[1234]} reduced severe exacerbations compared with placebo in adults with asthma."
    abstract = f"Background: asthma. Methods: adults were randomised to {names[1234]} or placebo. {sentence}"
    reach = index.reachable(claim_stems(sentence, abstract, claim_words(sentence, abstract)))
    assert reach == {1234}
    found = answers(sentence, abstract, [0.6] * len(compiled), compiled, QuestionsConfig(),
                    claim_words(sentence, abstract), only=reach)
    assert [q.question.question_id for q, _ in found] == ["q1234"]


def test_a_questions_rivals_are_found_once_when_the_pack_compiles():
    """The same comparison asked in two populations: each is the other's rival; a question without a population,
    or of another comparison, is no one's."""
    pack = [Question(question_id=i, text=t) for i, t in (
        ("dcis", "In women with ductal carcinoma in situ, does tamoxifen reduce recurrence?"),
        ("early", "In women with early breast cancer, does tamoxifen reduce recurrence?"),
        ("any", "Does tamoxifen reduce recurrence?"),
        ("ai", "In women with early breast cancer, does anastrozole reduce recurrence?"))]
    compiled = {q.question.question_id: q for q in compile_questions(
        [questionpacks.question_from(q.model_dump()) for q in pack], load_lexicon())}
    assert compiled["dcis"].rivals == {"early"} and compiled["early"].rivals == {"dcis"}
    assert compiled["any"].rivals == frozenset() and compiled["ai"].rivals == frozenset()
