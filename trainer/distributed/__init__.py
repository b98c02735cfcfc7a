"""Greedy RLS with the rows on Dask workers (optional: ``pip install 'sensorbudget[dask]'``).

- :mod:`~trainer.distributed.row_store`: the driver side: row partitions resident on workers
  (:class:`~trainer.distributed.row_store.DaskRowStore`) and the seam the estimators fit
  through (:class:`~trainer.distributed.row_store.ClusterRows`);
- :mod:`~trainer.distributed.store_fits`: ridge weights and held-out predictions of the final
  model from the partitions' sums;
- :mod:`~trainer.distributed.partition`: the worker side: one partition's rows and caches;
- :mod:`~trainer.distributed.dask_data`: partitions of arrays, Dask arrays and shard files
  (:class:`~trainer.distributed.dask_data.ShardTable`), and the Dask client.
"""
