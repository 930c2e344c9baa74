"""The Tap: config contract, stream list and the shared run. No feed logic here."""

from __future__ import annotations

import contextlib
import copy
import logging
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from types import FrameType
from typing import IO, Any, Final, cast

import click
from singer_sdk import Stream, Tap
from singer_sdk.configuration._dict_config import parse_environment_config
from singer_sdk.exceptions import ConfigValidationError, MappingError
from singer_sdk.helpers._classproperty import classproperty
from singer_sdk.helpers._typing import is_string_array_type
from singer_sdk.helpers._util import load_json
from singer_sdk.helpers.capabilities import PluginCapabilities, TapCapabilities

from tap_feeddelta.config import (
    CONFIG_SCHEMA,
    REFUSED_SETTINGS,
    Settings,
    all_config_problems,
    refused_settings,
    settings_from_config,
    typed_from_text,
)
from tap_feeddelta.errors import OutputClosed, StateError
from tap_feeddelta.messages import EncodedStateWriter, FeedDeltaWriter
from tap_feeddelta.run import FeedRun
from tap_feeddelta.sharding import feeds_of_other_shards
from tap_feeddelta.state import feed_items_state, index_partitions, not_utf8_text
from tap_feeddelta.streams import FeedHealthStream, FeedItemsStream

# Seconds a run stopped by a signal has to write its last records, health rows and STATE.
TERMINATION_GRACE_SECONDS = 30
# A date with a time ("2024-01-03T05:00", "2024-01-03 05:00").
_HAS_A_TIME: Final = re.compile(r"\d[Tt ]\d")
# The end of a date-time that names its zone: "Z" or an offset ("+02:00", "-0500").
_NAMES_ITS_ZONE: Final = re.compile(r"(?:[Zz]|[+-]\d{2}:?\d{2})\s*$")


