"""The one loader: a :class:`Dataset` from a feature table, a feature NPZ, recordings or shards.

Every command and the Python API (:mod:`sensorbudget.trainer.api`) read their data through
:meth:`Dataset.load`, which wraps the existing readers without repeating them:

- recordings with ``sensors=sensors.toml``:
  :func:`~sensorbudget.trainer.sensing.feature_set.load_feature_set` (the stream options are a
  :class:`~sensorbudget.trainer.sensing.streams.StreamFormat`);
- a feature NPZ written by ``sensorbudget features``:
  :meth:`~sensorbudget.trainer.sensing.feature_set.FeatureSet.load`;
- a CSV, ARFF or NPZ table: :func:`~sensorbudget.trainer.data.load_table`;
- Dask shards (``shards=True``): :mod:`sensorbudget.trainer.distributed.dask_data`, read on the
  workers (``X`` is then a :class:`~sensorbudget.trainer.distributed.dask_data.ShardTable`).

"""

from __future__ import annotations

import warnings
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from .errors import DataError, TrainerWarning
from .missing import MissingReport
from .sensing.streams import StreamFormat
from .tasks import Task
from .text import brief

#: ``groups=RECORDING``: each window's recording (recordings or a feature NPZ)
RECORDING = "recording"
__all__ = ["Dataset", "Task", "RECORDING", "as_dataset", "is_feature_npz"]
_TABLE_KEYS = ("targets", "labels", "xml", "targets_last", "sep", "decimal", "ignore",
               "na_value", "drop_missing", "keep_missing_targets")


