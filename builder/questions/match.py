"""The rule assigner: which questions a claim could answer at all (:class:`QuestionIndex`), whether it may answer
one from its words (:func:`may_answer`), how well it does (:func:`assess`), which questions a claim sentence answers
(:func:`answers`) and, for an article whose abstract answers a question as a whole, which of its claims answers it
(:func:`article_answers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator

import numpy as np

from biodivergence_dataset.records import Claim

from .arms import background_only, compares_arms, compares_doses, compares_itself, fixed_combination
from .compiled import INACTIVE, CompiledQuestion, add_on, names_a_drug, terms_apart
from .config import Assignment, QuestionsConfig
from .endpoints import open_label_only, other_endpoint, other_setting, stopped_only
from .filters import claim_words, doses, other_comparison, reports_no_comparison
from .groups import (
    ACTIVE_ARMS,
    abstract_answers,
    abstract_names_arms,
    abstract_words,
    active_arms_equal,
    arms_named_apart,
    arms_named_by_group,
    compares_another,
    compares_named_groups,
    control_is_comparator,
    group_name_words,
    names_arms_by_role,
    role_clause,
    sentence_stems,
    sets_groups_against,
    untreated_against_active,
    untreated_arm_named,
)
from .lexicon import Alternative, best_match, stem, stem_sequence
from .population import excluded_population, rival_population, studied_population


class QuestionIndex:
    """Which questions of a pack a claim could answer at all, found by its stems, so the rules run on those
    alone and a claim's cost grows with the questions that share its words, not with the pack.

    Every way a claim answers a question matches the question's intervention (``assess``) in stems drawn from the
    claim, its abstract, its group names ("the HIP group") or its words for each arm, all of which are stems of the
    claim and its abstract (``claim_stems``), and a name or word counts for an arm only when it is one of the arm's
    words (``CompiledQuestion.arm_words``). So a question is reachable only when those stems meet its intervention's
    arm words, or its comparator's when the comparator's own stems can stand for the intervention (a comparison of
    two doses of one drug). The index is a necessary condition, never a rule: it leaves out no question the rules
    would take (a test runs the rules on every question beside it)."""

    def __init__(self, compiled: list[CompiledQuestion]):
        self.by_stem: dict[str, list[int]] = {}
        for i, q in enumerate(compiled):
            intervention = frozenset().union(*(alt.stems for alt in q.intervention))
            keys = q.arm_words["intervention"]
            if any(alt.stems & intervention for alt in q.comparator):
                keys = keys | q.arm_words["comparator"]
            for key in keys:
                self.by_stem.setdefault(key, []).append(i)

    def reachable(self, stems: frozenset[str]) -> set[int]:
        """The indices of the questions that a claim or abstract with these stems could answer."""
        return {i for key in stems for i in self.by_stem.get(key, ())}


def claim_stems(sentence: str, abstract: str, words: frozenset[str]) -> frozenset[str]:
    """Every stem by which a claim (its ``claim_words``, sentence and group names) or its abstract can name a
    question's arms: the key of :meth:`QuestionIndex.reachable`."""
    named = frozenset().union(*group_name_words(sentence, abstract))
    return words | sentence_stems(sentence) | named | (abstract_words(abstract) if abstract else frozenset())


def may_answer(words: frozenset[str], compiled: list[CompiledQuestion], config: QuestionsConfig,
               arms: frozenset[str] | None = None) -> bool:
    """Whether a claim's words could answer any question, its similarity unknown: it names a question's
    intervention (or its abstract does, ``arms``, for a claim naming its arms by role) and (unless a close
    similarity may stand in, ``similarity_alone``) its outcome. Only such claims are embedded; on the Cohen demo
    they are about a sixth of all claims."""
    arms = words if arms is None else arms
    return any(best_match(arms, q.intervention)[1] is not None
               and (config.similarity_alone <= 1.0
                    or best_match(words, q.outcome, config.min_outcome_coverage)[1] is not None)
               for q in compiled)


def claim_may_answer(sentence: str, abstract: str, words: frozenset[str], compiled: list[CompiledQuestion],
                     config: QuestionsConfig) -> bool:
    """Whether a claim (its sentence, abstract and ``claim_words``) could answer any question (``may_answer``):
    with the arms it names itself, by role (read in its abstract), by a word before "group" or each by a word only
    its phrase has."""
    if may_answer(words, compiled, config):
        return True
    if abstract and names_arms_by_role(sentence) and may_answer(words, compiled, config,
                                                               arms=words | abstract_words(abstract)):
        return True
    names = group_name_words(sentence, abstract)
    if names and any(may_answer(words, [q], config, arms=words | stems)
                     for q in compiled for stems, named in [arms_named_by_group(names, q)] if named):
        return True
    if not compiled or names_a_drug(sentence, compiled[0]):
        return False
    if (config.whole_abstract and abstract and sets_groups_against(sentence)
            and may_answer(words, compiled, config, arms=words | abstract_words(abstract))):
        return True
    stems = sentence_stems(sentence)
    return any(may_answer(words, [q], config, arms=words | apart)
               for q in compiled for apart, named in [arms_named_apart(stems, q)] if named)


