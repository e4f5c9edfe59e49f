"""German pages write dates as every other page does (config/formats/en/formats.py): one format site-wide."""

from config.formats.en.formats import *  # noqa: F403