@dataclass
class Dataset:
    """Rows of candidate features and their targets, from whichever file they came.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64 (a ``ShardTable`` for shards)
    Y : ndarray of shape (n_samples, n_targets), float64, NaN = missing (None for shards)
    feature_names, target_names : list of str
    task : str, the task the data suggest (``regression``, ``multilabel``, ``multiclass``)
    source : dict, what the bundle records as its ``data`` (file name and sha256)
    groups : ndarray of shape (n_samples,) or None, a table's group column
    feature_set : FeatureSet or None, the windows' structure (recordings, feature NPZ)
    class_column : str or None, a table's column of class values (text or numbers)
    missing : MissingReport of the rows dropped (``drop_missing``)
    """

    X: object
    Y: np.ndarray | None
    feature_names: list
    target_names: list
    task: str = "regression"
    source: dict = field(default_factory=dict)
    groups: np.ndarray | None = None
    feature_set: object = None
    class_column: str | None = None
    missing: MissingReport = field(default_factory=MissingReport)
    dropped_rows: int = 0
    class_values: np.ndarray | None = None    # a table's class of every row (text classes)

    def __repr__(self) -> str:
        return brief("Dataset", rows=int(self.X.shape[0]), features=len(self.feature_names),
                     targets=list(self.target_names), task=str(self.task),
                     groups=None if self.groups is None else len(np.unique(self.groups)))

    # -- loading ---------------------------------------------------------------------------

    @classmethod
    def load(cls, path, *, sensors=None, shards: bool = False, groups=None, window=None,
             hop=None, compute_target=None, on_missing=None, stream_format=None,
             progress=None, max_drop_fraction=0.5, **table_options) -> "Dataset":
        """Read ``path``: recordings (with ``sensors``), a feature NPZ, a table, or shards.

        ``table_options`` are :func:`~sensorbudget.trainer.data.load_table`'s (``targets``,
        ``labels``, ``xml``, ``targets_last``, ``sep``, ``decimal``, ``ignore``, ``na_value``,
        ``drop_missing``, ``keep_missing_targets``); ``groups`` a table's group column (or
        ``"recording"``); ``window``, ``hop``, ``compute_target``, ``on_missing`` and
        ``stream_format`` (or the recording options ``time_column=``, ``time_unit=``, ...)
        apply to recordings.
        """
        if not (shards and isinstance(path, (list, tuple))):
            check_path(path, "data")
        if sensors is not None:
            check_path(sensors, "sensors (sensors.toml)")
        bad = [k for k in table_options if k not in _TABLE_KEYS
               and k not in StreamFormat.__dataclass_fields__]
        if bad:
            raise DataError(f"unknown data option {bad[0]!r}")
        stream_format = _stream_format(stream_format, table_options)
        if shards:
            from .dataset_shards import load_shards

            return load_shards(cls, path, groups=groups, sensors=sensors, window=window,
                               hop=hop, compute_target=compute_target,
                               stream_format=stream_format, **table_options)
        if sensors is not None:
            return cls.from_recordings(path, sensors, window=window, hop=hop,
                                       compute_target=compute_target, on_missing=on_missing,
                                       stream_format=stream_format, progress=progress,
                                       **table_options)
        if is_feature_npz(path):
            return cls.from_feature_set_file(path, **table_options)
        if window is not None or hop is not None or stream_format != StreamFormat():
            raise DataError("--window/--hop and the stream options (--time-column, "
                            "--split-gaps, ...) apply to recordings given with --sensors")
        if Path(path).is_dir():
            raise DataError(f"{str(path)!r} is a folder: recordings need --sensors sensors.toml "
                            f"(a feature table is one CSV, ARFF or NPZ file)")
        return cls.from_table(path, groups=groups, max_drop_fraction=max_drop_fraction,
                              **table_options)

    @classmethod
    def from_recordings(cls, path, sensors, *, window=None, hop=None, compute_target=None,
                        on_missing=None, stream_format=None, progress=None,
                        **table_options) -> "Dataset":
        """Window the recordings ``path`` into the candidate features ``sensors`` describes."""
        from .data import file_info
        from .provenance import recordings_entry
        from .sensing.feature_set import load_feature_set

        check_path(path, "recordings")
        check_path(sensors, "sensors (sensors.toml)")
        stream_format = _stream_format(stream_format, table_options)
        _no_targets(table_options)
        fs = load_feature_set(path, sensors, window=window, hop=hop, on_missing=on_missing,
                              compute_target=compute_target, stream_format=stream_format,
                              progress=progress)
        return cls.from_feature_set(fs, {**recordings_entry(path),
                                         "sensors": file_info(Path(sensors))})

    @classmethod
    def from_feature_set_file(cls, path, **table_options) -> "Dataset":
        """A feature NPZ written by ``sensorbudget features`` (:meth:`save`)."""
        from .data import file_info
        from .sensing.feature_set import FeatureSet

        _no_targets(table_options)
        return cls.from_feature_set(FeatureSet.load(path), file_info(Path(path)))

    @classmethod
    def from_feature_set(cls, fs, source: dict | None = None) -> "Dataset":
        """A :class:`~sensorbudget.trainer.sensing.feature_set.FeatureSet` as a Dataset."""
        return cls(X=np.asarray(fs.X, dtype=np.float64), Y=np.asarray(fs.Y, dtype=np.float64),
                   feature_names=list(fs.feature_names), target_names=list(fs.target_names),
                   task=fs.task, source=dict(source or {}), feature_set=fs)

    @classmethod
    def from_table(cls, path, *, groups=None, max_drop_fraction=0.5,
                   **table_options) -> "Dataset":
        """A CSV, ARFF or NPZ feature table (:func:`~sensorbudget.trainer.data.load_table`)."""
        from .data import load_table

        if groups == RECORDING:
            raise DataError("--groups recording needs recordings (--sensors sensors.toml) or a "
                            "feature table written by 'sensorbudget features'; for a table, "
                            "give the name of its group column")
        options = {k: v for k, v in table_options.items() if k in _TABLE_KEYS}
        if options.get("targets") is not None:
            options["targets"] = list(options["targets"]) or None
        options["ignore"] = tuple(options.get("ignore") or ())
        options["drop_missing"] = bool(options.get("drop_missing")) and max_drop_fraction
        table = load_table(path, groups=groups, **options)
        if "time" in table.feature_names:
            warnings.warn(f"{Path(path).name}: the column 'time' is used as a feature; for a "
                          f"recording give --sensors sensors.toml (or --ignore time)",
                          TrainerWarning)
        column, values = table.class_target or (None, None)
        return cls(X=table.X, Y=table.Y, feature_names=list(table.feature_names),
                   target_names=list(table.target_names), task=table.task,
                   source=table.source, groups=table.groups, class_column=column,
                   missing=table.missing, dropped_rows=table.dropped_rows,
                   class_values=values)

    # -- what the data are -----------------------------------------------------------------

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0]) if hasattr(self.X, "shape") else -1

    @property
    def is_windows(self) -> bool:
        """True for windows of recordings (a feature set)."""
        return self.feature_set is not None

    def group_ids(self, groups):
        """Group ids (n,) for ``groups`` (``None``, ``"recording"`` or a table's column, which
        :meth:`load` must have been given)."""
        if groups is None:
            return None
        fs = self.feature_set
        if groups == RECORDING:
            if fs is None:
                raise DataError("--groups recording needs recordings (--sensors sensors.toml) "
                                "or a feature table written by 'sensorbudget features'; for a "
                                "table, give the name of its group column")
            return fs.groups
        if fs is not None:
            raise DataError(f"--groups {groups!r}: windows of recordings are grouped with "
                            f"--groups recording")
        if self.groups is None:
            raise DataError(f"groups={groups!r}: this table was loaded without its group "
                            f"column; load it with Dataset.load(path, groups={groups!r})")
        return self.groups

    def structure(self) -> tuple:
        """(extractors, sensors, extra model.json keys) of the windows, or (None, None, {})."""
        if self.feature_set is None:
            return None, None, {}
        return self.feature_set.bundle_structure()

    def subset(self, targets) -> "Dataset":
        """The same rows with only the named targets."""
        idx = [self.target_names.index(t) for t in targets]
        return replace(self, Y=self.Y[:, idx], target_names=list(targets))

    # -- writing ---------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """The feature NPZ (``sensorbudget features``' file, byte-reproducible)."""
        if self.feature_set is None:
            raise DataError("only windows of recordings are saved as a feature NPZ (this "
                            "dataset is a table)")
        return self.feature_set.save_npz()

    def save(self, path) -> Path:
        """Write the feature NPZ to ``path`` (all or nothing); returns the path."""
        from .bundle.files import write_atomically

        write_atomically(Path(path), self.to_bytes())
        return Path(path)