def assess(words: frozenset[str], similarity: float, q: CompiledQuestion, config: QuestionsConfig, n_doses: int = 0,
           arms: frozenset[str] | None = None, arms_why: str = "named in the abstract; the claim names the arms by role",
           similarity_alone: float | None = None) -> tuple[float, str] | None:
    """``(score, why)`` when a claim with content stems ``words``, cosine ``similarity`` to the question and
    ``n_doses`` doses named answers it, else None. ``arms``: where the treatments are named, for a claim that
    names its arms by role (its abstract's stems) or by a word before "group" (the arms' phrases), said in the why
    by ``arms_why``; the outcome must still be the claim's own, unless the cosine reaches ``similarity_alone``
    (default: ``config.similarity_alone``)."""
    if similarity < config.min_similarity:
        return None
    by_role = arms is not None
    arms = words if arms is None else arms
    iv_cov, iv = best_match(arms, q.intervention)
    if iv is None:
        return None
    oc_cov, oc = best_match(words, q.outcome, config.min_outcome_coverage)
    if oc is None and similarity < (config.similarity_alone if similarity_alone is None else similarity_alone):
        return None
    cmp_cov, cmp = best_match(arms, q.comparator) if q.comparator else (0.0, None)
    if other_comparison(arms, q, cmp, n_doses) is not None:
        return None
    score = 0.35 * iv_cov + 0.35 * oc_cov + 0.2 * max(similarity, 0.0) + 0.1 * cmp_cov
    why = [f"intervention: {iv.label}" + (f" ({arms_why})" if by_role else ""),
           f"outcome: {oc.label}" if oc else "outcome: by similarity"]
    if cmp is not None:
        why.append(f"comparator: {cmp.label}")
    why.append(f"similarity {similarity:.2f}")
    return round(min(score, 1.0), 4), "; ".join(why)


