"""Snapshots as zarr arrays on any store fsspec opens (the optional ``[store]`` extra).

``ZarrStore("s3://bucket/run")`` writes every array leaf of a snapshot as one
zarr array (one chunk) under a private prefix ``<url>/tangent_ckpt_<random>``,
optionally compressed with a lossless zarr codec (``codec="zstd"``,
``"blosc"`` or ``"gzip"``), and removes the prefix on ``close()``.  ``file://``
URLs go through zarr's local store (folders made as needed).  zarr and fsspec
are imported when such a store is first opened, never by the core.
"""

import os
import shutil
import uuid

from tangent_ckpt.errors import CheckpointError, SnapshotStoreError
from tangent_ckpt.runtime.stores.disk_store import LeafStore, check_dir

__all__ = ["ZarrStore", "is_url"]

CODECS = ("zstd", "blosc", "gzip")


def is_url(where):
    """Is `where` a URL (``scheme://...``) rather than a local folder?"""
    return isinstance(where, str) and "://" in where


def _zarr():
    try:
        import zarr
        import fsspec
    except ImportError as exc:
        raise CheckpointError(
            f"snapshot_store= with a URL needs zarr and fsspec ({exc}); install them with "
            "`pip install tangent_ckpt[store]` or give a local folder") from None
    return zarr, fsspec


def _codec(zarr, name, level):
    if name is None:
        return None
    if name not in CODECS:
        raise CheckpointError(f"unknown snapshot codec {name!r}; use one of {', '.join(CODECS)}")
    codecs = zarr.codecs
    if name == "zstd":
        return codecs.ZstdCodec(level=3 if level is None else level)
    if name == "blosc":
        return codecs.BloscCodec(cname="zstd", clevel=5 if level is None else level,
                                 shuffle="shuffle")
    return codecs.GzipCodec(level=5 if level is None else level)


class ZarrStore(LeafStore):
    """Snapshots as zarr arrays under a private prefix of `url` (see the module docstring)."""

    kind = "zarr"

    def __init__(self, url, codec=None, level=None):
        super().__init__()
        self.zarr, self.fsspec = _zarr()
        self.url = url.rstrip("/")
        self.codec = _codec(self.zarr, codec, level)
        self._local = self.url.startswith("file://")
        if self._local:
            check_dir(self.url[len("file://"):], "snapshot_store")
        else:
            try:
                self.fs, root = self.fsspec.core.url_to_fs(self.url)
            except Exception as exc:  # unknown protocol, missing driver, bad credentials
                raise SnapshotStoreError(f"cannot open snapshot_store {self.url!r}: {exc!r}") from None
        self._group = None

    def _open(self):
        name = f"tangent_ckpt_{uuid.uuid4().hex[:12]}"
        try:
            if self._local:
                path = os.path.join(self.url[len("file://"):], name)
                os.mkdir(path, 0o700)
                store = self.zarr.storage.LocalStore(path)
                self._group = self.zarr.open_group(store=store, mode="w")
                return path
            path = f"{self.url}/{name}"
            self._group = self.zarr.open_group(path, mode="w")
            return path
        except Exception as exc:
            raise SnapshotStoreError(f"cannot create snapshots in {self.url!r}: {exc!r}") from None

    def _write(self, name, x):
        array = self._group.create_array(name, shape=x.shape, dtype=x.dtype,
                                         chunks=tuple(max(1, d) for d in x.shape),
                                         compressors=self.codec,
                                         overwrite=True)
        array[...] = x
        return int(array.nbytes_stored())

    def _read(self, name):
        return self._group[name][...]

    def _delete(self, name):
        del self._group[name]

    def _remove(self):
        self._group = None
        if self._local:
            shutil.rmtree(self.path, ignore_errors=True)
            return
        try:
            _, root = self.fsspec.core.url_to_fs(self.path)
            if self.fs.exists(root):
                self.fs.rm(root, recursive=True)
        except Exception:
            pass  # the store went away: nothing of ours is left to remove
