"""Stage: Claim → Assignment (claims → the pack's questions they answer), between claims and mine.

A claim answers a question when it speaks of the question's intervention (or exposure) **and** its
outcome. Both are matched as content stems (``builder.frameterms.terms``), abbreviations expanded with the
definitions of the claim's own abstract ("blood pressure (BP)"), with one clinical lexicon
(``builder/lexicons/clinical.yaml``): a drug class in a question is met by any of its member drugs
("statins" ⊃ "pravastatin"), and a phrase of a synonym group by any other ("BP" = "blood pressure").
The embedding similarity of the claim sentence and the question text is the third signal: it enters the
score, a claim far from the question (below ``min_similarity``) is not assigned, and (when configured,
``similarity_alone``) a very close one may stand in for a missing outcome match. A sentence about the
groups before treatment (baseline characteristics) or a correlation between measures
(:func:`reports_correlation`) answers no question, nor does a claim whose abstract
never names the question's population (:func:`studied_population`), names it only as absent
(:func:`excluded_population`), or names only the population of another question of the same comparison
(:func:`rival_population`: infarction, not heart failure). The comparison must be the question's
(:func:`other_comparison`): a named comparator must be named, and a question against placebo (or with no
comparator) is not answered by a head-to-head claim of two active drugs.

Output: one :class:`Assignment` row per (claim, question) with its score and why, ``questions.json`` (the
pack's questions, as the miner attaches them to pairs) and ``stats.json``. The sentences of the claims that
name a question's intervention and outcome (:func:`may_answer`; the others cannot answer one) are embedded on
the runtime's ranks into the miner's embedding cache (``cache_dir``), so mine does not embed them again; the
matching runs sharded on the same executors as the claims stage.

CLI: ``biodivergence questions CLAIMS_DIR --pack FILE --out DIR``.

The package, by job: :mod:`.lexicon` (stems and the lexicon, shared with gather and the reader annotator),
:mod:`.compiled` (a question read against it), the sentence rules of the rule assigner (:mod:`.arms`,
:mod:`.groups`, :mod:`.filters`, :mod:`.population`, :mod:`.endpoints`) and the assigner itself (:mod:`.match`),
the learned assigner (:mod:`.relevance`), and the stage (:mod:`.config`, :mod:`.questions_stage`).
"""

from .config import QUESTIONS_FILE, STAGE, Assignment, QuestionsConfig
from .questions_stage import abstract_texts, add_arguments, read_assignments, run, run_stage

__all__ = ["QUESTIONS_FILE", "STAGE", "Assignment", "QuestionsConfig", "abstract_texts", "add_arguments",
           "read_assignments", "run", "run_stage"]