def answers(sentence: str, abstract: str, similarities: list[float], compiled: list[CompiledQuestion],
            config: QuestionsConfig, words: frozenset[str] | None = None, only: Collection[int] | None = None
            ) -> list[tuple[CompiledQuestion, tuple[float, str]]]:
    """The questions a claim sentence answers, each with ``(score, why)``, given its abstract (abbreviation
    definitions, the population studied), its cosine to each compiled question and (when already read) its
    ``claim_words``. A sentence about baseline groups, a correlation, subgroups' effects or a mediation analysis
    answers none, one comparing an add-on only a question that asks one; one answers a question only when it makes
    the question's comparison (``compares_arms``), in its setting and endpoint. A claim that names its arms by role
    ("no difference between the two groups") answers a question whose intervention (and comparator) its abstract
    names and whose outcome it names itself; so, under ``QuestionsConfig.whole_abstract``, does one that names no
    drug and sets groups against each other in an abstract that names the question's arms and no other drug
    (``abstract_answers``). ``only``: the indices of the questions it may answer (``QuestionIndex.reachable``);
    the others are not tried, and still count as rivals for its population."""
    adds_on = add_on(sentence)
    if reports_no_comparison(sentence) or adds_on and not any(q.asks_add_on for q in compiled):
        return []
    tried = range(len(compiled)) if only is None else only
    if adds_on:
        keep = [i for i, q in enumerate(compiled) if q.asks_add_on]
        tried = [j for j, i in enumerate(keep) if i in tried]
        compiled, similarities = [compiled[i] for i in keep], [similarities[i] for i in keep]
    words, n_doses = claim_words(sentence, abstract) if words is None else words, doses(sentence)
    # the arms by role, read in the abstract, for a claim that names no drug (every question carries the lexicon's)
    drugs_named = bool(compiled) and names_a_drug(sentence, compiled[0])  # then drug names decide, not other words
    by_role, role_words = None, words
    if abstract and compiled and names_arms_by_role(sentence) and not drugs_named:
        by_role = words | abstract_words(abstract)
        role_words = claim_words(role_clause(sentence), abstract)
    names = group_name_words(sentence, abstract)
    all_named = frozenset().union(*names)
    stems = frozenset() if drugs_named else sentence_stems(sentence)  # for arms named apart
    found = []
    for k in sorted(tried):
        q, sim = compiled[k], similarities[k]
        verdict = assess(words, sim, q, config, n_doses)
        if verdict is not None:
            if background_only(sentence, q) or open_label_only(sentence, q):
                continue
            if not compares_arms(sentence, q):
                verdict = None  # the arms may still be named before "group" ("than the low dose group")
        elif (by_role is not None and not (q.comparison == INACTIVE and ACTIVE_ARMS.search(sentence))
              and not untreated_against_active(sentence, q) and untreated_arm_named(abstract, q)):
            # the arms' roles are the comparison (active arms among themselves answer no question against placebo);
            # the outcome is its clause's
            verdict = assess(role_words, sim, q, config, n_doses, arms=by_role)
        if verdict is None and names:  # every arm the claim names before "group" is one of its arms
            named_stems, named = arms_named_by_group(names, q)
            if named and compares_named_groups(sentence, named, q):
                verdict = assess(words, sim, q, config, n_doses, arms=(by_role or words) | named_stems | all_named,
                                 arms_why="named by a word of its phrase before \"group\"")
        if (verdict is None and abstract and not drugs_named
                and control_is_comparator(sentence, abstract_words(abstract), q)
                and compares_named_groups(sentence, {"intervention", "comparator"}, q)):
            verdict = assess(words, sim, q, config, n_doses, arms=words | q.comparator[0].stems,
                             arms_why="its comparator named as the control arm")
        if verdict is None and q.comparator and not drugs_named:  # each arm named by a word only its phrase has
            apart_stems, named = arms_named_apart(stems, q)
            if named and compares_named_groups(sentence, named, q):
                verdict = assess(words, sim, q, config, n_doses, arms=(by_role or words) | apart_stems,
                                 arms_why="each arm named by a word only its phrase has")
        if (verdict is None and config.whole_abstract and by_role is None and abstract and not drugs_named
                and abstract_answers(sentence, abstract, q)):
            verdict = assess(words, sim, q, config, n_doses, arms=words | abstract_words(abstract),
                             arms_why="named in its abstract, which names no other drug; the claim sets groups apart")
        if verdict is not None and not (other_setting(sentence, q) or other_endpoint(sentence, q)
                                        or stopped_only(sentence, q) or compares_doses(sentence, q)
                                        or excluded_population(sentence, q) or fixed_combination(sentence, q)):
            found.append((q, verdict))
    article = words
    if abstract and any(q.population for q, _ in found):  # without its abstract, who was studied is unknown
        article = words | abstract_words(abstract)
        found = [(q, verdict) for q, verdict in found if studied_population(q, article)]
    return [(q, verdict) for q, verdict in found
            if not rival_population(sentence, words, q, compiled, abstract, article)]


_OF = re.compile(r"\s+of\s+", re.IGNORECASE)


#: Words of an outcome phrase that name no endpoint of their own ("side" of "extrapyramidal side effects",
#: "total" of "total cholesterol"): any trial's claim may hold them.
_GENERIC_OUTCOME_STEMS = frozenset(stem(w) for w in ("side", "adverse", "total", "overall", "mean", "clinical",
                                                      "global", "general"))


def names_part_of(words: frozenset[str], alts: tuple[Alternative, ...]) -> bool:
    """Whether ``words`` hold a stem of an alternative other than its phrase's head noun, which alone often names
    another endpoint ("negative symptoms" for "psychotic symptoms"), and other than a word that names no endpoint
    (``_GENERIC_OUTCOME_STEMS``). The head is the last word of the phrase, or of its part before "of" ("duration of
    hospital stay": "duration", so "the duration of ventilation" does not count and "hospital" does)."""
    for alt in alts:
        head = [s for s in stem_sequence(_OF.split(alt.label, maxsplit=1)[0]) if s in alt.stems] or \
            [s for s in stem_sequence(alt.label) if s in alt.stems]
        if (alt.stems - frozenset(head[-1:]) - _GENERIC_OUTCOME_STEMS) & words:
            return True
    return False


