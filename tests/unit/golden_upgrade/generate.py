"""Writes remembered.json: what the previous version of the tap remembered of each document
of documents.py, for the golden upgrade test (test_golden_upgrade.py).

Run it once per release with the *previous* release's code, never this tree's: the
fixture is what that version wrote, which this version must read as unchanged.

    git archive <previous tag or commit> tap_feeddelta | tar -x -C /tmp/previous
    /work/main/.venv/bin/python tests/unit/golden_upgrade/generate.py /tmp/previous <commit>

(any Python with the tap's dependencies). For each document, the previous version's
``parse_feed`` and ``diff_items`` without a bookmark (a first run) give the items it
remembers: (identity hash, content hash) pairs, as its bookmark holds them. A document
that version could not read is stored as its error code.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(previous_tree: str, version: str) -> None:
    sys.path.insert(0, str(Path(previous_tree).resolve()))
    from tap_feeddelta import __file__ as tap_file
    from tap_feeddelta.delta import DeltaSettings, diff_items
    from tap_feeddelta.errors import ParseError
    from tap_feeddelta.parse import parse_feed
    from tap_feeddelta.state import unpack_items

    if not tap_file or not Path(tap_file).is_relative_to(Path(previous_tree).resolve()):
        raise SystemExit(f"not the previous version's code: {tap_file}")
    documents = runpy.run_path(str(HERE / "documents.py"))["all_documents"]()
    remembered: dict[str, object] = {}
    for name, (body, content_type, url) in documents.items():
        try:
            items = parse_feed(body, content_type, url).items
        except ParseError as exc:
            remembered[name] = exc.code
            continue
        first = diff_items(None, items, DeltaSettings("m", url))
        pairs = unpack_items(first.remembered_items)
        remembered[name] = [[key, content] for key, content in pairs.items()]
    # One line a document, so that a new fixture's diff shows which documents changed.
    lines = [f" {json.dumps(name)}: {json.dumps(value)}" for name, value in remembered.items()]
    text = f'{{"version": {json.dumps(version)}, "documents": {{\n' + ",\n".join(lines) + "\n}}\n"
    (HERE / "remembered.json").write_text(text)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])
