"""What a ``biodivergence train`` run writes and the paper's schedule it starts from, in one place.

The training command (:mod:`trainer.train`), the model card (:mod:`trainer.model_card`) and prediction read these
names here, so none of them imports another for a file name or a paper number.
"""

#: Our summary of a run (Trainer's own ``train_results.json`` / ``all_results.json`` are Trainer's).
RESULTS_FILE = "biodivergence_results.json"
#: The test predictions a run writes beside its model, in the metric's input format.
PREDICTIONS_FILE = "test_predictions.jsonl"
#: The paper's seeds (appendix J.3): one model per seed, mean ± std over them.
PAPER_SEEDS = (42, 123, 7)
#: The paper's number of training epochs (Table 32); a shorter run is called a budget run on its card.
PAPER_EPOCHS = 8