def article_answers(claims: list[Claim], texts: dict[str, str], taken: set[tuple[str, str]],
                    compiled: list[CompiledQuestion], config: QuestionsConfig,
                    embed: Callable[[list[str]], np.ndarray], q_emb: np.ndarray) -> Iterator[Assignment]:
    """Under ``QuestionsConfig.whole_abstract``, each article whose abstract answers a question as a whole but
    none of whose claims was assigned to it (not in ``taken``: ``(article_uid, question_id)``) answers it with one
    claim: of its claims that name the question's outcome (and report no baseline, correlation or interaction, no
    other endpoint, no excluded or rival population, no active arms set equal, no arm against itself
    (``compares_itself``), no untreated arm against a question of two active drugs unless it names the comparator
    too), the closest to the question by cosine among those that compare something (``compares_something``) if any
    do (``embed``: sentences → unit vectors; ``q_emb``: the compiled questions' vectors). The abstract must name the
    question's arms (``abstract_names_arms``) and its population, and no claim of the article may compare something
    else (``compares_another``: doses, a combination, an add-on, groups of the selection): its study is then about
    that. A trial grouped under a question nearly always states its result on the question's outcome, but in words
    the rules above may not read ("the PGx group", "in 78% of slow acetylators ... while none of"); on the Evidence
    Inference question benchmark's development sample, 48 of the first 58 claims so taken held the expert's evidence
    for the question. An article none of whose claims names the outcome in the question's words answers it with its
    closest claim if that cosine reaches ``QuestionsConfig.article_similarity_alone``."""
    by_article: dict[str, list[Claim]] = {}
    for claim in claims:
        by_article.setdefault(claim.article_uid, []).append(claim)
    candidates: list[tuple[Claim, int, frozenset[str], bool]] = []  # the last: taken by similarity alone
    index = QuestionIndex(compiled)  # an abstract names the arms of a question only when it names its intervention
    for uid, group in by_article.items():
        if not (abstract := texts.get(uid, "")):
            continue
        stems = abstract_words(abstract)
        for k in sorted(index.reachable(stems)):
            q = compiled[k]
            if ((uid, q.question.question_id) in taken or not abstract_names_arms(abstract, q)
                    or not studied_population(q, stems)):
                continue
            if any(compares_another(claim.sentence, q) for claim in group):
                continue  # the study's comparison is another one: it answers the question with no claim
            eligible = [(claim, words) for claim in group if not reports_no_comparison(s := claim.sentence)
                        and not other_endpoint(s, q) and not excluded_population(s, q)
                        and not active_arms_equal(s, q) for words in [claim_words(s, abstract)]
                        if not rival_population(s, words, q, compiled, abstract, words | stems)
                        and not compares_itself(s, q)
                        and not (untreated_against_active(s, q)
                                and best_match(words | terms_apart(s), q.comparator)[1] is None)]
            naming = [(claim, words) for claim, words in eligible
                      if best_match(words, q.outcome, config.min_outcome_coverage)[1] is not None]
            if naming:
                candidates += [(claim, k, words, False) for claim, words in naming]
                continue
            candidates += [(claim, k, words, True) for claim, words in eligible if names_part_of(words, q.outcome)
                           and (best_match(words, q.intervention)[1] is not None
                                or not names_a_drug(claim.sentence, q))]
    if not candidates:
        return
    similarity = (embed([c.sentence for c, *_ in candidates]) * q_emb[[k for _, k, *_ in candidates]]).sum(axis=1)
    ranked: dict[tuple[str, int], list[tuple[tuple[bool, float], Claim, frozenset[str], bool]]] = {}
    for (claim, k, words, alone), sim in zip(candidates, similarity.tolist(), strict=True):
        rank = (compares_something(claim.sentence, words, compiled[k]), sim)
        ranked.setdefault((claim.article_uid, k), []).append((rank, claim, words, alone))
    for (uid, k), options in ranked.items():
        q = compiled[k]
        for (_, sim), claim, words, alone in sorted(options, key=lambda o: o[0], reverse=True):
            verdict = assess(words, sim, q, config, doses(claim.sentence), arms=words | abstract_words(texts[uid]),
                             arms_why="named in its abstract, which answers the question as a whole; of the article's "
                                      f"claims{', none' if alone else ''} naming the outcome, the closest to the question",
                             similarity_alone=config.article_similarity_alone if alone else None)
            if verdict is not None:
                yield Assignment(claim_id=claim.claim_id, question_id=q.question.question_id, article_uid=uid,
                                 score=verdict[0], why=verdict[1])
                break


def compares_something(sentence: str, words: frozenset[str], q: CompiledQuestion) -> bool:
    """Whether a claim names the question's intervention or sets groups against each other
    (``sets_groups_against``): an article's answer is taken from such claims before the rest ("subjects in the
    placebo group lost 6.4% of BMD", "these data support lowering postprandial glucose" state no comparison)."""
    return sets_groups_against(sentence) or best_match(words, q.intervention)[1] is not None
