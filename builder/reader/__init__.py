"""The learned finding reader: a claim's finding relative to a clinical question (see ``model``)."""

from .model import READER_VERSION, FindingReader, Reading, disagreement, load_reader

__all__ = ["READER_VERSION", "FindingReader", "Reading", "disagreement", "load_reader"]
