"""Snapshot stores: RAM, host, disk and zarr levels, and their I/O."""
