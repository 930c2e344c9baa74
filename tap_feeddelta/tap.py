"""The Tap: singer-sdk's adapter. Its overrides hand the work to modules with one job each:
configinput (the config as it arrives), statefile (the state given), termination (a run
stopped by a signal) and run.FeedRun (the run itself). No feed logic here."""

from __future__ import annotations

import copy
import os
import sys
import time
from contextvars import ContextVar
from functools import cached_property
from types import FrameType
from typing import IO, TYPE_CHECKING, Any

import click
from singer_sdk import Stream, Tap
from singer_sdk.configuration._dict_config import parse_environment_config
from singer_sdk.exceptions import ConfigValidationError, MappingError
from singer_sdk.helpers._classproperty import classproperty
from singer_sdk.helpers._typing import is_string_array_type
from singer_sdk.helpers.capabilities import PluginCapabilities, TapCapabilities

from tap_feeddelta import termination
from tap_feeddelta.config import CONFIG_SCHEMA, Settings, settings_from_config, typed_from_text
from tap_feeddelta.configinput import (
    config_file_problem,
    config_problems,
    numbers_read,
    start_date_names_no_zone,
    unknown_variables,
)
from tap_feeddelta.errors import OutputClosed, StateError
from tap_feeddelta.messages import EncodedStateWriter, FeedDeltaWriter, NoStateWriter
from tap_feeddelta.respellings import respelled_feeds
from tap_feeddelta.run import FeedRun
from tap_feeddelta.sdklog import SDK_NOTICES_AT_DEBUG
from tap_feeddelta.state import feed_items_state, index_partitions
from tap_feeddelta.statefile import (
    check_shard,
    refused_state,
    state_file_text,
    state_of_file,
    state_type_error,
)
from tap_feeddelta.streams import FeedHealthStream, FeedItemsStream
from tap_feeddelta.termination import exit_after, ignore_further_signals, write_deadline

if TYPE_CHECKING:
    from tap_feeddelta.fetch import FetchPolicy

