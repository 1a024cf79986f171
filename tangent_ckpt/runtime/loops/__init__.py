"""Checkpointed loops at run time: the schedule driver, its counters, segments, determinism checks, profiler and progress."""
