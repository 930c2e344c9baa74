"""``python -m tap_feeddelta``."""

from tap_feeddelta.cli import main

main()
