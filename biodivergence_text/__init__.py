"""Text rules shared by the builder and the trainer: cue lexicons, negation, hedging and the axis cues of the
ontology. Below both of them and above the contract (``biodivergence_dataset``), which is all it imports."""
