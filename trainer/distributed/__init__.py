"""Greedy RLS with the rows on Dask workers (optional: ``pip install 'sensorbudget[dask]'``).

- :mod:`~sensorbudget.trainer.distributed.row_store`: the driver side: row partitions resident on workers
  (:class:`~sensorbudget.trainer.distributed.row_store.DaskRowStore`) and the seam the estimators fit
  through (:class:`~sensorbudget.trainer.distributed.row_store.ClusterRows`);
- :mod:`~sensorbudget.trainer.distributed.store_fits`: ridge weights and held-out predictions of the final
  model from the partitions' sums;
- :mod:`~sensorbudget.trainer.distributed.partition`: the worker side: one partition's rows and caches;
- :mod:`~sensorbudget.trainer.distributed.dask_data`: partitions of arrays, Dask arrays and shard files
  (:class:`~sensorbudget.trainer.distributed.dask_data.ShardTable`), and the Dask client.
"""
