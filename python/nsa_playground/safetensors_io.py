"""Reading and writing safetensors files of float32 tensors.

Uses the `safetensors` package when it is installed; otherwise a small reader/writer of our own
(the layout: an 8-byte little-endian header length N, N bytes of UTF-8 JSON, space padded so the
data starts at a multiple of 8, then the raw little-endian tensor data in the order written).
Errors name the file and the tensor or header field at fault.
"""

from __future__ import annotations

import ctypes
import json
import os
import struct
import sys
from typing import Mapping

import torch

MAX_HEADER_BYTES = 100_000_000
METADATA_KEY = "__metadata__"
# The own reader reads these dtypes (the exporter writes only F32).
_DTYPES = {"F32": (torch.float32, 4), "F64": (torch.float64, 8), "I32": (torch.int32, 4), "I64": (torch.int64, 8)}


class SafetensorsFormatError(ValueError):
    """A file that is not a valid safetensors file: `path` is the file, `field` the part at fault."""

    def __init__(self, path: str, field: str, detail: str):
        super().__init__(f"{path}: {field}: {detail}")
        self.path = path
        self.field = field


def _has_package() -> bool:
    if os.environ.get("NSA_PLAYGROUND_OWN_SAFETENSORS") == "1":
        return False
    try:
        import safetensors.torch  # noqa: F401
    except ImportError:
        return False
    return True


def _has_numpy() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


def read_safetensors(path: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The tensors (in file order) and the string metadata of a safetensors file."""
    if _has_package():
        from safetensors import safe_open

        tensors: dict[str, torch.Tensor] = {}
        try:
            with safe_open(path, framework="pt") as f:
                metadata = dict(f.metadata() or {})
                for name in f.keys():
                    tensors[name] = f.get_tensor(name)
        except OSError as e:
            raise SafetensorsFormatError(path, "(file)", f"cannot be read ({e.strerror or e})") from None
        except Exception as e:  # the package's SafetensorError and friends: a malformed file
            raise SafetensorsFormatError(path, "(file)", f"is not a valid safetensors file ({type(e).__name__}: {str(e)[:160]})") from None
        return tensors, metadata
    try:
        return _read_own(path)
    except OSError as e:
        raise SafetensorsFormatError(path, "(file)", f"cannot be read ({e.strerror or e})") from None


def _read_own(path: str) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise SafetensorsFormatError(path, "header length", f"file is {len(raw)} bytes, shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > MAX_HEADER_BYTES:
        raise SafetensorsFormatError(path, "header length", f"header of {n} bytes exceeds the {MAX_HEADER_BYTES}-byte cap")
    if n > len(raw) - 8:
        raise SafetensorsFormatError(path, "header length", f"header of {n} bytes goes beyond the end of the {len(raw)}-byte file")
    try:
        header = json.loads(raw[8 : 8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SafetensorsFormatError(path, "header", f"is not valid UTF-8 JSON ({type(e).__name__}: {str(e)[:120]})") from None
    if not isinstance(header, dict):
        raise SafetensorsFormatError(path, "header", "is not a JSON object")
    metadata = header.pop(METADATA_KEY, None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise SafetensorsFormatError(path, METADATA_KEY, "must be an object of strings")
    data = memoryview(raw)[8 + n :]
    entries = []
    for name, entry in header.items():
        if not isinstance(entry, dict) or entry.get("dtype") not in _DTYPES:
            raise SafetensorsFormatError(path, name, f"dtype {entry.get('dtype') if isinstance(entry, dict) else entry!r} is not supported")
        dtype, size = _DTYPES[entry["dtype"]]
        shape = entry.get("shape")
        offsets = entry.get("data_offsets")
        if not (isinstance(shape, list) and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape)):
            raise SafetensorsFormatError(path, name, f"shape {shape!r} is not a list of non-negative integers")
        pair = isinstance(offsets, list) and len(offsets) == 2
        if not (pair and all(isinstance(o, int) and not isinstance(o, bool) and o >= 0 for o in offsets)):
            raise SafetensorsFormatError(path, name, f"data_offsets {offsets!r} is not a pair of non-negative integers")
        begin, end = offsets
        count = 1
        for d in shape:
            count *= d
        if end - begin != size * count:
            raise SafetensorsFormatError(path, name, f"holds {end - begin} bytes, shape {shape} needs {size * count}")
        if end > len(data):
            raise SafetensorsFormatError(path, name, f"data_offsets [{begin}, {end}] go beyond the {len(data)}-byte data section")
        entries.append((begin, end, name, dtype, shape))
    entries.sort()
    pos = 0
    tensors: dict[str, torch.Tensor] = {}
    for begin, end, name, dtype, shape in entries:
        if begin != pos:
            raise SafetensorsFormatError(path, name, f"data_offsets [{begin}, {end}] do not follow the previous tensor (ends at {pos})")
        pos = end
        chunk = bytes(data[begin:end])
        t = torch.frombuffer(bytearray(chunk), dtype=dtype) if chunk else torch.empty(0, dtype=dtype)
        if sys.byteorder != "little":
            t = t.byteswap()  # pragma: no cover (every supported machine is little-endian)
        tensors[name] = t.reshape(shape)
    if pos != len(data):
        raise SafetensorsFormatError(path, "data", f"{len(data) - pos} trailing bytes after the last tensor")
    return tensors, {str(k): v for k, v in metadata.items()}


def write_safetensors(
    path: str, tensors: Mapping[str, torch.Tensor], metadata: Mapping[str, str] | None = None, commit: bool = True
) -> str:
    """Writes float32 tensors (in the mapping's order) and string metadata, atomically (temp file, rename).
    commit=False: writes the temp file only and returns its path (the caller renames it)."""
    meta = {str(k): str(v) for k, v in (metadata or {}).items()}
    cpu = {name: t.detach().to("cpu", torch.float32).contiguous() for name, t in tensors.items()}
    tmp = f"{path}.tmp-{os.getpid()}"
    if _has_package() and _has_numpy():  # the package's save_file goes through numpy
        from safetensors.torch import save_file

        save_file(cpu, tmp, metadata=meta)
    else:
        _write_own(tmp, cpu, meta)
    if commit:
        os.replace(tmp, path)
    return tmp


def _write_own(path: str, tensors: Mapping[str, torch.Tensor], metadata: Mapping[str, str]) -> None:
    parts = [f"{json.dumps(METADATA_KEY)}:{json.dumps(dict(metadata))}"]
    offset = 0
    for name, t in tensors.items():
        end = offset + 4 * t.numel()
        parts.append(f"{json.dumps(name)}:{json.dumps({'dtype': 'F32', 'shape': list(t.shape), 'data_offsets': [offset, end]})}")
        offset = end
    header = ("{" + ",".join(parts) + "}").encode("utf-8")
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        for t in tensors.values():
            # Raw bytes of a contiguous CPU tensor (no numpy: the package depends on torch only).
            f.write(ctypes.string_at(t.data_ptr(), 4 * t.numel()) if t.numel() else b"")
        f.flush()
        os.fsync(f.fileno())
