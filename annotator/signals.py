"""Signals the annotation workspace sends, for apps above it to listen to without annotator
importing them (the layers: tests/app/test_layers.py).

- ``annotation_submitted``: the annotation page saved a submit; kwargs ``assignment``,
  ``annotation`` (``changed`` says whether a revision was written), ``request``.
"""

from django.dispatch import Signal

annotation_submitted = Signal()