def _config_file_problem(path: str) -> str | None:
    """Why the config file at ``path`` cannot be used, or None. Never quotes the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return "is not UTF-8 text"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or type(exc).__name__})"
    try:
        config = load_json(text)  # as the SDK reads it
    except ValueError as exc:
        line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
        return "is not valid JSON" + (f" (line {line}, column {column})" if line else "")
    return None if isinstance(config, dict) else "does not hold a JSON object"


class _ReadOnce:
    """A state file's text for the SDK, which reads it once: the text is not held after
    that (an io.StringIO would keep four bytes a character for the whole run)."""

    def __init__(self, text: str) -> None:
        self._text = text

    def read(self) -> str:
        text, self._text = self._text, ""
        return text


class TapFeedDelta(Tap):
    """RSS, Atom and JSON Feed URLs as an incremental change stream."""

    name = "tap-feeddelta"
    message_writer_class = FeedDeltaWriter
    # Not activate-version: the streams are change streams, and ACTIVATE_VERSION would
    # let a target delete every row of an earlier run (the config refuses the setting).
    # Not batch: see REFUSED_SETTINGS (config.py).
    capabilities = [  # noqa: RUF012
        c
        for c in Tap.capabilities
        if c not in (TapCapabilities.ACTIVATE_VERSION, PluginCapabilities.BATCH)
    ]
    # A copy: the SDK adds its built-in settings to this dict in place.
    config_jsonschema = copy.deepcopy(CONFIG_SCHEMA)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        state = kwargs.get("state")
        if state is not None and not isinstance(state, dict | str | os.PathLike):
            # The SDK reads a falsy state ([], 0, false) as no state at all: a silent
            # new baseline. (A state file holding just null cannot be told from none.)
            raise StateError(
                "state: the state must be a JSON object — the state was not changed and "
                "nothing was emitted."
            )
        super().__init__(*args, **kwargs)
        if isinstance(self.message_writer, FeedDeltaWriter):
            # The SDK has no hook for its state writer (see messages.py for why).
            self._state_writer = EncodedStateWriter(self.message_writer)
            self._state_writer.before_state = self._write_finished_health_rows
        # From here a signal's final STATE is the state read (or moved on from it).
        self._is_state_loaded = True

    def _write_finished_health_rows(self) -> None:
        """The feed_health rows of the feeds finished so far and not written yet: before
        a STATE that covers those feeds, so that a run killed just after it (SIGKILL, out
        of memory) does not leave them out for good."""
        health = self.streams.get(FeedHealthStream.name) if self._streams else None
        if isinstance(health, FeedHealthStream):
            try:
                health.write_finished_rows()
            except Exception:  # the state matters more than the rows
                self.logger.exception("Could not write the health rows of finished feeds")

    @classmethod
    def cb_config(cls, ctx: click.Context, param: click.Option, value: tuple[str, ...]) -> Any:
        """--config: a file that cannot be read, is not JSON or holds no object is named
        in one line and the run ends (the SDK lets a traceback out, before its own
        error handling is set up)."""
        for path in value:
            if path != "ENV" and (why := _config_file_problem(path)):
                cls.logger.error("config_invalid: config file %r %s", path, why)
                ctx.exit(1)
        return super().cb_config(ctx, param, value)

    @classproperty
    def _env_var_config(cls) -> dict[str, Any]:  # noqa: N805
        """Settings from TAP_FEEDDELTA_* variables (with --config ENV), each read as its
        type: a value that is not (max_concurrency=four, a boolean spelt "ture") stays
        text and the config check refuses it by name. The SDK's own reading raised a bare
        ValueError for a bad integer or JSON object, and took any unknown boolean
        spelling for false. A variable that names no setting is refused by name, as an
        unknown key in a config file is (the SDK let a typo leave the default in place)."""
        schema = cls.config_jsonschema
        cls.append_builtin_config(schema)
        properties: dict[str, Any] = schema.get("properties", {})
        # The SDK still finds the variables (and loads a .env file, as it always did);
        # only lists of strings keep its reading (JSON, or comma-separated).
        as_text = {
            "properties": {
                name: prop if is_string_array_type(prop) else {"type": ["string"]}
                for name, prop in properties.items()
            }
        }
        found = parse_environment_config(as_text, cls._env_var_prefix)
        # After parse_environment_config: it has loaded the .env file, if any.
        if problems := _unknown_variables(cls._env_var_prefix, properties):
            raise _config_invalid(problems)
        return {name: typed_from_text(text, properties[name]) for name, text in found.items()}

    @classmethod
    def invoke(cls, *, state: IO[str] | None = None, **options: Any) -> None:
        """The SDK's command line; a state that cannot be used ends the run with its
        message alone (the SDK's hook would log a traceback with it)."""
        try:
            cls._invoke(state=state, **options)
        except ConfigValidationError as exc:
            cls._log_refused_config(exc)
            sys.exit(1)
        except StateError as exc:
            cls.logger.error("%s: %s", exc.code, exc)
            sys.exit(1)
        except MappingError as exc:  # a stream map the SDK cannot set up or evaluate
            cls.logger.error("config_invalid: config['stream_maps']: %s", exc)
            sys.exit(1)
        except (OutputClosed, BrokenPipeError):
            # Nothing more can reach the target, not even at exit (a flush of stdout).
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            cls.logger.error(
                "output_closed: the target stopped reading the tap's output (it ended or "
                "failed; see its log): the run stops. The state has not moved past the last "
                "STATE message the target received."
            )
            sys.exit(1)

    @classmethod
    def cb_test(cls, ctx: click.Context, param: click.Option, value: str) -> None:
        """--test: a refused config is told as a run tells it (the SDK let a traceback out)."""
        try:
            super().cb_test(ctx, param, value)
        except ConfigValidationError as exc:
            cls._log_refused_config(exc)
            ctx.exit(1)

    @classmethod
    def _log_refused_config(cls, exc: ConfigValidationError) -> None:
        """One ERROR line per problem, each ``config_invalid: ...``, and nothing more: the
        SDK would end with a line of its own without a code ("Config validation failed")."""
        for error in exc.errors or [str(exc)]:
            coded = error.partition(":")[0] == "config_invalid"
            cls.logger.error("%s", error if coded else f"config_invalid: {error}")

    @classmethod
    def _invoke(cls, *, state: IO[str] | None = None, **options: Any) -> None:
        """The SDK's command line, with a state file that is not UTF-8 text or not JSON
        named as such (the SDK lets the decoder's or JSON reader's traceback out)."""
        if state is None:
            super().invoke(**options)
            return
        try:
            text = state.read()
        except UnicodeDecodeError as exc:
            head = exc.object[:2] if exc.start == 0 else b""
            raise StateError(
                f"state: the state file {not_utf8_text(bytes(head))} — the state was not "
                "changed and nothing was emitted."
            ) from None
        # Kept to tell the state's JSON error from another file's: not the text itself,
        # which (megabytes at 10,000 feeds) must not live through the whole run.
        marker = (len(text), text[:256], text[-256:])
        source = _ReadOnce(text)
        del text
        try:
            super().invoke(state=cast("IO[str]", source), **options)
        except ValueError as exc:
            doc = getattr(exc, "doc", None)
            if not isinstance(doc, str) or (len(doc), doc[:256], doc[-256:]) != marker:
                raise  # not the state's JSON (the catalog's, say)
            line, column = getattr(exc, "lineno", None), getattr(exc, "colno", None)
            where = f" (line {line}, column {column})" if line is not None else ""
            raise StateError(
                f"state: the state file is empty or not valid JSON{where} — the state was "
                "not changed and nothing was emitted."
            ) from None

    def _reset_state_progress_markers(self) -> None:
        # Called by sync_all just before it writes the incoming state back out.
        super()._reset_state_progress_markers()
        # Every stream's bookmark exists from the start. The SDK adds feed_health's empty
        # one only when that stream runs, which changed the state for nothing.
        bookmarks = self.state.setdefault("bookmarks", {})
        for name in self.streams:
            bookmarks.setdefault(name, {})
        # The incoming state is not written back: the target has it already, and at
        # 10,000 feeds it is megabytes. The state is written once it has moved.
        if isinstance(self._state_writer, EncodedStateWriter):
            self._state_writer.mark_written(self.state)

    def discover_streams(self) -> list[Stream]:
        return [FeedItemsStream(self), FeedHealthStream(self)]

    @property
    def streams(self) -> dict[str, Stream]:
        # feed_items first: it fetches and moves state; feed_health then replays the same
        # run's health rows. (The SDK's order is alphabetical, and load_streams is final.)
        order = {FeedItemsStream.name: 0, FeedHealthStream.name: 1}
        return dict(sorted(super().streams.items(), key=lambda kv: order.get(kv[0], 2)))

    def _validate_config(self, *, raise_errors: bool = True) -> list[str]:
        self.append_builtin_config(self.config_jsonschema)
        properties = self.config_jsonschema.get("properties", {})
        not_finite = []
        for name, prop in properties.items():
            types = prop.get("type", [])
            if "number" not in ([types] if isinstance(types, str) else types):
                continue
            # Numbers from TAP_FEEDDELTA_* variables (and text in a file) are read here:
            # _env_var_config leaves them as text.
            value = self._config.get(name)
            if isinstance(value, str):
                with contextlib.suppress(ValueError):
                    self._config[name] = value = float(value)
            # NaN ("nan" as text) passes both minimum and maximum; infinity is no
            # setting either.
            if isinstance(value, float) and not math.isfinite(value):
                not_finite.append(name)
        # Not the SDK's own check: its messages quote the offending value (a feed URL
        # with a token or a password in it, put where a list belongs), and it logs a
        # WARNING without a code. Every problem is told at once, not one kind per run.
        others = {
            k: v
            for k, v in self._config.items()
            if k not in REFUSED_SETTINGS and k not in not_finite
        }
        problems = refused_settings(self._config)
        problems += [f"config[{name!r}]: must be a finite number" for name in not_finite]
        found, unjudged = all_config_problems(self.config_jsonschema, others)
        problems += found
        if not any(key.startswith("flattening_") for key in unjudged):
            problems += _flattening_problems(others)
        if problems and raise_errors:
            raise _config_invalid(problems, self.config_jsonschema)
        return problems

    def load_state(self, state: dict[str, Any]) -> None:
        # Refuse a state we cannot read now, before any stream writes a record.
        try:
            feed_state = feed_items_state(state)
            if feed_state is not None:
                self._check_shard(index_partitions(feed_state))
        except StateError as exc:
            raise StateError(
                f"{exc} — the state was not changed and nothing was emitted. To start over "
                "on purpose, clear it (meltano state clear <state-id>, or run with "
                "--full-refresh).",
                exc.code,
            ) from None
        super().load_state(state)

    def _check_shard(self, index: dict[tuple[str, str], Any]) -> None:
        """A state that holds feeds another shard owns was written for another sharding:
        running on would start those feeds over silently and leave them stale in their
        own shard's state."""
        settings = self.feed_settings
        foreign = feeds_of_other_shards(
            index,
            settings.monitor_id,
            settings.feed_urls,
            settings.shard_count,
            settings.shard_index,
        )
        if foreign:
            raise StateError(
                f"state: it holds {len(foreign)} configured feeds that another shard owns "
                f"(this is shard {settings.shard_index} of {settings.shard_count}): the "
                "state was written for another shard_count or shard_index. Move the "
                "feeds to their shards with tap-feeddelta-state (see Scaling out)",
                "state_other_shard",
            )

    @cached_property
    def feed_settings(self) -> Settings:
        """The validated config, typed (read once: feed_urls may hold a million URLs)."""
        return settings_from_config(dict(self.config))

    @cached_property
    def feed_run(self) -> FeedRun:
        # Imported here: --discover and --about never load the client.
        from tap_feeddelta.fetch import Fetcher, FetchPolicy

        settings = self.feed_settings
        start = self.config.get("start_date")
        if (
            isinstance(start, str)
            and _HAS_A_TIME.search(start)
            and not _NAMES_ITS_ZONE.search(start)
        ):
            self.logger.warning(
                "start_date %s names no UTC offset: read as UTC. (In meltano.yml, quote a"
                " date-time with an offset: YAML and Meltano drop an unquoted one's.)",
                start,
            )
        policy = FetchPolicy(
            user_agent=settings.user_agent,
            max_feed_bytes=settings.max_feed_bytes,
            max_redirects=settings.max_redirects,
            request_timeout_seconds=settings.request_timeout_seconds,
            allow_private_networks=settings.allow_private_networks,
            max_per_host=settings.max_per_host,
            ca_bundle_path=settings.ca_bundle_path,
        )
        self._fetcher = Fetcher(policy)
        return FeedRun(settings, self._fetcher, self.logger)

    def _handle_termination(self, signum: int, frame: FrameType | None) -> None:
        # Fetches in flight end at once instead of running on meanwhile. Their feeds'
        # state has not moved: they are checked again next run.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_IGN)  # a second signal must not cut this short
        fetcher = self.__dict__.get("_fetcher")
        if fetcher is not None:
            fetcher.abort()
        # A target that has stopped reading would keep the last writes (and the tap)
        # waiting for ever: end without them after a grace period. Until then, only what
        # can reach the target whole is written (messages.py), a little before the end so
        # that the log says what was left out.
        writer = self.message_writer
        restore = writer.restore_output if isinstance(writer, FeedDeltaWriter) else None
        _exit_after(TERMINATION_GRACE_SECONDS, 128 + signum, self.logger, restore)
        if isinstance(writer, FeedDeltaWriter):
            margin = min(1.0, TERMINATION_GRACE_SECONDS / 10)
            writer.finish_by(time.monotonic() + TERMINATION_GRACE_SECONDS - margin, self.logger)
        if isinstance(writer, FeedDeltaWriter) and writer.is_writing:
            # Stopped inside a write (a slow target): writing now would put a whole
            # message after part of one. The main thread finishes that write first.
            writer.after_write = lambda: self._end_run(signum, frame)
            return
        self._end_run(signum, frame)

    def _end_run(self, signum: int, frame: FrameType | None) -> None:
        """After a signal: the health rows of the feeds finished, the final STATE, and
        the exit with 128 + the signal."""
        try:
            if self.__dict__.get("_is_state_loaded"):
                # The state, after the health rows of the feeds finished (write_state's
                # before_state); ends with sys.exit(0).
                super()._handle_termination(signum, frame)
            # Before the state is read (the SDK handles signals from its start), the
            # SDK's state is still empty: a STATE then would wipe every bookmark, so the
            # one kept from the run before stays in force.
        finally:
            if isinstance(self.message_writer, FeedDeltaWriter):
                self.message_writer.restore_output()
            # An interrupted run is not a success: 128 + the signal, by convention.
            self.logger.info("Stopped by signal %d before the end of the run", signum)
            sys.exit(128 + signum)


# TAP_FEEDDELTA_<X> variables that are no setting and still not a mistake: the SDK's
# log level, and Meltano's alias of its _metadata extra (the other extras, and a plugin
# that inherits from tap-feeddelta, have TAP_FEEDDELTA__ names).
OTHER_VARIABLES = frozenset({"LOGLEVEL", "METADATA"})


def _unknown_variables(prefix: str, properties: dict[str, Any]) -> list[str]:
    """One message for each ``<prefix><X>`` environment variable that names no setting
    (a typo would leave its setting at the default without a word), never quoting the
    value. Meltano also exports an object setting's keys one by one, as
    ``<prefix><SETTING>_<KEY>``: those are let through."""
    names = {name.upper().replace("-", "_"): name for name in properties}
    objects = tuple(
        f"{upper}_" for upper, name in names.items() if "object" in properties[name].get("type", [])
    )
    refused = {name.upper(): why for name, why in REFUSED_SETTINGS.items()}
    problems = []
    for variable in sorted(os.environ):
        if not variable.startswith(prefix):
            continue
        rest = variable.removeprefix(prefix)
        if rest in names or rest in OTHER_VARIABLES or rest.startswith(("_", *objects)):
            continue
        why = refused.get(rest, "is not a setting of this tap (see tap-feeddelta --about)")
        problems.append(f"environment variable {variable}: {why}")
    return problems


def _exit_after(
    seconds: float,
    code: int,
    logger: logging.Logger,
    before_exit: Callable[[], None] | None = None,
) -> None:
    """End the process with ``code`` in ``seconds``, whatever the main thread is doing
    (blocked on a write to a target that does not read: no signal would end it then)."""

    def give_up() -> None:
        logger.error(
            "Stopped: the run did not end within %d s of the signal (a target that does "
            "not read holds up the output); the final STATE may be missing",
            seconds,
        )
        if before_exit is not None:
            before_exit()
        os._exit(code)

    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    timer.start()


def _flattening_problems(config: dict[str, Any]) -> list[str]:
    """Flattening settings under which the SDK cannot flatten the streams' schemas (it
    raises a bare ValueError mid-run): a key length so short that two columns get one
    name."""
    from singer_sdk.helpers._flattening import FlatteningOptions, flatten_schema

    try:
        options = FlatteningOptions.from_dict(cast("Any", config))
    except ConfigValidationError:
        return []  # the SDK says what is wrong itself
    if not options.enabled:
        return []
    for schema in (FeedItemsStream.schema, FeedHealthStream.schema):
        try:
            flatten_schema(
                schema, options.max_level, options.separator, max_key_length=options.max_key_length
            )
        except ValueError:
            return [
                f"config['flattening_max_key_length']: {options.max_key_length} is too short: "
                "two flattened columns would get the same name"
            ]
    return []


def _config_invalid(
    problems: list[str], schema: dict[str, Any] | None = None
) -> ConfigValidationError:
    """The SDK's error for a refused config, each problem logged with the stable code."""
    return ConfigValidationError(
        "Config validation failed",
        errors=[f"config_invalid: {problem}" for problem in problems],
        schema=schema,
    )


if __name__ == "__main__":
    TapFeedDelta.cli()