def as_dataset(data, **options) -> Dataset:
    """``data`` when it is a Dataset (then no loading option may be given), else
    :meth:`Dataset.load` of the path with ``options``."""
    if isinstance(data, Dataset):
        given = [k for k, v in options.items() if v not in (None, False, (), [])
                 and k not in ("groups", "shards", "max_drop_fraction")]
        if given:
            raise DataError(f"option {given[0]!r} applies to a file, not to a loaded "
                               f"Dataset")
        return data
    check_path(data, "data", "a Dataset")
    return Dataset.load(Path(data) if isinstance(data, str) and not any(
        c in data for c in "*?[") else data, **options)


def check_path(value, what: str, also: str = "") -> None:
    """DataError naming the type unless ``value`` is a path (str or os.PathLike); ``also``
    names the other kind the caller takes (``"a Dataset"``)."""
    if not isinstance(value, (str, os.PathLike)):
        other = f" or {also}" if also else ""
        raise DataError(f"{what} must be a path (str or os.PathLike){other}, not a "
                        f"{type(value).__name__}")


def is_feature_npz(path) -> bool:
    """True when ``path`` is a feature NPZ written by ``sensorbudget features``."""
    from .sensing.feature_set import is_feature_file

    return Path(path).suffix.lower() == ".npz" and is_feature_file(path)


def _stream_format(given, options: dict) -> StreamFormat:
    """``given``, or a StreamFormat from the recording options among ``options`` (popped)."""
    fields = {k: options.pop(k) for k in list(options) if k in StreamFormat.__dataclass_fields__}
    if isinstance(given, StreamFormat) and not fields:
        return given
    if given is not None:
        raise DataError("give the recording options either as stream_format or one by one")
    if fields.get("columns") is not None:
        fields["columns"] = tuple(fields["columns"])
    return given if given is not None else StreamFormat(**fields)


def _no_targets(options: dict) -> None:
    if options.get("targets"):
        raise DataError("--target does not apply to recordings; targets come from sensors.toml")
