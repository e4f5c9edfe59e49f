"""The learning queue's orders and its default random share: the names a model, a form or a
command needs without the ranking itself (``nsmcore.queue``, which loads numpy)."""

RANDOM, INFORMATIVE, MIXED = "random", "informative", "mixed"
ORDERS = (RANDOM, INFORMATIVE, MIXED)
DEFAULT_RANDOM_SHARE = 0.2
