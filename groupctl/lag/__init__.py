"""Consumer lag, judged the same way by every caller: the lag of a committed offset
(`offsets`), the window of a partition's samples that the status rules read (`window`), the
rules themselves (`rules`) and the rows `analyze lag` reports (`report`).

Pure Python, no I/O and no clock: `group describe`, `offsets show`, `analyze lag` (whose Spark
job only gathers each partition's window at scale) and the benchmarks all call these modules, so
one rule has one implementation. (`lag record` stores the raw committed offset and log end; the
lag is derived from them here, whoever reads the dataset.)
"""
