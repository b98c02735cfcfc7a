"""Former location of :mod:`sensorbudget.trainer.distributed.dask_data` (documented as
``sensorbudget.trainer.dask_data.ShardTable``); re-exports its public names."""

from .distributed.dask_data import ShardTable, open_client, shard_paths

__all__ = ["ShardTable", "open_client", "shard_paths"]
