"""tap-feeddelta: RSS, Atom and JSON Feed URLs as an incremental Singer change stream."""

__version__ = "0.1.0"