# The state a --state file held, read by _invoke for the Tap that the SDK's invoke then
# makes (the SDK is given no file to read again): taken, not kept, by that Tap.
_FILE_STATE: ContextVar[dict[str, Any] | None] = ContextVar("_FILE_STATE", default=None)
# Set while --test makes and runs its Tap (cb_test), for that Tap to write no STATE.
_TEST_RUN: ContextVar[bool] = ContextVar("_TEST_RUN", default=False)


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
    # respelled_feeds of the loaded state over every configured URL (load_state), for the
    # run: found once.
    _respelled_at_start: dict[str, tuple[str, str]] | None = None
    # A copy: the SDK adds its built-in settings to this dict in place.
    config_jsonschema = copy.deepcopy(CONFIG_SCHEMA)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if (file_state := _FILE_STATE.get()) is not None:
            _FILE_STATE.set(None)  # megabytes at 10,000 feeds: not held for the run
            kwargs["state"] = file_state
        if (error := state_type_error(kwargs.get("state"))) is not None:
            raise error
        super().__init__(*args, **kwargs)
        if _TEST_RUN.get():
            self._state_writer = NoStateWriter(self.message_writer)
        elif isinstance(self.message_writer, FeedDeltaWriter):
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
            if path != "ENV" and (why := config_file_problem(path)):
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
        if problems := unknown_variables(cls._env_var_prefix, properties, os.environ):
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
        """--test: a refused config is told as a run tells it (the SDK let a traceback out).
        A test run writes no STATE (NoStateWriter): the SDK gives it no --state."""
        reset = _TEST_RUN.set(True)
        try:
            super().cb_test(ctx, param, value)
        except ConfigValidationError as exc:
            cls._log_refused_config(exc)
            ctx.exit(1)
        finally:
            _TEST_RUN.reset(reset)

    @classmethod
    def _log_refused_config(cls, exc: ConfigValidationError) -> None:
        """One ERROR line per problem, each ``config_invalid: ...``, and nothing more: the
        SDK would end with a line of its own without a code ("Config validation failed")."""
        for error in exc.errors or [str(exc)]:
            coded = error.partition(":")[0] == "config_invalid"
            cls.logger.error("%s", error if coded else f"config_invalid: {error}")

    @classmethod
    def _invoke(cls, *, state: IO[str] | None = None, **options: Any) -> None:
        """The SDK's command line, with the state file read here: one that is not UTF-8
        text, not JSON or not an object is refused by name (the SDK let the decoder's or
        JSON reader's traceback out, and read a string as a path to follow)."""
        if state is None:
            super().invoke(**options)
            return
        file_state = state_of_file(state_file_text(state))
        reset = _FILE_STATE.set(file_state)
        del file_state
        try:
            super().invoke(**options)
        finally:
            _FILE_STATE.reset(reset)

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
        # Numbers from TAP_FEEDDELTA_* variables (and text in a file) are read here:
        # _env_var_config leaves them as text.
        read, not_finite = numbers_read(self._config, properties)
        self._config.update(read)
        # Not the SDK's own check: its messages quote the offending value (a feed URL
        # with a token or a password in it, put where a list belongs), and it logs a
        # WARNING without a code. Every problem is told at once, not one kind per run.
        problems = config_problems(
            self._config,
            self.config_jsonschema,
            not_finite,
            (FeedItemsStream.schema, FeedHealthStream.schema),
        )
        if problems and raise_errors:
            raise _config_invalid(problems, self.config_jsonschema)
        return problems

    def load_state(self, state: dict[str, Any]) -> None:
        # Refuse a state we cannot read now, before any stream writes a record.
        try:
            feed_state = feed_items_state(state)
            warning = None
            if feed_state is not None:
                settings = self.feed_settings
                index = index_partitions(feed_state)
                # Found once, for the check and for the run (which starts from this state).
                self._respelled_at_start = respelled_feeds(
                    index, settings.monitor_id, settings.feed_urls
                )
                warning = check_shard(index, settings, self._respelled_at_start)
        except StateError as exc:
            raise refused_state(exc) from None
        if warning is not None:
            self.logger.warning("%s", warning)
        super().load_state(state)

    @cached_property
    def feed_settings(self) -> Settings:
        """The validated config, typed (read once: feed_urls may hold a million URLs)."""
        return settings_from_config(dict(self.config))

    @cached_property
    def feed_run(self) -> FeedRun:
        # Imported here: --discover and --about never load the client.
        from tap_feeddelta.fetch import Fetcher

        settings = self.feed_settings
        start = self.config.get("start_date")
        # Told when the run starts, not when the config is checked (--discover, --test).
        if start_date_names_no_zone(start):
            self.logger.warning(
                "start_date %s names no UTC offset: read as UTC. (In meltano.yml, quote a"
                " date-time with an offset: YAML and Meltano drop an unquoted one's.)",
                start,
            )
        policy = _fetch_policy(settings)
        self._fetcher = Fetcher(policy)
        return FeedRun(
            settings, self._fetcher, self.logger, respelled_at_start=self._respelled_at_start
        )

    def _handle_termination(self, signum: int, frame: FrameType | None) -> None:
        # Fetches in flight end at once instead of running on meanwhile. Their feeds'
        # state has not moved: they are checked again next run.
        ignore_further_signals()
        fetcher = self.__dict__.get("_fetcher")
        if fetcher is not None:
            fetcher.abort()
        # A target that has stopped reading would keep the last writes (and the tap)
        # waiting for ever: end without them after a grace period. Until then, only what
        # can reach the target whole is written (messages.py), a little before the end so
        # that the log says what was left out.
        grace = termination.TERMINATION_GRACE_SECONDS  # read now: tests shorten it
        writer = self.message_writer
        restore = writer.restore_output if isinstance(writer, FeedDeltaWriter) else None
        exit_after(grace, 128 + signum, self.logger, restore)
        if isinstance(writer, FeedDeltaWriter):
            writer.finish_by(write_deadline(time.monotonic(), grace), self.logger)
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


def _fetch_policy(settings: Settings) -> FetchPolicy:
    """How every fetch of the run is made, from the settings."""
    from tap_feeddelta.fetch import FetchPolicy

    return FetchPolicy(
        user_agent=settings.user_agent,
        max_feed_bytes=settings.max_feed_bytes,
        max_redirects=settings.max_redirects,
        request_timeout_seconds=settings.request_timeout_seconds,
        allow_private_networks=settings.allow_private_networks,
        max_per_host=settings.max_per_host,
        ca_bundle_path=settings.ca_bundle_path,
    )


def _config_invalid(
    problems: list[str], schema: dict[str, Any] | None = None
) -> ConfigValidationError:
    """The SDK's error for a refused config, each problem logged with the stable code."""
    return ConfigValidationError(
        "Config validation failed",
        errors=[f"config_invalid: {problem}" for problem in problems],
        schema=schema,
    )


# The SDK logs its notices on the tap's logger, from its constructor: the filter is in
# place before any Tap is made (addFilter adds it once).
TapFeedDelta.logger.addFilter(SDK_NOTICES_AT_DEBUG)


if __name__ == "__main__":
    TapFeedDelta.cli()
