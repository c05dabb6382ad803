"""groupctl's data pipeline on Spark: lag evaluation over recorded samples, rebalance history and
an audit of the coordinator's invariants over its event journal.

Shape: every analysis is a chain of pure `DataFrame -> DataFrame` transforms (composed with
`DataFrame.transform`) in `lag`, `rebalances` and `audit`; only `jobs` reads and writes. PySpark
is the optional extra `groupctl[spark]`: importing this package does not import it, and
`session.require_pyspark()` turns its absence into one line saying how to install it.
"""
