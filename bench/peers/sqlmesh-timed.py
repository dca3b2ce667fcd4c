"""SQLMesh's command line as installed, with the time of every statement its engine adapter runs.

Each call of EngineAdapter._execute (the one place SQLMesh hands SQL to the database's cursor) is
timed; the list is written as JSON to $SCD_BENCH_SQL_TIMES when the process exits. Nothing else
changes: the command line, its arguments and its work are SQLMesh's own.
"""
import atexit
import json
import os
import re
import sys
import time

from sqlmesh.core.engine_adapter import base

_execute = base.EngineAdapter._execute
_times = []


def _timed_execute(self, sql, *args, **kwargs):
    start = time.perf_counter()
    try:
        return _execute(self, sql, *args, **kwargs)
    finally:
        text = re.sub(r"\s+", " ", re.sub(r"/\*.*?\*/", "", str(sql), flags=re.S)).strip()
        _times.append({"seconds": time.perf_counter() - start, "sql": text[:120]})


base.EngineAdapter._execute = _timed_execute


@atexit.register
def _write_times():
    with open(os.environ["SCD_BENCH_SQL_TIMES"], "w") as out:
        json.dump(_times, out)


from sqlmesh.cli.main import cli  # noqa: E402

sys.exit(cli())
