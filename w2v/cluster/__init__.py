"""Training, counting and phrases on a Dask cluster (``--cluster``)."""
