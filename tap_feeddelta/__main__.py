"""``python -m tap_feeddelta``."""

from tap_feeddelta.tap import TapFeedDelta

TapFeedDelta.cli()
