"""BioDivergence: the contract every other package imports (ontology, records, release format, card, Hub, CLI)."""

__version__ = "0.1.0"
