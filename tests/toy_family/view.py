"""The toy in ``cogen view``: input -> output, and a prediction beside the output."""

from cogen.kit.view import GridViewer
from toy_family.evaluate import EVALUATOR

VIEWER = GridViewer("mirror", EVALUATOR)
