"""The toy's part of ``cogen eval``: exact match of predicted grids."""

from cogen.kit.evaluate import GridEvaluator

EVALUATOR = GridEvaluator()
